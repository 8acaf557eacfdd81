"""Kubernetes NodePool objects as YAML text, for tests that plan from objects."""

import json


def node_pool_yaml(*requirements: dict, name: str = "default") -> str:
    """A karpenter.sh/v1 NodePool with these requirements and the EC2NodeClass `default`, ending in `---`."""
    lines = [
        "apiVersion: karpenter.sh/v1",
        "kind: NodePool",
        f"metadata: {{name: {name}}}",
        "spec:",
        "  template:",
        "    spec:",
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}",
        "      requirements:",
    ]
    lines += [f"        - {json.dumps(requirement)}" for requirement in requirements]
    return "\n".join(lines) + "\n---\n"
