"""The figures of a stack's capacity plan that monitoring checks in the live cluster.

The alerts (`stackmonitoring.rules`) and the plan dashboard
(`stackmonitoring.dashboards`) are both generated from one `PlannedFigures`, so an alert
and the panel that shows it speak of the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.planning.planner import CapacityPlan

# Karpenter's metrics name a resource as the NodePool's `spec.limits` does, and give cpu in
# cores and memory in bytes (karpenter_nodepools_usage / karpenter_nodepools_limit).
LIMIT_UNITS = {"cpu": "cores", "memory": "bytes"}


@dataclass(frozen=True)
class PlannedLimit:
    """One of the NodePool's `spec.limits`: its quantity as written, its value in the unit of
    Karpenter's metrics, and whether the plan set it or `nodePool.limits` overrode it."""

    resource: str
    quantity: str
    value: float
    overridden: bool


@dataclass(frozen=True)
class PlannedHpa:
    """The test app's HorizontalPodAutoscaler and the peak the plan sized the NodePool for."""

    namespace: str
    name: str
    max_replicas: int


@dataclass(frozen=True)
class PlannedFigures:
    """stack: the stack the plan is re-run for (`python -m sizing plan --stack`); ramp_seconds:
    from the load's arrival until every HPA the plan models reaches its maximum (hpa-ramp
    scenario); instance_types: every type the plan's fleets launch, in any scenario."""

    stack: str
    node_pool: str
    limits: tuple[PlannedLimit, ...]
    hpa: PlannedHpa | None
    ramp_seconds: int
    instance_types: tuple[str, ...]
    headroom_percent: float

    @property
    def replan_command(self) -> str:
        return f"python -m sizing plan --stack {self.stack}"


def planned_figures(config: Any, plan: CapacityPlan, limits: Mapping[str, str], stack: str) -> PlannedFigures:
    """The figures of `plan` for the stack `config` deploys with NodePool `limits` (the planned
    ones with any `nodePool.limits` override applied)."""
    overrides = config.node_pool.limits.given() if config.node_pool.limits is not None else {}
    planned_limits = tuple(
        PlannedLimit(resource, quantity, _metric_value(resource, quantity), resource in overrides)
        for resource, quantity in sorted(limits.items())
        if resource in LIMIT_UNITS
    )
    hpa = None
    if config.deploy_test_app:
        app = config.app
        workload = next(w for w in plan.input.workloads if w.name == f"{app.namespace}/{app.name}")
        hpa = PlannedHpa(app.namespace, app.name, workload.replicas)
    return PlannedFigures(
        stack=stack,
        node_pool=config.node_pool.name,
        limits=planned_limits,
        hpa=hpa,
        ramp_seconds=plan.ramp_seconds,
        instance_types=planned_instance_types(plan),
        headroom_percent=plan.input.headroom_percent,
    )


def planned_instance_types(plan: CapacityPlan) -> tuple[str, ...]:
    """The instance types of the NodePool's nodes in the planned fleet and in every scenario."""
    results = [plan.fleet, *(run.result for run in plan.scenarios.values())]
    return tuple(sorted({node.instance_type for result in results for node in result.nodes if node.in_node_pool}))


def _metric_value(resource: str, quantity: str) -> float:
    where = f"nodePool limit {resource}"
    if resource == "cpu":
        return cpu_millicores(quantity, where) / 1000
    return float(memory_mib(quantity, where) * 2**20)
