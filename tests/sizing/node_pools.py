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


def node_class_yaml(alias: str = "al2023@latest", extra: str = "") -> str:
    """The karpenter.k8s.aws/v1 EC2NodeClass `default` with an AMI alias; `extra` is appended to its
    spec as written (lines indented by two spaces). Starts with `---`."""
    lines = [
        "---",
        "apiVersion: karpenter.k8s.aws/v1",
        "kind: EC2NodeClass",
        "metadata: {name: default}",
        "spec:",
        f"  amiSelectorTerms: [{{alias: {alias}}}]",
        "  role: KarpenterNodeRole-demo",
        "  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]",
        "  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]",
    ]
    return "\n".join(lines) + "\n" + extra
