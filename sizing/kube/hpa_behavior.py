"""What an HPA's scale-up and scale-down have in common (autoscaling/v2 `behavior`).

Both directions take a list of policies, a `selectPolicy` and a stabilization window, and both
count a policy's allowance from the replicas at the start of its period. kubernetes/kubernetes
`pkg/apis/autoscaling/validation` bounds the values checked here; the controller syncs every 15 s.

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
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600


@dataclass(frozen=True)
class ScalingPolicy:
    """One `behavior.scaleUp.policies` or `behavior.scaleDown.policies` entry: add (scale-up) or
    remove (scale-down) `value` pods, or `value` percent, per `period_seconds`."""

    type: str
    value: int
    period_seconds: int


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_behaviour(
    where: str, policies: Sequence[ScalingPolicy], select_policy: str, stabilization_window_seconds: int
) -> None:
    """Refuse what the API server refuses of one direction's behaviour; `where` names it in messages
    (`HPA behavior.scaleUp`)."""
    if select_policy not in SELECT_POLICIES:
        raise SizingInputError(f"{where}.selectPolicy must be one of {list(SELECT_POLICIES)}, got {select_policy!r}")
    if select_policy != "Disabled" and not policies:
        raise SizingInputError(f"{where}.policies is empty; list at least one policy or use selectPolicy Disabled")
    for index, policy in enumerate(policies):
        if policy.type not in POLICY_TYPES:
            raise SizingInputError(
                f"{where}.policies[{index}].type must be one of {list(POLICY_TYPES)}, got {policy.type!r}"
            )
        if not _is_int(policy.value) or policy.value < 1:
            raise SizingInputError(f"{where}.policies[{index}].value must be an integer >= 1, got {policy.value!r}")
        if not _is_int(policy.period_seconds) or not 1 <= policy.period_seconds <= MAX_PERIOD_SECONDS:
            raise SizingInputError(
                f"{where}.policies[{index}].periodSeconds must be from 1 to {MAX_PERIOD_SECONDS}, "
                f"got {policy.period_seconds!r}"
            )
    window = stabilization_window_seconds
    if not _is_int(window) or not 0 <= window <= MAX_STABILIZATION_WINDOW_SECONDS:
        raise SizingInputError(
            f"{where}.stabilizationWindowSeconds must be from 0 to {MAX_STABILIZATION_WINDOW_SECONDS}, got {window!r}"
        )


def first_step_seconds(stabilization_window_seconds: int) -> int:
    """The first sync (seconds after the load changes) at which the window holds only the new
    recommendation, so the HPA may take its first step."""
    syncs = math.ceil(stabilization_window_seconds / HPA_SYNC_SECONDS)
    return max(HPA_SYNC_SECONDS, syncs * HPA_SYNC_SECONDS)


def replicas_at(history: Sequence[tuple[int, int]], moment: int) -> int:
    """The replicas at `moment` (seconds) of a history of (seconds, replicas) steps in time order."""
    value = history[0][1]
    for time, replicas in history:
        if time > moment:
            break
        value = replicas
    return value
