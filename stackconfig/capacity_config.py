"""The `capacity` section of the stack configuration: what the NodePool limits are planned for."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from stackconfig.base import ConfigSection


class CapacityConfig(ConfigSection):
    """How the NodePool limits are planned. `workloads` and `daemonSets` take the entries of a
    workload description file (docs/sizing-input.md); they add to the test app and to the
    EKS DaemonSets (aws-node, kube-proxy, eks-pod-identity-agent)."""

    workloads: tuple[dict[str, Any], ...] = ()
    daemon_sets: tuple[dict[str, Any], ...] = ()
    headroom_percent: float = Field(default=10.0, ge=0, le=1000)
    max_pods_per_node: Optional[int] = Field(default=None, ge=1)
    price_overrides: dict[str, float] = Field(default_factory=dict)
    solver_time_limit_seconds: float = Field(default=2.0, gt=0, le=60)
