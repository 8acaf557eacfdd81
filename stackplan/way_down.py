"""The way down of a stack: its NodePool's `disruption` and its HPA's `behavior.scaleDown`, as the
planner's `WayDownSettings` (`python -m sizing plan --stack NAME --way-down`).

The stack's PodDisruptionBudget allows one eviction at a time (`maxUnavailable: 1`), so it blocks
no consolidation, and no pod of the stack carries `karpenter.sh/do-not-disrupt`: no workload blocks
eviction. Karpenter's SpotToSpotConsolidation gate is off in the stack's Helm values (the chart's
default), and so it is here.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.simulation.disruption import Budget, DisruptionPolicy
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_down import HpaScaleDown
from sizing.planning.planner import PlanInput
from sizing.planning.way_down import WayDownSettings
from stackconfig.errors import StackConfigError
from stackconfig.load import parse_stack_config, read_stack_file
from stackplan.capacity import plan_input_for_stack

_PART = re.compile(r"([0-9]+)(h|m|s)")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def duration_seconds(text: str) -> int:
    """Seconds of a Karpenter duration such as 30s, 1m or 1h30m (the stack has checked its shape)."""
    return sum(int(count) * _SECONDS[unit] for count, unit in _PART.findall(text))


def way_down_settings(config: Any, plan_input: PlanInput, level_percent: float | None = None) -> WayDownSettings:
    """The way down of the stack's NodePool and HPA, for `plan_input` (the stack's plan input)."""
    pool = config.node_pool
    after = None if pool.consolidate_after == "Never" else duration_seconds(pool.consolidate_after)
    budgets = tuple(
        Budget(
            budget.nodes,
            None if budget.reasons is None else tuple(budget.reasons),
            budget.schedule,
            None if budget.duration is None else duration_seconds(budget.duration),
        )
        for budget in pool.budgets
    )
    try:
        policy = DisruptionPolicy(pool.consolidation_policy, after, budgets)
    except SizingInputError as error:
        raise StackConfigError([f"`nodePool`: {error}"]) from None
    scale_down = config.app.hpa.scale_down
    behaviour = HpaScaleDown(
        (ScalingPolicy("Percent", scale_down.percent, scale_down.period_seconds),),
        "Max",
        scale_down.stabilization_window_seconds,
    )
    name = plan_input.node_pool.name or "default"
    autoscaled = [workload.name for workload in plan_input.workloads if workload.autoscaled]
    return WayDownSettings(
        policies={name: policy},
        scale_down=dict.fromkeys(autoscaled, behaviour),
        level_percent=level_percent,
    )


def plan_input_with_way_down(stack: str, project_dir: Path, level_percent: float | None = None) -> PlanInput:
    """`plan_input_for_stack` with the stack's way down (`python -m sizing plan --stack NAME --way-down`)."""
    plan_input = plan_input_for_stack(stack, project_dir)
    config = parse_stack_config(read_stack_file(Path(project_dir) / f"Pulumi.{stack}.yaml"))
    return replace(plan_input, way_down=way_down_settings(config, plan_input, level_percent))
