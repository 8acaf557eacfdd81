"""Every zone a plan's input names belongs to the plan's region (`sizing.karpenter.regions`).

A zone of another region would make the report speak of one region while it places nodes in
another; it is refused naming where it was written: the zones to plan with, a NodePool's zone
requirement, a pod's zone selector, or an existing node's zone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sizing.karpenter.regions import check_region, check_zone
from sizing.kube.scheduling import LabelExpression
from sizing.planning.plan_types import PlanInput

ZONE_LABEL = "topology.kubernetes.io/zone"


def check_plan_zones(plan_input: PlanInput, zones_key: str = "zones", region_key: str = "region") -> None:
    """Refuse an unknown region, and any zone named in `plan_input` that is not one of its region's.
    zones_key / region_key: how the input names its zones and region (`--zones`, `zones`)."""
    region = check_region(plan_input.region, region_key)
    for zone in plan_input.zones:
        check_zone(zone, region, zones_key)
    for pool in (plan_input.node_pool, *plan_input.other_node_pools):
        owner = f"NodePool {pool.name}" if pool.name else "the NodePool"
        for index, requirement in enumerate(pool.requirements):
            if isinstance(requirement, Mapping) and requirement.get("key") == ZONE_LABEL:
                values = requirement.get("values") or []
                for zone in values if isinstance(values, list | tuple) else [values]:
                    check_zone(zone, region, f"{owner}: requirements[{index}] ({ZONE_LABEL})")
    for workload in plan_input.workloads:
        where = f"workload {workload.name!r}"
        if ZONE_LABEL in workload.node_selector:
            check_zone(workload.node_selector[ZONE_LABEL], region, f"{where}: nodeSelector {ZONE_LABEL}")
        for zone in _zone_values(term for term in workload.scheduling.required_node_terms):
            check_zone(zone, region, f"{where}: required node affinity on {ZONE_LABEL}")
    for node in plan_input.existing_nodes:
        if node.zone is not None:
            check_zone(node.zone, region, f"existing node {node.name!r}: zone")


def _zone_values(terms: Iterable[tuple[LabelExpression, ...]]) -> Iterable[Any]:
    for term in terms:
        for expression in term:
            if expression.key == ZONE_LABEL:
                yield from expression.values
