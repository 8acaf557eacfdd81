"""The Kubernetes objects a stack deploys, built from its configuration as plain dicts: the components
register them and the capacity plan reads them."""
