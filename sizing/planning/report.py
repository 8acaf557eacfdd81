"""The capacity plan as text (an eks-node-viewer-like view) and as JSON-able data.

Both carry the same content: the peak, the fleet Karpenter would launch
(one row per node: type, price, pods, cpu and memory requests against
allocatable), the NodePool limits as a YAML snippet, the optimal fleet and the
gap, the recommendation, pending pods, warnings (workloads whose pods request
no cpu or no memory) and notes such as the price basis.
Percentages are requests (DaemonSets included) over allocatable, as
eks-node-viewer shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.karpenter.limits import NodePoolLimits
from sizing.karpenter.simulation import PlacedNode, ProvisioningResult
from sizing.kube.quantities import format_cpu
from sizing.kube.resources import Resources
from sizing.planning.planner import CapacityPlan
from sizing.planning.recommendation import Outcome
from sizing.planning.scenarios import ScenarioRun

HOURS_PER_MONTH = 730
BAR_WIDTH = 30
SUMMARY_BAR_WIDTH = 40
DEFAULT_NODE_ROWS = 50


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _percent(used: int, total: int) -> float:
    return 100.0 * used / total if total > 0 else 0.0


def _bar(fraction_percent: float, width: int) -> str:
    filled = min(width, max(0, round(width * fraction_percent / 100)))
    return "█" * filled + "░" * (width - filled)


def _totals(nodes: Sequence[PlacedNode]) -> dict[str, Resources]:
    return {
        "used": sum((n.used for n in nodes), Resources()),
        "allocatable": sum((n.allocatable for n in nodes), Resources()),
        "capacity": sum((n.capacity for n in nodes), Resources()),
    }


def _limits_yaml(limits: NodePoolLimits) -> list[str]:
    spec = limits.spec()
    return ["limits:", f'  cpu: "{spec["cpu"]}"', f"  memory: {spec['memory']}"]


def _pod_counts(plan: CapacityPlan) -> str:
    parts = []
    for workload in plan.input.workloads:
        parts.append(f"{workload.name}: {workload.replicas} replicas + {workload.surge} surge")
    return "; ".join(parts)


def _node_lines(node: PlacedNode, name_width: int, show_pool: bool = False) -> list[str]:
    used, allocatable = node.used, node.allocatable
    cpu = _percent(used.cpu, allocatable.cpu)
    memory = _percent(used.memory, allocatable.memory)
    pods = f"({node.pod_count} pods)"
    kind = node.capacity_type + (", running" if node.existing else "")
    if show_pool:
        kind += f", NodePool {node.node_pool}"
    first = (
        f"{node.name:<{name_width}} cpu    {_bar(cpu, BAR_WIDTH)} {cpu:3.0f}% {pods:<10} "
        f"{node.instance_type}/{node.price:.4f} {kind}"
    )
    second = f"{'':<{name_width}} memory {_bar(memory, BAR_WIDTH)} {memory:3.0f}%"
    return [first, second]


def _fleet_lines(result: ProvisioningResult, unit: str, max_rows: int, several_pools: bool = False) -> list[str]:
    nodes = result.nodes
    if not nodes:
        return ["no nodes"]
    totals = _totals(nodes)
    used, allocatable = totals["used"], totals["allocatable"]
    cpu = _percent(used.cpu, allocatable.cpu)
    memory = _percent(used.memory, allocatable.memory)
    cost = result.cost
    count = _nodes(len(nodes))
    cpu_label = f"{count} ({used.cpu}m/{allocatable.cpu}m)"
    memory_label = " " * (len(count) + 1) + f"({used.memory}Mi/{allocatable.memory}Mi)"
    width = max(len(cpu_label), len(memory_label))
    price = f"{cost:.3f} {unit}"
    if unit == "USD/hour":
        price += f" | {cost * HOURS_PER_MONTH:.2f} USD/month"
    lines = [
        f"{cpu_label:<{width}} {cpu:5.1f}% cpu    {_bar(cpu, SUMMARY_BAR_WIDTH)} {price}",
        f"{memory_label:<{width}} {memory:5.1f}% memory {_bar(memory, SUMMARY_BAR_WIDTH)}",
        f"{result.placed_count} pods placed, {result.pending_count} pending",
    ]
    # Karpenter tried each of these and then dropped it to place some of the workload's pods.
    lines += [
        f"Soft constraints relaxed for {workload}: {', '.join(steps)}"
        for workload, steps in sorted(result.relaxed.items())
        if steps
    ]
    lines.append("")
    name_width = max(len(n.name) for n in nodes)
    show_pool = several_pools or len(result.pool_remaining) > 1
    for node in nodes[:max_rows]:
        lines += _node_lines(node, name_width, show_pool)
    if len(nodes) > max_rows:
        lines.append(f"… and {len(nodes) - max_rows} more nodes (all of them are in --json)")
    return lines


def _header_lines(plan: CapacityPlan) -> list[str]:
    types = plan.instance_types
    shown = ", ".join(types[:8]) + (f", … ({len(types)} types)" if len(types) > 8 else "")
    return [
        f"Capacity plan for region {plan.input.region}; NodePool instance types: {shown}",
        f"Peak with rollout surge: {plan.peak_pods} pods ({_pod_counts(plan)})",
        "DaemonSets on every node: " + (", ".join(ds.name for ds in plan.input.daemon_sets) or "none"),
    ]


MAX_WARNING_NAMES = 20


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


def _warning_lines(plan: CapacityPlan) -> list[str]:
    lines = []
    for warning in unrequested_warnings(plan):
        names = warning["workloads"]
        shown = ", ".join(names[:MAX_WARNING_NAMES])
        if len(names) > MAX_WARNING_NAMES:
            shown += f", … and {len(names) - MAX_WARNING_NAMES} more (all of them are in --json)"
        lines.append(f"Warning: {warning['message']}: {shown}")
    return lines


def _binding_text(limits: NodePoolLimits) -> str:
    cpu, memory = limits.binding
    if cpu == memory:
        return f"set by the {cpu} scenario"
    return f"cpu set by the {cpu} scenario, memory by the {memory} scenario"


def _types_by_pool(run: ScenarioRun) -> dict[str, dict[str, int]]:
    """NodePool -> instance type -> nodes of the scenario's fleet (Karpenter's nodes only), sorted."""
    by_pool: dict[str, dict[str, int]] = {}
    for node in run.result.nodes:
        if node.in_node_pool:
            counts = by_pool.setdefault(node.node_pool, {})
            counts[node.instance_type] = counts.get(node.instance_type, 0) + 1
    return {pool: dict(sorted(counts.items())) for pool, counts in sorted(by_pool.items())}


def _type_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} × {kind}" for kind, count in counts.items())


def _scenario_lines(plan: CapacityPlan) -> list[str]:
    if not plan.scenarios:
        return []
    cpu_binder, memory_binder = plan.limits.binding
    lines = ["Scenarios under the planned limits (capacity counted against the limits):"]
    width = max(len(name) for name in plan.scenarios)
    for name, run in plan.scenarios.items():
        usage = run.usage
        by_pool = _types_by_pool(run)
        types = _type_counts(by_pool.pop(run.result.primary_pool, {})) or "no nodes"
        types += "".join(f"; NodePool {pool}: {_type_counts(counts)}" for pool, counts in by_pool.items())
        marks = [dimension for dimension, binder in (("cpu", cpu_binder), ("memory", memory_binder)) if binder == name]
        bound = f"  ← sets the {' and '.join(marks)} limit" if marks else ""
        pending = f", {run.result.pending_count} pods pending" if run.result.pending else ""
        lines.append(
            f"  {name:<{width}}  {_nodes(usage.pods)} ({types}): {format_cpu(usage.cpu)} cpu, "
            f"{usage.memory}Mi{pending}{bound}"
        )
        lines.append(f"  {'':<{width}}  {run.description}")
    return lines


def _limits_lines(plan: CapacityPlan) -> list[str]:
    limits = plan.limits
    minimum = limits.minimum
    lines = [
        "NodePool limits: the smallest under which every scenario places every pod "
        f"({format_cpu(minimum.cpu)} cpu, {minimum.memory // 1024}Gi; {_binding_text(limits)}) "
        f"+ {limits.headroom_percent:g} % headroom, rounded up to whole cores and GiB",
    ]
    lines += ["  " + line for line in _limits_yaml(limits)]
    check = plan.current_limits
    if check is not None:
        current = ", ".join(f"{k}: {v}" for k, v in check.limits.items())
        if check.sufficient:
            lines.append(f"Current limits ({current}) are enough for every scenario.")
        else:
            lines.append(
                f"Current limits ({current}) leave {check.result.pending_count} pods pending "
                f"({', '.join(check.failing)}):"
            )
            lines += [f"  {p.workload}: {p.count} ({p.reason})" for p in check.result.pending]
    return lines


def _optimal_lines(plan: CapacityPlan) -> list[str]:
    optimal, unit = plan.optimal, plan.prices.unit
    if optimal is None:
        return ["Optimal fleet: not computed"]
    per_type: dict[str, int] = {}
    for group in optimal.groups:
        per_type[group.instance_type] = per_type.get(group.instance_type, 0) + group.count
    groups = ", ".join(f"{count} × {name}" for name, count in sorted(per_type.items())) or "no nodes"
    lines = [
        f"Optimal fleet ({optimal.status}): {groups}: {_nodes(optimal.node_count)}, {optimal.cost:.3f} {unit}; "
        f"lower bound {optimal.lower_bound_cost:.3f} {unit}, {_nodes(optimal.lower_bound_nodes)}"
    ]
    gap = plan.gap
    if gap is not None:
        percent = f" ({gap.percent:.1f} %)" if gap.percent is not None else ""
        lines.append(
            f"Gap: Karpenter's fleet has {gap.nodes:+d} nodes and costs {gap.cost:+.3f} {unit}{percent} "
            "against the optimal fleet"
        )
    return lines


def _recommendation_lines(plan: CapacityPlan) -> list[str]:
    lines = ["Recommendation: " + plan.recommendation.summary()]
    requirement = plan.recommendation.chosen.restriction.requirement
    if requirement is not None:
        values = ", ".join(str(v) for v in requirement["values"])
        lines.append(
            f"  add to the NodePool requirements: {{key: {requirement['key']}, operator: In, values: [{values}]}}"
        )
        if plan.recommended_limits is not None:
            spec = plan.recommended_limits.spec()
            lines.append(f'  with limits: cpu: "{spec["cpu"]}", memory: {spec["memory"]}')
    return lines


def _pending_lines(plan: CapacityPlan) -> list[str]:
    if not plan.fleet.pending:
        return ["Pending pods under the planned limits: none"]
    return ["Pending pods under the planned limits:"] + [
        f"  {group.workload}: {group.count} ({group.reason})" for group in plan.fleet.pending
    ]


def render_report(plan: CapacityPlan, max_rows: int = DEFAULT_NODE_ROWS) -> str:
    """The plan as text for a terminal; at most `max_rows` nodes are listed one per row."""
    lines = _header_lines(plan) + _warning_lines(plan)
    lines += ["", "Fleet Karpenter would launch at peak with the rollout surge (simulated)"]
    lines += _fleet_lines(plan.fleet, plan.prices.unit, max_rows, bool(plan.input.other_node_pools))
    lines += [""] + _scenario_lines(plan)
    lines += [""] + _limits_lines(plan)
    lines += [""] + _optimal_lines(plan)
    lines += [""] + _recommendation_lines(plan)
    lines += [""] + _pending_lines(plan)
    lines += [f"Note: {note}" for note in plan.notes]
    return "\n".join(lines) + "\n"


def _resources(value: Resources) -> dict[str, int]:
    return {"cpu": value.cpu, "memory": value.memory, "pods": value.pods}


def _node_data(node: PlacedNode) -> dict[str, Any]:
    return {
        "name": node.name,
        "instanceType": node.instance_type,
        "capacityType": node.capacity_type,
        "price": node.price,
        "existing": node.existing,
        "zones": list(node.zones),
        "pods": node.pod_count,
        "podsByWorkload": dict(node.pods),
        "requested": _resources(node.used),
        "allocatable": _resources(node.allocatable),
        "capacity": _resources(node.capacity),
        "instanceTypesLeft": node.options,
        "nodePool": node.node_pool,
    }


def _fleet_data(result: ProvisioningResult) -> dict[str, Any]:
    totals = _totals(result.nodes)
    return {
        "nodeCount": len(result.nodes),
        "cost": result.cost,
        "podsPlaced": result.placed_count,
        "podsPending": result.pending_count,
        "requested": _resources(totals["used"]),
        "allocatable": _resources(totals["allocatable"]),
        "capacity": _resources(totals["capacity"]),
        "nodes": [_node_data(node) for node in result.nodes],
        "pending": [{"workload": p.workload, "count": p.count, "reason": p.reason} for p in result.pending],
        "relaxed": {workload: list(steps) for workload, steps in sorted(result.relaxed.items())},
    }


def _limits_data(limits: NodePoolLimits | None) -> dict[str, Any] | None:
    if limits is None:
        return None
    return {
        "spec": limits.spec(),
        "minimum": {"cpu": limits.minimum.cpu, "memory": limits.minimum.memory},
        "headroomPercent": limits.headroom_percent,
        "bindingScenario": {"cpu": limits.binding[0], "memory": limits.binding[1]},
        "simulations": limits.probes,
    }


def _scenario_data(run: ScenarioRun) -> dict[str, Any]:
    usage = run.usage
    by_pool = _types_by_pool(run)
    primary = by_pool.pop(run.result.primary_pool, {})
    return {
        "description": run.description,
        "batches": run.batches,
        "nodeCount": usage.pods,
        "instanceTypes": primary,
        "otherNodePools": by_pool,
        "capacity": {"cpu": usage.cpu, "memory": usage.memory},
        "podsPlaced": run.result.placed_count,
        "podsPending": run.result.pending_count,
        "pending": [{"workload": p.workload, "count": p.count, "reason": p.reason} for p in run.result.pending],
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


def plan_data(plan: CapacityPlan) -> dict[str, Any]:
    """The plan as JSON-able data (costs per hour in `priceUnit`, cpu in m, memory in MiB)."""
    inputs = plan.input
    optimal = plan.optimal
    return {
        "region": inputs.region,
        "priceUnit": plan.prices.unit,
        "priceBasis": plan.prices.basis,
        "instanceTypes": list(plan.instance_types),
        "peakPods": plan.peak_pods,
        "workloads": [
            {
                "name": w.name,
                "requests": {"cpu": w.cpu_millicores, "memory": w.memory_mib},
                "replicas": w.replicas,
                "surge": w.surge,
                "peakPods": w.peak_pods,
                "nodeSelector": dict(w.node_selector),
            }
            for w in inputs.workloads
        ],
        "daemonSets": [
            {"name": ds.name, "requests": {"cpu": ds.cpu_millicores, "memory": ds.memory_mib}}
            for ds in inputs.daemon_sets
        ],
        "fleet": _fleet_data(plan.fleet),
        "limits": _limits_data(plan.limits),
        "scenarios": {name: _scenario_data(run) for name, run in plan.scenarios.items()},
        "currentLimits": (
            None
            if plan.current_limits is None
            else {
                "spec": dict(plan.current_limits.limits),
                "sufficient": plan.current_limits.sufficient,
                "failingScenarios": list(plan.current_limits.failing),
                "podsPending": plan.current_limits.result.pending_count,
                "pending": [
                    {"workload": p.workload, "count": p.count, "reason": p.reason}
                    for p in plan.current_limits.result.pending
                ],
            }
        ),
        "optimal": (
            None
            if optimal is None
            else {
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
                        "podsPerNode": dict(g.pods),
                    }
                    for g in optimal.groups
                ],
            }
        ),
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
            "limits": _limits_data(plan.recommended_limits),
        },
        "warnings": unrequested_warnings(plan),
        "notes": list(plan.notes),
    }
