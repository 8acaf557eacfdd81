"""The capacity plan as JSON-able data: every figure the text report shows comes from here.

Units: cpu in millicores, memory in MiB, costs per hour in `priceUnit` (USD/hour, or capacity
units when the region has no prices).

Terms, each with one meaning:
- never running (`neverRunning`, the first key): workloads whose pods no node may ever take (a
  taint not tolerated, a node selector nothing satisfies, a host port a DaemonSet binds on every
  node they may use, ...), with their pods at peak with the surge and the reason; they are left out
  of everything else (workloads, pods, fleet, limits), which is the plan of the input without them;
- peak: every workload at its HPA maxReplicas (`pods.peak`); the peak scenario simulates those
  pods pending at once;
- rollout: the peak plus every workload's `maxSurge` pods (`pods.withSurge`); the fleet at the top
  of the report is the rollout scenario's, under the planned limits;
- timeline: a scenario's fleet after each provisioning batch (seconds from the scenario's start,
  pods wanted, placed and pending, nodes, capacity), the points the HTML report's ramp draws;
- nodes: every node of a fleet (running ones and other NodePools' included); launched: the ones
  Karpenter creates; capacity: what counts against the planned NodePool's limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sizing.karpenter.limits import NodePoolLimits, with_headroom
from sizing.karpenter.pricing import PriceTable
from sizing.karpenter.simulation import PendingPods, PlacedNode, ProvisioningResult
from sizing.kube.resources import Resources
from sizing.kube.scheduling import ZONE_KEY
from sizing.kube.workloads import Workload
from sizing.planning.decisions import Change
from sizing.planning.plan_types import CapacityPlan
from sizing.planning.recommendation import Outcome
from sizing.planning.report_way_down import way_down_data
from sizing.planning.scenarios import ScenarioRun

# The key under which nodes whose zone is not settled yet (several zones still open) are counted.
ANY_ZONE = "any"


def _resources(value: Resources) -> dict[str, int]:
    return {"cpu": value.cpu, "memory": value.memory, "pods": value.pods}


def _totals(nodes: Sequence[PlacedNode]) -> dict[str, Resources]:
    return {
        "used": sum((n.used for n in nodes), Resources()),
        "allocatable": sum((n.allocatable for n in nodes), Resources()),
        "capacity": sum((n.capacity for n in nodes), Resources()),
    }


def _zone(node: PlacedNode) -> str:
    return node.zones[0] if len(node.zones) == 1 else ANY_ZONE


def _node_data(node: PlacedNode, prices: PriceTable) -> dict[str, Any]:
    return {
        "name": node.name,
        "instanceType": node.instance_type,
        "capacityType": node.capacity_type,
        "price": node.price,
        "priceSource": prices.source_of(node.instance_type, node.capacity_type),
        "existing": node.existing,
        "zone": _zone(node),
        "zones": list(node.zones),
        "pods": node.pod_count,
        "podsByWorkload": dict(node.pods),
        "requested": _resources(node.used),
        "allocatable": _resources(node.allocatable),
        "capacity": _resources(node.capacity),
        "instanceTypesLeft": node.options,
        "nodePool": node.node_pool,
    }


def _pending_data(pending: Sequence[PendingPods]) -> list[dict[str, Any]]:
    return [{"workload": p.workload, "count": p.count, "reason": p.reason} for p in pending]


def _by_zone(nodes: Sequence[PlacedNode]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in nodes:
        counts[_zone(node)] = counts.get(_zone(node), 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (item[0] == ANY_ZONE, item[0])))


def _pods_by_zone(nodes: Sequence[PlacedNode]) -> dict[str, dict[str, int]]:
    """Workload -> zone -> pods (ANY_ZONE for nodes whose zone is not settled)."""
    counts: dict[str, dict[str, int]] = {}
    for node in nodes:
        for workload, count in node.pods.items():
            per_zone = counts.setdefault(workload, {})
            per_zone[_zone(node)] = per_zone.get(_zone(node), 0) + count
    return {
        workload: dict(sorted(per_zone.items(), key=lambda item: (item[0] == ANY_ZONE, item[0])))
        for workload, per_zone in sorted(counts.items())
    }


def _zone_topology(workload: Workload) -> bool:
    """Whether the workload's pods spread over zones or select zones by other pods."""
    scheduling = workload.scheduling
    keys = [spread.topology_key for spread in scheduling.topology_spread]
    keys += [term.topology_key for term in scheduling.pod_affinity]
    return ZONE_KEY in keys


def _by_pool(result: ProvisioningResult) -> dict[str, dict[str, int]]:
    """NodePool (the planned one first) -> instance type -> nodes; running nodes outside NodePools
    under "outside NodePools"."""
    by_pool: dict[str, dict[str, int]] = {}
    for node in result.nodes:
        pool = node.node_pool if node.in_node_pool else "outside NodePools"
        counts = by_pool.setdefault(pool, {})
        counts[node.instance_type] = counts.get(node.instance_type, 0) + 1
    order = sorted(by_pool, key=lambda pool: (pool != result.primary_pool, pool))
    return {pool: dict(sorted(by_pool[pool].items())) for pool in order}


def _fleet_data(result: ProvisioningResult, prices: PriceTable) -> dict[str, Any]:
    totals = _totals(result.nodes)
    return {
        "nodeCount": len(result.nodes),
        "launched": len(result.new_nodes),
        "cost": result.cost,
        "podsPlaced": result.placed_count,
        "podsPending": result.pending_count,
        "requested": _resources(totals["used"]),
        "allocatable": _resources(totals["allocatable"]),
        "capacity": _resources(totals["capacity"]),
        "nodesByZone": _by_zone(result.nodes),
        "nodes": [_node_data(node, prices) for node in result.nodes],
        "pending": _pending_data(result.pending),
        "relaxed": {workload: list(steps) for workload, steps in sorted(result.relaxed.items())},
    }


def _change_data(change: Change) -> dict[str, Any]:
    return {
        "workload": change.workload,
        "kind": change.kind,
        "subject": change.subject,
        "pods": change.pods,
        "withoutLimits": change.expected,
        "text": change.describe(),
    }


def _changes_data(found: Mapping[str, Sequence[Change]]) -> dict[str, list[dict[str, Any]]]:
    return {name: [_change_data(change) for change in changes] for name, changes in found.items()}


def _limits_data(limits: NodePoolLimits | None, pool: str) -> dict[str, Any] | None:
    if limits is None:
        return None
    return {
        "nodePool": pool,
        "spec": limits.spec(),
        "values": {"cpu": limits.cpu_millicores, "memory": limits.memory_mib},
        "minimum": {"cpu": limits.minimum.cpu, "memory": limits.minimum.memory},
        "minimumWithHeadroom": dict(
            zip(("cpu", "memory"), with_headroom(limits.minimum, limits.headroom_percent), strict=True)
        ),
        "headroomPercent": limits.headroom_percent,
        "bindingScenario": {"cpu": limits.binding[0], "memory": limits.binding[1]},
        "simulations": limits.probes,
    }


def _scenario_data(run: ScenarioRun, unlimited: ScenarioRun, limits: Mapping[str, int]) -> dict[str, Any]:
    usage = run.usage
    counted = run.result.limit_usage()
    over = sorted(key for key, value in limits.items() if counted.get(key, 0) > value)
    return {
        "description": run.description,
        "batches": run.batches,
        "pods": run.pods,
        "nodeCount": len(run.result.nodes),
        "nodePools": _by_pool(run.result),
        "nodesByZone": _by_zone(run.result.nodes),
        "podsByZone": _pods_by_zone(run.result.nodes),
        "capacity": {"cpu": usage.cpu, "memory": usage.memory},
        "overLimits": over,
        "podsPlaced": sum(sum(d.placed.values()) for d in run.decisions.values()),
        "podsPending": run.result.pending_count,
        "pending": _pending_data(run.result.pending),
        "timeline": [
            {
                "seconds": point.seconds,
                "podsWanted": point.wanted,
                "podsPlaced": point.placed,
                "podsPending": point.pending,
                "nodeCount": point.nodes,
                "capacity": {"cpu": point.cpu, "memory": point.memory},
            }
            for point in run.timeline
        ],
        "withoutLimits": {
            "nodeCount": len(unlimited.result.nodes),
            "nodePools": _by_pool(unlimited.result),
            "capacity": {"cpu": unlimited.usage.cpu, "memory": unlimited.usage.memory},
            "podsPending": unlimited.result.pending_count,
            "pending": _pending_data(unlimited.result.pending),
        },
    }


def _outcome_data(plan: CapacityPlan, outcome: Outcome) -> dict[str, Any]:
    restriction = outcome.restriction
    return {
        "restriction": restriction.label,
        "kind": restriction.kind,
        "requirement": dict(restriction.requirement) if restriction.requirement else None,
        "nodeCount": outcome.node_count,
        "cost": outcome.cost,
        "maxPodsPerNode": outcome.max_pods_per_node,
        "podsPending": outcome.pending,
        "abovePercent": plan.recommendation.above_optimum_percent(outcome),
    }


def _pods_data(plan: CapacityPlan) -> dict[str, int]:
    peak = sum(w.replicas for w in plan.input.workloads)
    surge = sum(w.surge for w in plan.input.workloads)
    return {"peak": peak, "surge": surge, "withSurge": peak + surge}


def _optimal_data(plan: CapacityPlan) -> dict[str, Any] | None:
    optimal = plan.optimal
    if optimal is None:
        return None
    return {
        "status": optimal.status,
        "nodeCount": optimal.node_count,
        "cost": optimal.cost,
        "lowerBound": {"cost": optimal.lower_bound_cost, "nodes": optimal.lower_bound_nodes},
        "work": optimal.work,
        "groups": [
            {
                "instanceType": g.instance_type,
                "capacityType": g.capacity_type,
                "zone": g.zone,
                "count": g.count,
                "price": g.price,
                "priceSource": plan.prices.source_of(g.instance_type, g.capacity_type),
                "podsPerNode": dict(g.pods),
            }
            for g in optimal.groups
        ],
    }


def _below_at(dimension: str, point: tuple[int, int] | None) -> int | None:
    """The cpu (m) or memory (MiB) limit one search step under the minimum, as simulated."""
    if point is None:
        return None
    return point[0] if dimension == "cpu" else point[1]


def plan_data(plan: CapacityPlan) -> dict[str, Any]:
    """The plan as JSON-able data (see the module docstring for units and terms)."""
    inputs = plan.input
    pool = plan.fleet.primary_pool
    planned_limits = plan.limits.for_simulation()
    current = plan.current_limits
    points = dict(zip(("cpu", "memory"), plan.limits.below, strict=True))
    below = {
        dimension: {
            "scenario": name,
            # The limit of this dimension the scenario was simulated under (cpu m or memory MiB).
            "at": _below_at(dimension, points[dimension]),
            "changes": [_change_data(change) for change in found],
        }
        for dimension, (name, found) in plan.limits_below.items()
    }
    return {
        # First: workloads left out of the plan because their pods can never run.
        "neverRunning": [
            {"workload": item.workload, "pods": item.pods, "reason": item.reason} for item in plan.never_running
        ],
        "region": inputs.region,
        "priceUnit": plan.prices.unit,
        "priceBasis": plan.prices.basis,
        "nodePool": pool,
        "otherNodePools": [spec.name or "default" for spec in inputs.other_node_pools],
        "instanceTypes": list(plan.instance_types),
        "pods": _pods_data(plan),
        "workloads": [
            {
                "name": w.name,
                "kind": w.kind,
                "requests": {"cpu": w.cpu_millicores, "memory": w.memory_mib},
                "replicas": w.replicas,
                "surge": w.surge,
                "podsWithSurge": w.peak_pods,
                "nodeSelector": dict(w.node_selector),
                "zoneTopology": _zone_topology(w),
            }
            for w in inputs.workloads
        ],
        "daemonSets": [
            {
                "name": ds.name,
                "requests": {"cpu": ds.cpu_millicores, "memory": ds.memory_mib},
                "nodePools": list(plan.daemon_set_pools.get(ds.name, ())),
            }
            for ds in inputs.daemon_sets
        ],
        "fleet": _fleet_data(plan.fleet, plan.prices),
        "limits": {
            **(_limits_data(plan.limits, pool) or {}),
            "below": below,
            "onFleetTypes": (
                None
                if plan.fleet_types_limits is None
                else {"instanceTypes": list(plan.fleet_types), **(_limits_data(plan.fleet_types_limits, pool) or {})}
            ),
        },
        "scenarios": {
            name: _scenario_data(run, plan.unlimited[name], planned_limits) for name, run in plan.scenarios.items()
        },
        "currentLimits": (
            None
            if current is None
            else {
                "spec": dict(current.limits),
                "keepsDecisions": current.sufficient,
                "changes": _changes_data({name: found for name, found in current.changes.items() if found}),
            }
        ),
        "findings": [{"subject": f.subject, "changes": _changes_data(f.changes)} for f in plan.findings],
        "wayDown": way_down_data(plan),
        "optimal": _optimal_data(plan),
        "gap": (
            None if plan.gap is None else {"nodes": plan.gap.nodes, "cost": plan.gap.cost, "percent": plan.gap.percent}
        ),
        "recommendation": {
            "summary": plan.recommendation.summary(),
            "maxPodsPerNode": plan.recommendation.max_pods_per_node,
            "chosen": _outcome_data(plan, plan.recommendation.chosen),
            "current": _outcome_data(plan, plan.recommendation.current),
            "candidatesSimulated": plan.recommendation.evaluated,
            "candidatesSkippedByBound": plan.recommendation.skipped,
            "candidatesLeftByBudget": plan.recommendation.left_by_budget,
            "limits": _limits_data(plan.recommended_limits, pool),
        },
        "prices": _price_data(plan),
        "warnings": unrequested_warnings(plan) + doubtful_warnings(plan),
        "notes": list(plan.notes),
    }


def unrequested_warnings(plan: CapacityPlan) -> list[dict[str, Any]]:
    """One warning per resource that some workloads' pods do not request, with those workloads."""
    return [
        {
            "resource": resource,
            "message": f"no {resource} request: the plan cannot size {resource} for them",
            "workloads": list(workloads),
        }
        for resource, workloads in plan.unrequested.items()
    ]


def doubtful_warnings(plan: CapacityPlan) -> list[dict[str, Any]]:
    """One warning per kind of input value that is almost surely a mistake, with each place it is
    ("workloads" lists "object: field = value (why)")."""
    by_warning: dict[str, list[str]] = {}
    for warning, place in plan.input.doubtful:
        by_warning.setdefault(warning, []).append(place)
    return [{"resource": "input", "message": warning, "workloads": places} for warning, places in by_warning.items()]


def _spot_used(plan: CapacityPlan) -> bool:
    """Whether any fleet of the plan (a scenario's, the optimal one) launches spot nodes."""
    results = [plan.fleet] + [run.result for run in plan.scenarios.values()]
    spot = any(node.capacity_type == "spot" for result in results for node in result.nodes)
    return spot or (plan.optimal is not None and any(g.capacity_type == "spot" for g in plan.optimal.groups))


def _price_data(plan: CapacityPlan) -> dict[str, Any]:
    """Where every price comes from: the catalog, every type's on-demand source, spot, offerings."""
    prices = plan.prices
    info = prices.catalog
    spot = prices.spot
    offerings = plan.offerings
    return {
        "region": prices.region,
        "catalog": {
            "path": info.path,
            "bundled": info.bundled,
            "region": info.region,
            "pricesAsOf": dict(info.prices_as_of),
            "spotPricesAsOf": dict(info.spot_prices_as_of),
            "offeringsAsOf": dict(info.offerings_as_of),
            "gaps": list(info.gaps),
        },
        "onDemand": {
            "sources": dict(sorted(prices.sources.items())),
            "descriptions": {source: prices.describe_source(source) for source in sorted(set(prices.sources.values()))},
        },
        "spot": {
            "source": spot.source,
            "used": _spot_used(plan),
            "tag": spot.tag,
            "description": spot.sentence(prices.region),
            "discountPercent": spot.discount_percent,
            "setBy": spot.discount_field,
            "asOf": spot.as_of,
        },
        "offerings": None
        if offerings is None
        else {
            "checked": offerings.checked,
            "asOf": offerings.as_of,
            "description": offerings.sentence(),
            "excluded": {pool.pool: dict(pool.excluded) for pool in offerings.pools},
            "zonesWithoutTypes": {pool.pool: list(pool.empty_zones) for pool in offerings.pools},
        },
    }
