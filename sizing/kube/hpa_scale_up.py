"""How an HPA scales a workload out when its load arrives (autoscaling/v2 `behavior.scaleUp`).

The load asks for maxReplicas at once; every HPA sync allows, per policy, the replicas at the
start of its period plus `value` pods or `value` percent (rounded up), and takes the largest
(selectPolicy Max) or smallest (Min) of those limits; Disabled never scales up. A stabilization
window delays the first step until the window has seen only the high recommendation.

Units: time in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.errors import SizingInputError
from sizing.kube.hpa_behavior import HPA_SYNC_SECONDS, ScalingPolicy, check_behaviour, first_step_seconds, replicas_at

DEFAULT_SCALE_UP_POLICIES = (ScalingPolicy("Percent", 100, 15), ScalingPolicy("Pods", 4, 15))


@dataclass(frozen=True)
class HpaScaleUp:
    """How a workload's HPA grows: from `min_replicas` under its `behavior.scaleUp`.

    The defaults are Kubernetes' (autoscaling/v2): minReplicas 1, policies 100 % and
    4 pods per 15 s, selectPolicy Max, stabilizationWindowSeconds 0.
    """

    min_replicas: int = 1
    policies: tuple[ScalingPolicy, ...] = DEFAULT_SCALE_UP_POLICIES
    select_policy: str = "Max"
    stabilization_window_seconds: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.min_replicas, bool) or not isinstance(self.min_replicas, int) or self.min_replicas < 1:
            raise SizingInputError(f"HPA minReplicas must be an integer >= 1, got {self.min_replicas!r}")
        check_behaviour("HPA behavior.scaleUp", self.policies, self.select_policy, self.stabilization_window_seconds)


def replica_steps(min_replicas: int, max_replicas: int, scale_up: HpaScaleUp) -> list[tuple[int, int]]:
    """(seconds after the load arrives, replicas) for each HPA step, starting with (0, min)."""
    start = min(min_replicas, max_replicas)
    history = [(0, start)]
    if scale_up.select_policy == "Disabled" or start >= max_replicas:
        return history
    moment, current = first_step_seconds(scale_up.stabilization_window_seconds), start
    while current < max_replicas:
        limits = []
        for policy in scale_up.policies:
            base = replicas_at(history, moment - policy.period_seconds)
            if policy.type == "Pods":
                limits.append(base + policy.value)
            else:
                limits.append(math.ceil(base * (100 + policy.value) / 100))
        allowed = max(limits) if scale_up.select_policy == "Max" else min(limits)
        target = min(max_replicas, max(allowed, current))
        if target > current:
            history.append((moment, target))
            current = target
        moment += HPA_SYNC_SECONDS
    return history
