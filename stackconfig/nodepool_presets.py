"""The NodePool requirement presets (`nodePool.preset`), shared by the config and the components."""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from stackconfig.nodepool import RequirementConfig, RequirementOperator


def _requirement(key: str, operator: RequirementOperator, *values: str) -> RequirementConfig:
    return RequirementConfig(key=key, operator=operator, values=values)


_LINUX_AMD64 = (
    _requirement("kubernetes.io/arch", "In", "amd64"),
    _requirement("kubernetes.io/os", "In", "linux"),
)

# Requirements without the zone: zones come from `nodePool.zones` or the VPC.
NODEPOOL_PRESETS: Mapping[str, tuple[RequirementConfig, ...]] = MappingProxyType(
    {
        # The reference Provisioner: one fixed instance type, on-demand.
        "reference": (
            _requirement("node.kubernetes.io/instance-type", "In", "m5.large"),
            *_LINUX_AMD64,
            _requirement("karpenter.sh/capacity-type", "In", "on-demand"),
        ),
        # Spot from the general-purpose, compute and memory families, xlarge and up.
        # On-demand stays allowed as a fallback: Karpenter prefers spot whenever
        # spot is available, and a load test still gets nodes when spot has no
        # capacity.
        "spot": (
            _requirement("karpenter.sh/capacity-type", "In", "spot", "on-demand"),
            _requirement("karpenter.k8s.aws/instance-category", "In", "c", "m", "r"),
            _requirement("karpenter.k8s.aws/instance-size", "NotIn", "nano", "micro", "small", "medium", "large"),
            _requirement("karpenter.k8s.aws/instance-generation", "Gt", "2"),
            *_LINUX_AMD64,
        ),
    }
)
