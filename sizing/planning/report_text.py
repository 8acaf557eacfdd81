"""The capacity plan as text for a terminal (an eks-node-viewer-like view), rendered from
`plan_data` alone, so that the text and `--json` tell the same story figure by figure.

Percentages are requests (DaemonSets included) over allocatable, as eks-node-viewer shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.kube.quantities import format_cpu, format_memory
from sizing.planning.report_data import ANY_ZONE
from sizing.planning.report_way_down import way_down_lines

HOURS_PER_MONTH = 730
BAR_WIDTH = 30
SUMMARY_BAR_WIDTH = 40
DEFAULT_NODE_ROWS = 50
TYPES_SHOWN = 8
# Workloads named in one warning line; the JSON names them all.
MAX_WARNING_NAMES = 20
# Never-running workloads listed one per line; the JSON lists them all.
MAX_NEVER_RUNNING_SHOWN = 20


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count != 1 else ''}"


def _pods(count: int) -> str:
    return f"{count} pod{'s' if count != 1 else ''}"


def _percent(used: int, total: int) -> float:
    return 100.0 * used / total if total > 0 else 0.0


def _bar(fraction_percent: float, width: int) -> str:
    filled = min(width, max(0, round(width * fraction_percent / 100)))
    return "█" * filled + "░" * (width - filled)


def _type_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{count} × {kind}" for kind, count in counts.items())


def _pools_text(by_pool: Mapping[str, Mapping[str, int]], pool: str) -> str:
    """E.g. "12 × m5.large; NodePool data: 1 × r5.4xlarge" (the planned NodePool unnamed)."""
    parts: list[str] = []
    for name, counts in by_pool.items():
        if name == pool:
            parts.insert(0, _type_counts(counts))
        elif name.startswith("outside"):
            parts.append(f"{name}: {_type_counts(counts)}")
        else:
            parts.append(f"NodePool {name}: {_type_counts(counts)}")
    return "; ".join(parts) or "no nodes"


def _zones_text(by_zone: Mapping[str, int]) -> str:
    """E.g. "us-east-1a 4, us-east-1b 4, any zone 1"; empty when no node is held to a zone."""
    if set(by_zone) <= {ANY_ZONE}:
        return ""
    return ", ".join(f"{zone} {count}" if zone != ANY_ZONE else f"any zone {count}" for zone, count in by_zone.items())


def _never_running_lines(data: Mapping[str, Any]) -> list[str]:
    """The workloads whose pods can never run, first: the plan below leaves them out."""
    never = data["neverRunning"]
    if not never:
        return []

    def counted(count: int, what: str) -> str:
        return f"{count} {what}{'s' if count != 1 else ''}"

    pods = sum(item["pods"] for item in never)
    lines = [
        f"Never running: {counted(len(never), 'workload')}, {counted(pods, 'pod')} that no node may take; Karpenter "
        "leaves them pending, and the plan below (pods, fleet, limits) leaves them out:"
    ]
    lines += [
        f"  {item['workload']}: {counted(item['pods'], 'pod')} ({item['reason']})"
        for item in never[:MAX_NEVER_RUNNING_SHOWN]
    ]
    if len(never) > MAX_NEVER_RUNNING_SHOWN:
        lines.append(f"  … and {len(never) - MAX_NEVER_RUNNING_SHOWN} more (all of them are in --json)")
    return lines


def _header_lines(data: Mapping[str, Any]) -> list[str]:
    types = data["instanceTypes"]
    shown = ", ".join(types[:TYPES_SHOWN]) + (f", … ({len(types)} types)" if len(types) > TYPES_SHOWN else "")
    pods = data["pods"]
    per_workload = "; ".join(f"{w['name']}: {w['replicas']} + {w['surge']}" for w in data["workloads"])
    lines = [
        f"Capacity plan for region {data['region']}; NodePool {data['nodePool']} instance types: {shown}",
    ]
    if data["otherNodePools"]:
        lines.append(
            f"Other NodePools (their limits as given, overflow in the simulation): {', '.join(data['otherNodePools'])}"
        )
    lines.append(
        f"Pods: {pods['peak']} at peak (HPA maxReplicas) + {pods['surge']} rollout surge = {pods['withSurge']} "
        f"({per_workload})"
    )
    everywhere, some, nowhere = [], [], []
    all_pools = [data["nodePool"], *data["otherNodePools"]]
    for ds in data["daemonSets"]:
        if len(ds["nodePools"]) == len(all_pools):
            everywhere.append(ds["name"])
        elif ds["nodePools"]:
            some.append(f"{ds['name']} (NodePool {', '.join(ds['nodePools'])})")
        else:
            nowhere.append(ds["name"])
    line = "DaemonSets on every node: " + (", ".join(everywhere) or "none")
    if some:
        line += "; on some NodePools only: " + ", ".join(some)
    lines.append(line)
    if nowhere:
        lines.append(
            f"DaemonSets on no node (their selector or tolerations match no node of the NodePools): {', '.join(nowhere)}"
        )
    return lines


def _warning_lines(data: Mapping[str, Any]) -> list[str]:
    lines = []
    for warning in data["warnings"]:
        names = warning["workloads"]
        shown = ", ".join(names[:MAX_WARNING_NAMES])
        if len(names) > MAX_WARNING_NAMES:
            shown += f", … and {len(names) - MAX_WARNING_NAMES} more (all of them are in --json)"
        lines.append(f"Warning: {warning['message']}: {shown}")
    return lines


def _spot_tag(data: Mapping[str, Any]) -> str:
    """The label put next to every cost that includes spot nodes (how spot is priced), or ""."""
    spot = data["prices"]["spot"]
    return f"[{spot['tag']}]" if spot["used"] else ""


def _tagged(text: str, tag: str, spot: bool) -> str:
    return f"{text} {tag}" if tag and spot else text


def _node_lines(node: Mapping[str, Any], name_width: int, show_pool: bool, tag: str) -> list[str]:
    cpu = _percent(node["requested"]["cpu"], node["allocatable"]["cpu"])
    memory = _percent(node["requested"]["memory"], node["allocatable"]["memory"])
    pods = f"({node['pods']} pods)"
    kind = _tagged(node["capacityType"], tag, node["capacityType"] == "spot")
    kind += ", running" if node["existing"] else ""
    kind += f", {node['zone']}" if node["zone"] != ANY_ZONE else ""
    if show_pool:
        kind += f", NodePool {node['nodePool']}"
    first = (
        f"{node['name']:<{name_width}} cpu    {_bar(cpu, BAR_WIDTH)} {cpu:3.0f}% {pods:<10} "
        f"{node['instanceType']}/{node['price']:.4f} {kind}"
    )
    second = f"{'':<{name_width}} memory {_bar(memory, BAR_WIDTH)} {memory:3.0f}%"
    return [first, second]


def _fleet_lines(data: Mapping[str, Any], max_rows: int) -> list[str]:
    fleet, unit = data["fleet"], data["priceUnit"]
    lines = ["Fleet at peak with the rollout surge, under the planned limits (the rollout scenario, simulated)"]
    nodes = fleet["nodes"]
    if not nodes:
        return lines + ["no nodes", f"{fleet['podsPlaced']} pods placed, {fleet['podsPending']} pending"]
    used, allocatable = fleet["requested"], fleet["allocatable"]
    cpu = _percent(used["cpu"], allocatable["cpu"])
    memory = _percent(used["memory"], allocatable["memory"])
    count = _nodes(fleet["nodeCount"])
    if fleet["launched"] != fleet["nodeCount"]:
        count += f" ({fleet['launched']} launched)"
    cpu_label = f"{count} ({used['cpu']}m/{allocatable['cpu']}m)"
    memory_label = " " * (len(count) + 1) + f"({used['memory']}Mi/{allocatable['memory']}Mi)"
    width = max(len(cpu_label), len(memory_label))
    price = f"{fleet['cost']:.3f} {unit}"
    if unit == "USD/hour":
        price += f" | {fleet['cost'] * HOURS_PER_MONTH:.2f} USD/month"
    tag = _spot_tag(data)
    price = _tagged(price, tag, any(node["capacityType"] == "spot" for node in nodes))
    zones = _zones_text(fleet["nodesByZone"])
    lines += [
        f"{cpu_label:<{width}} {cpu:5.1f}% cpu    {_bar(cpu, SUMMARY_BAR_WIDTH)} {price}",
        f"{memory_label:<{width}} {memory:5.1f}% memory {_bar(memory, SUMMARY_BAR_WIDTH)}",
        f"{fleet['podsPlaced']} pods placed, {fleet['podsPending']} pending"
        + (f"; nodes by zone: {zones}" if zones else ""),
    ]
    # Karpenter tried each of these, and dropped it to place some of the workload's pods.
    lines += [
        f"Soft constraints Karpenter relaxes for {workload} (as it does without limits): {', '.join(steps)}"
        for workload, steps in fleet["relaxed"].items()
        if steps
    ]
    lines.append("")
    name_width = max(len(n["name"]) for n in nodes)
    show_pool = bool(data["otherNodePools"]) or len({n["nodePool"] for n in nodes}) > 1
    for node in nodes[:max_rows]:
        lines += _node_lines(node, name_width, show_pool, tag)
    if len(nodes) > max_rows:
        lines.append(f"… and {len(nodes) - max_rows} more nodes (all of them are in --json)")
    return lines


def _mib_text(mib: int) -> str:
    """Memory in MiB, as the scenario rows show it, with whole GiB beside it ("295936Mi (289Gi)")."""
    return f"{mib}Mi ({format_memory(mib)})" if mib % 1024 == 0 else f"{mib}Mi"


def _unlimited_difference(run: Mapping[str, Any], unlimited: Mapping[str, Any]) -> str:
    """How a scenario's nodes under the limits differ from its nodes without them (the same
    decisions for every pod either way: that is what the limits keep)."""
    more = unlimited["nodeCount"] - run["nodeCount"]
    if more == 0:
        return "only the instance types differ"
    count = f"{abs(more)} node{'s' if abs(more) != 1 else ''} {'more' if more > 0 else 'fewer'}"
    return f"the same pods on the same NodePools, on {count} of other instance types"


def _scenario_lines(data: Mapping[str, Any]) -> list[str]:
    scenarios = data["scenarios"]
    if not scenarios:
        return []
    limits = data["limits"]
    binding = limits["bindingScenario"]
    lines = [
        "Scenarios under the planned limits, each deciding as it does without limits "
        f"(capacity: what counts against NodePool {data['nodePool']}'s limits):"
    ]
    width = max(len(name) for name in scenarios)
    pad = " " * (width + 4)
    spread_over_zones = [w["name"] for w in data["workloads"] if w["zoneTopology"]]
    for name, run in scenarios.items():
        marks = [dimension for dimension in ("cpu", "memory") if binding[dimension] == name]
        row = (
            f"  {name:<{width}}  {_pods(run['pods'])}: {_nodes(run['nodeCount'])} "
            f"({_pools_text(run['nodePools'], data['nodePool'])}): {format_cpu(run['capacity']['cpu'])} cpu, "
            f"{run['capacity']['memory']}Mi"
        )
        if run["podsPending"]:
            row += f", {run['podsPending']} pods pending (as without limits)"
        if marks:
            minimum = data["limits"]["minimum"]
            figures = [
                f"{format_cpu(minimum['cpu'])} cpu" if mark == "cpu" else _mib_text(minimum["memory"]) for mark in marks
            ]
            row += f"  ← sets the {' and '.join(marks)} limit: decides as without limits from {', '.join(figures)} up"
        lines.append(row)
        lines.append(f"{pad}{run['description']}")
        zones = _zones_text(run["nodesByZone"])
        if zones:
            lines.append(f"{pad}nodes by zone: {zones}")
            if ANY_ZONE in run["nodesByZone"]:
                lines.append(
                    f"{pad}any zone: no pod on those nodes asks for a zone, so EC2 picks one of the NodePool's at launch"
                )
        for workload in spread_over_zones:
            per_zone = _zones_text(run["podsByZone"].get(workload, {}))
            if per_zone:
                lines.append(f"{pad}{workload} pods by zone: {per_zone}")
        if run["overLimits"]:
            lines.append(
                f"{pad}above the planned {' and '.join(run['overLimits'])} limit: Karpenter creates a node once "
                "usage is not yet over a limit, so this one runs for a while"
            )
        unlimited = run["withoutLimits"]
        if unlimited["nodePools"] != run["nodePools"]:
            lines.append(
                f"{pad}without limits: {_nodes(unlimited['nodeCount'])} "
                f"({_pools_text(unlimited['nodePools'], data['nodePool'])}); {_unlimited_difference(run, unlimited)}"
            )
    return lines


def _never_placed_lines(data: Mapping[str, Any]) -> list[str]:
    """Pods that stay pending even without limits, grouped by the scenarios that leave the same pods."""
    groups: dict[tuple[tuple[str, int, str], ...], list[str]] = {}
    for name, run in data["scenarios"].items():
        pending = tuple((p["workload"], p["count"], p["reason"]) for p in run["withoutLimits"]["pending"])
        if pending:
            groups.setdefault(pending, []).append(name)
    if not groups:
        return []
    lines = ["Pods pending even without limits (left out of the limits, which still run every other pod):"]
    for pending, names in groups.items():
        lines.append(f"  {', '.join(names)}:")
        lines += [f"    {workload}: {count} ({reason})" for workload, count, reason in pending]
    return lines


def _change_lines(changes: Mapping[str, list[Mapping[str, Any]]], indent: str) -> list[str]:
    return [f"{indent}{name}: {change['text']}" for name, found in changes.items() for change in found]


def _below_text(dimension: str, at: int | None, minimum: int) -> str:
    """E.g. "at cpu 3 (1 core under the minimum of 4)": the limit one search step under the minimum."""
    if at is None:
        return f"under the minimum {dimension} limit"
    if dimension == "cpu":
        cores = (minimum - at) // 1000
        return f"at cpu {format_cpu(at)} ({cores} core{'s' if cores != 1 else ''} under the minimum of {format_cpu(minimum)})"
    return (
        f"at memory {format_memory(at)} ({format_memory(minimum - at)} under the minimum of {format_memory(minimum)})"
    )


def _limits_lines(data: Mapping[str, Any]) -> list[str]:
    limits = data["limits"]
    minimum = limits["minimum"]
    binding = limits["bindingScenario"]
    if binding["cpu"] == binding["memory"]:
        setter = f"set by the {binding['cpu']} scenario"
    else:
        setter = f"cpu set by the {binding['cpu']} scenario, memory by the {binding['memory']} scenario"
    spec = limits["spec"]
    lines = [
        f"NodePool {limits['nodePool']} limits: the smallest under which every scenario decides as it does "
        f"without limits ({format_cpu(minimum['cpu'])} cpu, {format_memory(minimum['memory'])}; {setter}) "
        f"+ {limits['headroomPercent']:g} % headroom, rounded up to whole cores and GiB",
    ]
    headroom = limits["minimumWithHeadroom"]
    if headroom != limits["values"]:
        lines.append(
            f"  raised from {format_cpu(headroom['cpu'])} cpu, {format_memory(headroom['memory'])}: under those a "
            "scenario decides otherwise (more room is not always better: each NodeClaim reserves its largest "
            "candidate type out of what is left)"
        )
    lines += [
        "  limits:",
        f'    cpu: "{spec["cpu"]}"',
        f"    memory: {spec['memory']}",
    ]
    for dimension, below in limits["below"].items():
        if below["changes"]:
            lines.append(
                f"  {_below_text(dimension, below['at'], minimum[dimension])}, the {below['scenario']} "
                "scenario decides otherwise:"
            )
            lines += [f"    {change['text']}" for change in below["changes"]]
    narrower = limits["onFleetTypes"]
    if narrower is not None:
        spec = narrower["spec"]
        lines.append(
            "  far above what the scenarios use: on a NodePool this wide every new NodeClaim reserves its largest "
            "candidate type out of what is left (subtractMax), so keeping these decisions takes room for those "
            f"reservations. Restricted to the fleet's types ({', '.join(narrower['instanceTypes'])}), Karpenter "
            f'decides the same with limits cpu: "{spec["cpu"]}", memory: {spec["memory"]}'
        )
    current = data["currentLimits"]
    if current is not None:
        given = ", ".join(f"{key}: {value}" for key, value in current["spec"].items())
        if current["keepsDecisions"]:
            lines.append(f"Current limits ({given}) keep every scenario's decisions.")
        else:
            lines.append(f"Current limits ({given}) change what Karpenter decides:")
            lines += _change_lines(current["changes"], "  ")
            kinds = {change["kind"] for found in current["changes"].values() for change in found}
            if kinds == {"node-pool"}:
                lines.append(
                    "  If that overflow is by design, keep the current limits; the planned ones run those pods "
                    f"on NodePool {data['nodePool']}."
                )
    for finding in data["findings"]:
        lines.append(f"Finding: {finding['subject']}, set in the input, change what Karpenter decides:")
        lines += _change_lines(finding["changes"], "  ")
    return lines


def _optimal_lines(data: Mapping[str, Any]) -> list[str]:
    optimal, unit = data["optimal"], data["priceUnit"]
    if optimal is None:
        return ["Optimal fleet: not computed"]
    per_type: dict[str, int] = {}
    for group in optimal["groups"]:
        per_type[group["instanceType"]] = per_type.get(group["instanceType"], 0) + group["count"]
    groups = ", ".join(f"{count} × {name}" for name, count in sorted(per_type.items())) or "no nodes"
    bound = optimal["lowerBound"]
    tag = _spot_tag(data)
    lines = [
        _tagged(
            f"Optimal fleet for the pods the fleet above launches nodes for ({optimal['status']}): {groups}: "
            f"{_nodes(optimal['nodeCount'])}, {optimal['cost']:.3f} {unit}; lower bound {bound['cost']:.3f} {unit}, "
            f"{_nodes(bound['nodes'])}",
            tag,
            any(group["capacityType"] == "spot" for group in optimal["groups"]),
        )
    ]
    gap = data["gap"]
    if gap is not None:
        percent = f" ({gap['percent']:.1f} %)" if gap["percent"] is not None else ""
        lines.append(
            _tagged(
                f"Gap: Karpenter launches {gap['nodes']:+d} nodes and {gap['cost']:+.3f} {unit}{percent} "
                "against the optimal fleet",
                tag,
                True,
            )
        )
    return lines


def _recommendation_lines(data: Mapping[str, Any]) -> list[str]:
    recommendation = data["recommendation"]
    lines = [_tagged("Recommendation: " + recommendation["summary"], _spot_tag(data), True)]
    requirement = recommendation["chosen"]["requirement"]
    if requirement is not None:
        values = ", ".join(str(v) for v in requirement["values"])
        lines.append(
            f"  add to the NodePool requirements: {{key: {requirement['key']}, operator: In, values: [{values}]}}"
        )
        if recommendation["limits"] is not None:
            spec = recommendation["limits"]["spec"]
            lines.append(f'  with limits: cpu: "{spec["cpu"]}", memory: {spec["memory"]}')
    return lines


def _pending_lines(data: Mapping[str, Any]) -> list[str]:
    pending = data["fleet"]["pending"]
    if not pending:
        return ["Pending pods under the planned limits: none"]
    return ["Pending pods under the planned limits (the same as without limits):"] + [
        f"  {p['workload']}: {p['count']} ({p['reason']})" for p in pending
    ]


SOURCE_NAMES_SHOWN = 6


def _types(count: int) -> str:
    return f"{count} type{'s' if count != 1 else ''}"


def _price_lines(data: Mapping[str, Any]) -> list[str]:
    """Where every price comes from: on-demand by source, spot, and the offerings check."""
    prices = data["prices"]
    lines = [f"Prices ({data['priceUnit']}, {prices['region']}):"]
    by_source: dict[str, list[str]] = {}
    for name, source in prices["onDemand"]["sources"].items():
        by_source.setdefault(source, []).append(name)
    for source, names in sorted(by_source.items()):
        shown = ", ".join(names[:SOURCE_NAMES_SHOWN]) + (", …" if len(names) > SOURCE_NAMES_SHOWN else "")
        description = prices["onDemand"]["descriptions"][source]
        lines.append(f"  on-demand ({source}): {description}; {_types(len(names))}: {shown}")
    if prices["spot"]["used"]:
        lines.append(f"  spot ({prices['spot']['source']}): {prices['spot']['description']}")
    offerings = prices["offerings"]
    if offerings is not None:
        lines.append(f"  offerings: {offerings['description']}")
        for pool, excluded in offerings["excluded"].items():
            items = list(excluded.items())
            lines += [f"    NodePool {pool}: {name}: {why}" for name, why in items[:SOURCE_NAMES_SHOWN]]
            if len(items) > SOURCE_NAMES_SHOWN:
                lines.append(f"    NodePool {pool}: … and {len(items) - SOURCE_NAMES_SHOWN} more (in --json)")
    return lines


def render_text(data: Mapping[str, Any], max_rows: int = DEFAULT_NODE_ROWS) -> str:
    """`data` (from `plan_data`) as text; at most `max_rows` nodes are listed one per row."""
    sections = [
        _never_running_lines(data),
        _header_lines(data) + _warning_lines(data),
        _fleet_lines(data, max_rows),
        _scenario_lines(data),
        _never_placed_lines(data),
        _limits_lines(data),
        way_down_lines(data),
        _optimal_lines(data),
        _recommendation_lines(data),
        _pending_lines(data),
        _price_lines(data) + [f"Note: {note}" for note in data["notes"]],
    ]
    lines: list[str] = []
    for section in sections:
        if section:
            lines += ([""] if lines else []) + section
    return "\n".join(lines) + "\n"
