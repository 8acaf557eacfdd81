"""The EC2NodeClass AMI alias: which aliases the stack accepts, shared by the config and the components."""

from __future__ import annotations

import re

# amazon-eks-ami v20260714 builds AL2023 AMIs for Kubernetes 1.30 to 1.36.
DEFAULT_AMI_ALIAS = "al2023@v20260714"
# The root volume mapping (/dev/xvda) is the AL2023 layout; Bottlerocket keeps its data
# on a second volume, and AL2 AMIs are no longer published.
AMI_ALIAS_FAMILY = "al2023"
MAX_ALIAS_LENGTH = 30
_ALIAS = re.compile(r"^(?P<family>[a-zA-Z0-9]+)@(?P<version>.+)$")


def check_ami_alias(alias: str) -> None:
    """Raise ValueError unless `alias` is a pinned AL2023 alias such as al2023@v20260714."""
    match = _ALIAS.match(alias)
    if not match or len(alias) > MAX_ALIAS_LENGTH or match["family"] != AMI_ALIAS_FAMILY:
        raise ValueError(
            f"ami_alias {alias!r} must be {AMI_ALIAS_FAMILY}@<release> with at most {MAX_ALIAS_LENGTH} "
            f"characters, such as {DEFAULT_AMI_ALIAS}"
        )
    if match["version"] == "latest":
        raise ValueError(
            f"ami_alias {alias!r}: pin an AMI release such as {DEFAULT_AMI_ALIAS}; with 'latest' every AMI "
            "release drifts, and so replaces, every node"
        )
