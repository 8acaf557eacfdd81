"""The way down in the report: its JSON (`wayDown`) and its text section, one story.

The timeline lists the HPA's deletions and Karpenter's commands by time, each with the pods and
nodes left and the fleet's cost per hour after it; then the fleet at rest against the optimal
fleet for the same pods, why each node left stays, and what the planned and current limits do.
Long timelines and node lists are cut to `MAX_ROWS` rows in the text (the JSON keeps them whole,
bounded by the fleet's size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.planning.plan_types import CapacityPlan
from sizing.planning.way_down import WayDown

MAX_ROWS = 20


def _timeline(way: WayDown) -> list[dict[str, Any]]:
    result = way.result
    # (time, HPA before Karpenter at the same second, order within its kind, event)
    events: list[tuple[int, int, int, dict[str, Any]]] = []
    for index, step in enumerate(result.pod_steps):
        events.append(
            (
                step.time,
                0,
                index,
                {
                    "time": step.time,
                    "kind": "scale-in",
                    "workload": step.workload,
                    "podsDeleted": step.count,
                    "workloadPods": step.pods,
                },
            )
        )
    for index, command in enumerate(result.steps):
        events.append(
            (
                command.time,
                1,
                index,
                {
                    "time": command.time,
                    "kind": command.method,
                    "reason": command.reason,
                    "removed": list(command.removed),
                    "launched": None
                    if command.replacement is None
                    else {
                        "instanceType": command.replacement.instance_type,
                        "capacityType": command.replacement.capacity_type,
                        "price": command.replacement.price,
                    },
                    "podsMoved": command.moved,
                    "nodes": command.nodes,
                    "cost": command.cost,
                },
            )
        )
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    return [event for _, _, _, event in events]


def _run_data(way: WayDown) -> dict[str, Any]:
    result = way.result
    return {
        "limits": dict(way.limits),
        "start": {"nodes": way.start_nodes, "cost": way.start_cost},
        "atRest": {
            "nodes": len(result.nodes),
            "cost": result.cost,
            "instanceTypes": _type_counts([node.option.name for node in result.nodes]),
            "seconds": result.end,
        },
        "timeline": _timeline(way),
        "stays": dict(result.stays),
        "changes": list(way.changes),
        "keepsDecisions": not way.changes,
    }


def _type_counts(names: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def way_down_data(plan: CapacityPlan) -> dict[str, Any] | None:
    """The `wayDown` key of the report (None when the plan has no way down)."""
    found = plan.way_down
    if found is None:
        return None
    planned = found.planned
    return {
        "targets": dict(sorted(planned.targets.items())),
        "podsAtRest": found.pods_at_rest,
        "planned": _run_data(planned),
        "optimal": None if found.optimal_cost is None else {"nodes": found.optimal_nodes, "cost": found.optimal_cost},
        "limitsRaised": dict(found.raised),
        "current": None if found.current is None else _run_data(found.current),
    }


def _many(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _money(value: float) -> str:
    return f"{value:.4f}"


def _lines_of(run: Mapping[str, Any], unit: str) -> list[str]:
    lines = []
    timeline = run["timeline"]
    for event in timeline[:MAX_ROWS]:
        if event["kind"] == "scale-in":
            lines.append(
                f"  {event['time']:>6} s  HPA deletes {_many(event['podsDeleted'], 'pod')} of {event['workload']} "
                f"({event['workloadPods']} left)"
            )
        else:
            launched = event["launched"]
            what = f"removes {', '.join(event['removed'])}"
            if launched is not None:
                what += f" for one {launched['capacityType']} {launched['instanceType']}"
            lines.append(
                f"  {event['time']:>6} s  {event['kind']} {what}; {_many(event['podsMoved'], 'pod')} moved, "
                f"{_many(event['nodes'], 'node')}, {_money(event['cost'])} {unit}"
            )
    if len(timeline) > MAX_ROWS:
        lines.append(f"  ... {len(timeline) - MAX_ROWS} more events")
    return lines


def way_down_lines(data: Mapping[str, Any]) -> list[str]:
    """The text section of the way down (empty when the plan has none)."""
    found = data.get("wayDown")
    if not found:
        return []
    unit = data.get("priceUnit", "USD/hour")
    planned = found["planned"]
    rest = planned["atRest"]
    targets = ", ".join(f"{name} {count}" for name, count in found["targets"].items()) or "no HPA"
    lines = [
        f"The way down (load drops at 0 s; HPAs to {targets}), under the planned limits:",
        f"  from {_many(planned['start']['nodes'], 'node')} at {_money(planned['start']['cost'])} {unit} "
        f"to {_many(rest['nodes'], 'node')} at {_money(rest['cost'])} {unit} after {rest['seconds']} s",
    ]
    lines += _lines_of(planned, unit)
    optimal = found["optimal"]
    if optimal is not None:
        lines.append(
            f"  at rest: {_many(rest['nodes'], 'node')}, {_money(rest['cost'])} {unit}; the optimal fleet for the "
            f"same pods: {_many(optimal['nodes'], 'node')}, {_money(optimal['cost'])} {unit}"
        )
    stays = planned["stays"]
    if stays:
        lines.append("  Nodes left, and why Karpenter keeps them:")
        for name, why in list(stays.items())[:MAX_ROWS]:
            lines.append(f"    {name}: {why}")
        if len(stays) > MAX_ROWS:
            lines.append(f"    ... {len(stays) - MAX_ROWS} more nodes")
    raised = found["limitsRaised"]
    if raised:
        shown = ", ".join(f"{key} {value}" for key, value in sorted(raised.items()))
        lines.append(
            f"  The limits were raised for it ({shown}; cpu in m, memory in MiB): a replacement launches "
            "while the nodes it replaces still run"
        )
    current = found["current"]
    if current is not None:
        if current["keepsDecisions"]:
            lines.append("  Under the NodePool's current limits the way down decides the same.")
        else:
            lines.append(
                "  Under the NodePool's current limits the way down decides otherwise (whatever they keep on the way up):"
            )
            lines += [f"    {change}" for change in current["changes"][:MAX_ROWS]]
            lines.append(
                f"    at rest: {_many(current['atRest']['nodes'], 'node')}, {_money(current['atRest']['cost'])} {unit}"
            )
    return lines
