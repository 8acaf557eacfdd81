"""Instance types an EC2NodeClass's AMI family cannot launch.

Source: aws/karpenter-provider-aws v1.14.1
`pkg/providers/instancetype/compatibility/compatibility.go` (`amiFamilyCheck`): with the AL2023
family, types whose name starts with `a1.` are not offered ("a1 instance types are not supported
with al2023s", citing the AL2023 system requirements). That is the only AMI-family filter in
Karpenter 1.14; metal types are not filtered by family there, so neither are they here. Both doors
of the planner (a workload description and Kubernetes objects) filter the NodePool's types here.
"""

from __future__ import annotations

from collections.abc import Iterable

from sizing.karpenter.catalog import InstanceType

# AMI family -> instance-name prefixes it cannot launch.
UNSUPPORTED_PREFIXES = {
    "AL2023": ("a1.",),
}
AMI_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025")
# The family this project's EC2NodeClass runs (alias al2023@...), and the one every door of the planner
# assumes when its input names none: a description without `nodePool.amiFamily`, or NodePools whose
# EC2NodeClass is not among the objects given.
DEFAULT_AMI_FAMILY = "AL2023"


def launchable(instances: Iterable[InstanceType], ami_family: str | None) -> tuple[InstanceType, ...]:
    """The instances an EC2NodeClass of `ami_family` may launch (all of them when the family is unknown)."""
    prefixes = UNSUPPORTED_PREFIXES.get(ami_family or "", ())
    return tuple(i for i in instances if not i.name.startswith(prefixes))
