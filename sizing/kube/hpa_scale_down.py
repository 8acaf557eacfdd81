"""How an HPA scales a workload in once its load drops (autoscaling/v2 `behavior.scaleDown`).

This follows kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go`
(`stabilizeRecommendationWithBehaviors`, `calculateScaleDownLimitWithBehaviors`): the HPA syncs
every 15 s; a scale-down takes the highest recommendation of the last
`stabilizationWindowSeconds`, so with the load gone at 0 s the first step comes at the first sync
once the window holds only the low recommendation; each policy then allows the replicas at the
start of its period (now - periodSeconds, deletions since then added back) less `value` pods, or
less `value` percent (rounded down); `selectPolicy` Max takes the policy that removes the most,
Min the one that removes the least, Disabled none. Replicas never go below the target (minReplicas,
or the level the load still asks for).

Units: time in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.errors import SizingInputError
from sizing.kube.hpa_behavior import HPA_SYNC_SECONDS, ScalingPolicy, check_behaviour, first_step_seconds, replicas_at

DEFAULT_SCALE_DOWN_POLICIES = (ScalingPolicy("Percent", 100, 15),)


@dataclass(frozen=True)
class HpaScaleDown:
    """A workload's HPA `behavior.scaleDown`; the defaults are Kubernetes' (autoscaling/v2):
    policies 100 % per 15 s, selectPolicy Max, stabilizationWindowSeconds 300."""

    policies: tuple[ScalingPolicy, ...] = DEFAULT_SCALE_DOWN_POLICIES
    select_policy: str = "Max"
    stabilization_window_seconds: int = 300

    def __post_init__(self) -> None:
        check_behaviour("HPA behavior.scaleDown", self.policies, self.select_policy, self.stabilization_window_seconds)


def scale_down_steps(current: int, target: int, behaviour: HpaScaleDown) -> list[tuple[int, int]]:
    """(seconds after the load drops, replicas) for each HPA step, starting with (0, current)."""
    if current < 0 or target < 0:
        raise SizingInputError(f"HPA replicas must be >= 0, got {current} and target {target}")
    history = [(0, current)]
    if behaviour.select_policy == "Disabled" or target >= current:
        return history
    moment = first_step_seconds(behaviour.stabilization_window_seconds)
    replicas = current
    while replicas > target:
        proposals = []
        for policy in behaviour.policies:
            start = replicas_at(history, moment - policy.period_seconds)
            if policy.type == "Pods":
                proposals.append(start - policy.value)
            else:
                proposals.append(int(start * (1 - policy.value / 100)))
        # Max: the policy that allows the biggest change, so the fewest replicas.
        allowed = min(proposals) if behaviour.select_policy == "Max" else max(proposals)
        following = max(target, min(replicas, allowed))
        if following < replicas:
            history.append((moment, following))
            replicas = following
        moment += HPA_SYNC_SECONDS
    return history
