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

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sizing.errors import SizingInputError

HPA_SYNC_SECONDS = 15
POLICY_TYPES = ("Pods", "Percent")
SELECT_POLICIES = ("Max", "Min", "Disabled")


@dataclass(frozen=True)
class ScaleDownPolicy:
    """One `behavior.scaleDown.policies` entry: remove `value` pods or percent per `period_seconds`."""

    type: str
    value: int
    period_seconds: int


DEFAULT_SCALE_DOWN_POLICIES = (ScaleDownPolicy("Percent", 100, 15),)


@dataclass(frozen=True)
class HpaScaleDown:
    """A workload's HPA `behavior.scaleDown`; the defaults are Kubernetes' (autoscaling/v2):
    policies 100 % per 15 s, selectPolicy Max, stabilizationWindowSeconds 300."""

    policies: tuple[ScaleDownPolicy, ...] = DEFAULT_SCALE_DOWN_POLICIES
    select_policy: str = "Max"
    stabilization_window_seconds: int = 300

    def __post_init__(self) -> None:
        where = "HPA behavior.scaleDown"
        if self.select_policy not in SELECT_POLICIES:
            raise SizingInputError(
                f"{where}.selectPolicy must be one of {list(SELECT_POLICIES)}, got {self.select_policy!r}"
            )
        if self.select_policy != "Disabled" and not self.policies:
            raise SizingInputError(f"{where}.policies is empty; list at least one policy or use selectPolicy Disabled")
        for index, policy in enumerate(self.policies):
            if policy.type not in POLICY_TYPES:
                raise SizingInputError(
                    f"{where}.policies[{index}].type must be one of {list(POLICY_TYPES)}, got {policy.type!r}"
                )
            if isinstance(policy.value, bool) or not isinstance(policy.value, int) or policy.value < 1:
                raise SizingInputError(f"{where}.policies[{index}].value must be an integer >= 1, got {policy.value!r}")
            if not isinstance(policy.period_seconds, int) or not 1 <= policy.period_seconds <= 1800:
                raise SizingInputError(
                    f"{where}.policies[{index}].periodSeconds must be from 1 to 1800, got {policy.period_seconds!r}"
                )
        window = self.stabilization_window_seconds
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= 3600:
            raise SizingInputError(f"{where}.stabilizationWindowSeconds must be from 0 to 3600, got {window!r}")


def replicas_at(history: Sequence[tuple[int, int]], moment: int) -> int:
    """The replicas at `moment` (seconds) of a history of (seconds, replicas) steps in time order."""
    value = history[0][1]
    for time, replicas in history:
        if time > moment:
            break
        value = replicas
    return value


def scale_down_steps(current: int, target: int, behaviour: HpaScaleDown) -> list[tuple[int, int]]:
    """(seconds after the load drops, replicas) for each HPA step, starting with (0, current)."""
    if current < 0 or target < 0:
        raise SizingInputError(f"HPA replicas must be >= 0, got {current} and target {target}")
    history = [(0, current)]
    if behaviour.select_policy == "Disabled" or target >= current:
        return history
    window = behaviour.stabilization_window_seconds
    moment = max(HPA_SYNC_SECONDS, math.ceil(window / HPA_SYNC_SECONDS) * HPA_SYNC_SECONDS)
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
