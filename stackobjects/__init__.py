"""The Kubernetes objects and Helm values built from the stack configuration."""
