"""The capacity plan as one self-contained HTML page, rendered from `plan_data` alone, so that
the page, the text report and `--json` tell the same story figure by figure.

The charts are SVG drawn by matplotlib and written into the page (text kept as text, a fixed
hash salt and no date, so the same plan gives the same bytes); the page loads nothing else: no
script, no font, no stylesheet from elsewhere. Every chart has a title, axes in units (pods,
nodes, cores, GiB, USD/hour, seconds, percent) and a table with its figures.

Every figure written as text is wrapped in an element whose `data-json` attribute names where in
the JSON it comes from (a list of keys and indices) and whose `data-op` says how it is shown:
`value` (as it is), `cores` (millicores / 1000), `gib` (MiB / 1024), `percent` (the value over
the one `data-of` names, times 100), `count` (the items of a list matching `data-where`), `sum`
(their `data-field` added up) or `json` (a whole section, as JSON).

Units in the JSON: cpu in millicores, memory in MiB, costs per hour in `priceUnit`.
"""

from __future__ import annotations

import html
import io
import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sizing.kube.quantities import CPU_FORMS, MEMORY_FORMS, parse_quantity

# Okabe and Ito's palette, which stays distinct for the common colour vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LIMIT_COLOUR = "#D55E00"
CURRENT_COLOUR = "#000000"
# Nodes drawn one bar each and listed one row each; the JSON has them all.
MAX_NODE_BARS = 60
MAX_NODE_ROWS = 300
# Scenarios whose timeline is drawn as the ramp, the first present wins.
RAMP_SCENARIOS = ("hpa-ramp", "peak")
# Top-level JSON keys the page renders in a section of its own; any other is shown as JSON.
KNOWN_KEYS = frozenset(
    {
        "neverRunning",
        "wayDown",
        "region",
        "priceUnit",
        "priceBasis",
        "nodePool",
        "otherNodePools",
        "instanceTypes",
        "pods",
        "workloads",
        "daemonSets",
        "fleet",
        "limits",
        "scenarios",
        "currentLimits",
        "findings",
        "optimal",
        "gap",
        "recommendation",
        "prices",
        "warnings",
        "notes",
    }
)
# Events of the way down listed one row each, and nodes at rest with the reason each stays.
MAX_WAY_DOWN_ROWS = 300
# Marker and colour per kind of Karpenter command on the way-down timeline; the HPA's steps are
# drawn as the pods' own steps.
COMMAND_STYLE = {
    "emptiness": (PALETTE[2], "v"),
    "single-node consolidation": (PALETTE[1], "D"),
    "multi-node consolidation": (PALETTE[3], "s"),
}
OTHER_COMMAND_STYLE = (PALETTE[7], "X")
# Decimals shown per op; the tests hold the page to the JSON within these.
DECIMALS = {"value": 4, "cores": 3, "gib": 2, "percent": 1, "sum": 4}

Path = tuple[str | int, ...]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem auto;max-width:72rem;
color:#111;background:#fff;line-height:1.4;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th,td{border:1px solid #bbb;padding:.15rem .4rem;text-align:left;vertical-align:top}
td.n,th.n{text-align:right}
#attention{border:2px solid #D55E00;padding:.5rem 1rem;background:#fff8f0}
#attention.calm{border-color:#009E73;background:#f3fbf8}
figure{margin:.5rem 0}figcaption{font-size:.85rem;color:#333}
svg{max-width:100%;height:auto}
details{margin:.3rem 0}pre{white-space:pre-wrap;font-size:.8rem}
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _format(value: float, decimals: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _at(data: Any, path: Path) -> Any:
    for key in path:
        data = data[key]
    return data


def _fig(
    data: Mapping[str, Any],
    path: Path,
    op: str = "value",
    *,
    of: Path | None = None,
    where: Mapping[str, Any] | None = None,
    field: str | None = None,
    tag: str = "span",
    cls: str = "",
) -> str:
    """A figure of the JSON as HTML: its text, and where it comes from (see the module docstring)."""
    value = _at(data, path)
    attributes = f' data-json="{_esc(json.dumps(list(path)))}" data-op="{op}"'
    if op == "value":
        text = value if isinstance(value, str) else _format(value, DECIMALS["value"]) if value is not None else "—"
    elif op == "cores":
        text = _format(value / 1000, DECIMALS["cores"])
    elif op == "gib":
        text = _format(value / 1024, DECIMALS["gib"])
    elif op == "percent":
        assert of is not None
        attributes += f' data-of="{_esc(json.dumps(list(of)))}"'
        total = _at(data, of)
        text = _format(100.0 * value / total if total else 0.0, DECIMALS["percent"])
    elif op in ("count", "sum"):
        assert where is not None
        attributes += f' data-where="{_esc(json.dumps(dict(where), sort_keys=True))}"'
        matching = [item for item in value if all(item.get(k) == v for k, v in where.items())]
        if op == "count":
            text = str(len(matching))
        else:
            assert field is not None
            attributes += f' data-field="{_esc(field)}"'
            text = _format(sum(item[field] for item in matching), DECIMALS["sum"])
    elif op == "json":
        text = json.dumps(value, indent=1, sort_keys=True)
    else:
        raise ValueError(f"unknown figure op {op!r}")
    klass = f' class="{cls}"' if cls else ""
    return f"<{tag}{klass}{attributes}>{_esc(text)}</{tag}>"


def _bound(value: int) -> str:
    """A bound of the page itself (not a figure of the plan), marked as such."""
    return f'<span data-bound="{value}">{value}</span>'


def _table(caption: str, header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool]) -> str:
    head = "".join(
        f'<th scope="col"{" class=n" if n else ""}>{_esc(h)}</th>' for h, n in zip(header, numeric, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if n else ''}>{cell}</td>" for cell, n in zip(row, numeric, strict=True))
        + "</tr>"
        for row in rows
    )
    return f"<table><caption>{_esc(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- charts -------------------------------------------------------------------------------------


def _svg(figure: Any, chart_id: str, title: str, tooltips: Mapping[str, str] | None = None) -> str:
    """The figure as inline SVG: deterministic (a fixed hash salt per chart, no date), its title
    as the SVG's accessible name, and a hover tooltip (`<title>`) on every artist whose gid
    `tooltips` names."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": chart_id, "svg.fonttype": "none", "svg.image_inline": True}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    namespace = "http://www.w3.org/2000/svg"
    ElementTree.register_namespace("", namespace)
    ElementTree.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ElementTree.fromstring(buffer.getvalue())
    root.set("id", chart_id)
    root.set("role", "img")
    root.set("aria-labelledby", f"{chart_id}-title")
    name = ElementTree.Element(f"{{{namespace}}}title", {"id": f"{chart_id}-title"})
    name.text = title
    root.insert(0, name)
    for element in root.iter():
        gid = element.get("id")
        if tooltips and gid is not None and gid in tooltips:
            tip = ElementTree.Element(f"{{{namespace}}}title")
            tip.text = tooltips[gid]
            element.insert(0, tip)
    # Metadata matplotlib writes (its name and version) carries nothing a reader needs.
    for metadata in root.findall(f"{{{namespace}}}metadata"):
        root.remove(metadata)
    text = ElementTree.tostring(root, encoding="unicode")
    return re.sub(r">\s+<", "><", text)


def _new_figure(width: float, height: float, rows: int = 1, columns: int = 1) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=96, layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    return figure, axes


def _style(axes: Any, title: str, xlabel: str, ylabel: str, from_zero: bool = False) -> None:
    from matplotlib.ticker import MaxNLocator

    if from_zero:
        axes.set_ylim(bottom=0)
        if ylabel in ("pods", "nodes"):
            axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title(title, fontsize=10)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, color="#ddd", linewidth=0.6)
    axes.set_axisbelow(True)


def _current_limit(data: Mapping[str, Any], key: str) -> float | None:
    """The NodePool's current limit on `key` in cores or GiB, or None when it sets none."""
    current = data.get("currentLimits")
    if not current or key not in current.get("spec", {}):
        return None
    value = current["spec"][key]
    if key == "cpu":
        return float(parse_quantity(value, "currentLimits.spec.cpu", CPU_FORMS))
    return float(parse_quantity(value, "currentLimits.spec.memory", MEMORY_FORMS) / 2**30)


def _limit_lines(axes: Any, data: Mapping[str, Any], key: str, vertical: bool) -> None:
    line = axes.axvline if vertical else axes.axhline
    values = data["limits"].get("values")
    scale = 1000 if key == "cpu" else 1024
    if values:
        line(values[key] / scale, color=LIMIT_COLOUR, linestyle="--", linewidth=1.5, label="planned limit")
    current = _current_limit(data, key)
    if current is not None:
        line(current, color=CURRENT_COLOUR, linestyle=":", linewidth=1.5, label="current limit")


# --- sections -----------------------------------------------------------------------------------


def _attention(data: Mapping[str, Any]) -> str:
    items: list[str] = []
    rec = data["recommendation"]
    never = data.get("neverRunning") or []
    if never:
        items.append(
            f"<li><strong>Pods left pending:</strong> "
            f"{_fig(data, ('neverRunning',), 'sum', where={}, field='pods')} pods of "
            f"{_fig(data, ('neverRunning',), 'count', where={})} workloads never run; they are left out of "
            "the plan, and Karpenter leaves them pending.</li>"
        )
    for index in range(len(never)):
        base_never: Path = ("neverRunning", index)
        items.append(
            f"<li><strong>Never runs:</strong> {_fig(data, (*base_never, 'pods'))} pods of "
            f"{_fig(data, (*base_never, 'workload'))}: {_fig(data, (*base_never, 'reason'))}</li>"
        )
    items.append(f"<li><strong>Recommendation:</strong> {_fig(data, ('recommendation', 'summary'))}</li>")
    if data["limits"].get("spec"):
        spec = " and ".join(
            f"{key} {_fig(data, ('limits', 'spec', key))} (set by the "
            f"{_fig(data, ('limits', 'bindingScenario', key))} scenario)"
            for key in data["limits"]["spec"]
        )
        items.append(f"<li><strong>Planned limits</strong> of NodePool {_fig(data, ('nodePool',))}: {spec}</li>")
    fleet = data["fleet"]
    for index, _ in enumerate(fleet["pending"]):
        items.append(
            f"<li><strong>Pending in the fleet:</strong> {_fig(data, ('fleet', 'pending', index, 'count'))} pods of "
            f"{_fig(data, ('fleet', 'pending', index, 'workload'))}: "
            f"{_fig(data, ('fleet', 'pending', index, 'reason'))}</li>"
        )
    for name, scenario in data["scenarios"].items():
        for index, _ in enumerate(scenario["withoutLimits"]["pending"]):
            base: Path = ("scenarios", name, "withoutLimits", "pending", index)
            items.append(
                f"<li><strong>Pending even without limits</strong> ({_esc(name)}): "
                f"{_fig(data, (*base, 'count'))} pods of {_fig(data, (*base, 'workload'))}: "
                f"{_fig(data, (*base, 'reason'))}</li>"
            )
    current = data.get("currentLimits")
    if current is not None:
        if current["keepsDecisions"]:
            items.append("<li>The NodePool's current limits change none of Karpenter's decisions.</li>")
        for scenario, changes in current["changes"].items():
            for index, _ in enumerate(changes):
                text = _fig(data, ("currentLimits", "changes", scenario, index, "text"))
                items.append(
                    f"<li><strong>The current limits change a decision</strong> ({_esc(scenario)}): {text}</li>"
                )
    for index, finding in enumerate(data["findings"]):
        for scenario, changes in finding["changes"].items():
            for change_index, _ in enumerate(changes):
                text = _fig(data, ("findings", index, "changes", scenario, change_index, "text"))
                subject = _fig(data, ("findings", index, "subject"))
                items.append(f"<li><strong>Finding</strong> ({subject}, {_esc(scenario)}): {text}</li>")
    for index, warning in enumerate(data["warnings"]):
        names = ", ".join(
            _fig(data, ("warnings", index, "workloads", n)) for n in range(min(len(warning["workloads"]), 20))
        )
        items.append(f"<li><strong>Warning:</strong> {_fig(data, ('warnings', index, 'message'))}: {names}</li>")
    for index, _ in enumerate(data["notes"]):
        items.append(f"<li>{_fig(data, ('notes', index))}</li>")
    items += _way_down_attention(data)
    below = data["limits"].get("below", {})
    for key, found in below.items():
        for index, _ in enumerate(found["changes"]):
            text = _fig(data, ("limits", "below", key, "changes", index, "text"))
            items.append(f"<li>With a smaller {_esc(key)} limit ({_esc(found['scenario'])}): {text}</li>")
    way_down = data.get("wayDown")
    needs = bool(fleet["pending"] or data["findings"] or data["warnings"] or never)
    needs = needs or bool(way_down and (way_down["limitsRaised"] or _current_blocks(way_down)))
    needs = needs or (current is not None and not current["keepsDecisions"])
    needs = needs or rec["chosen"]["kind"] != "current"
    calm = "" if needs else ' class="calm"'
    heading = "What needs attention" if needs else "Nothing needs attention"
    return f'<section id="attention"{calm}><h2>{heading}</h2><ul>{"".join(items)}</ul></section>'


def _current_blocks(way_down: Mapping[str, Any]) -> bool:
    """Whether the NodePool's current limits make the way down decide otherwise."""
    current = way_down.get("current")
    return current is not None and not current["keepsDecisions"]


def _way_down_attention(data: Mapping[str, Any]) -> list[str]:
    """What the way down asks of the limits: raised for a replacement, or current ones that block."""
    way_down = data.get("wayDown")
    if not way_down:
        return []
    items = []
    raised = way_down["limitsRaised"]
    if raised:
        shown = " and ".join(
            f"{_esc(key)} to {_fig(data, ('wayDown', 'limitsRaised', key), 'cores' if key == 'cpu' else 'gib')} "
            f"{'cores' if key == 'cpu' else 'GiB'}"
            for key in sorted(raised)
        )
        items.append(
            f"<li><strong>Limits raised for the way down:</strong> {shown}, so that a replacement can launch "
            "while the nodes it replaces still run.</li>"
        )
    current = way_down["current"]
    if current is not None:
        if current["keepsDecisions"]:
            items.append(
                "<li>On the way down, the NodePool's current limits change none of Karpenter's decisions.</li>"
            )
        for index in range(min(len(current["changes"]), MAX_WAY_DOWN_ROWS)):
            text = _fig(data, ("wayDown", "current", "changes", index))
            items.append(f"<li><strong>The current limits block consolidation on the way down:</strong> {text}</li>")
    return items


def _pods_at(way_down: Mapping[str, Any], run: Mapping[str, Any], seconds: int) -> int:
    """Pods running after `seconds`: those at rest plus those the HPA deletes later."""
    later = sum(e["podsDeleted"] for e in run["timeline"] if e["kind"] == "scale-in" and e["time"] > seconds)
    return int(sum(way_down["podsAtRest"].values()) + later)


def _way_down_chart(data: Mapping[str, Any]) -> str:
    way_down = data["wayDown"]
    run = way_down["planned"]
    timeline = run["timeline"]
    unit = data["priceUnit"]
    end = max([run["atRest"]["seconds"], *(e["time"] for e in timeline)])
    times = sorted({0, *(e["time"] for e in timeline)})
    pods = [_pods_at(way_down, run, t) for t in times]
    node_times, node_counts, costs = [0], [run["start"]["nodes"]], [run["start"]["cost"]]
    for event in timeline:
        if event["kind"] != "scale-in":
            node_times.append(event["time"])
            node_counts.append(event["nodes"])
            costs.append(event["cost"])
    figure, axes = _new_figure(9, 6.4, 3, 1)
    pods_ax, nodes_ax, cost_ax = axes[0][0], axes[1][0], axes[2][0]
    pods_ax.plot([*times, end], [*pods, pods[-1]], drawstyle="steps-post", color=PALETTE[0], label="pods")
    pods_ax.plot(
        [e["time"] for e in timeline if e["kind"] == "scale-in"],
        [_pods_at(way_down, run, e["time"]) for e in timeline if e["kind"] == "scale-in"],
        linestyle="none",
        marker="o",
        color=PALETTE[0],
        label="HPA scale-in",
    )
    _style(pods_ax, "Pods", "time (seconds)", "pods", from_zero=True)
    nodes_ax.plot(
        [*node_times, end], [*node_counts, node_counts[-1]], drawstyle="steps-post", color=PALETTE[1], label="nodes"
    )
    cost_ax.plot([*node_times, end], [*costs, costs[-1]], drawstyle="steps-post", color=PALETTE[4], label="cost")
    optimal = way_down["optimal"]
    if optimal is not None:
        cost_ax.axhline(optimal["cost"], color=PALETTE[2], linestyle="--", linewidth=1.5, label="optimal at rest")
    seen: set[str] = set()
    for event in timeline:
        if event["kind"] == "scale-in":
            continue
        colour, marker = COMMAND_STYLE.get(event["kind"], OTHER_COMMAND_STYLE)
        label = event["kind"] + (" (replace)" if event["launched"] is not None else "")
        for ax, value in ((nodes_ax, event["nodes"]), (cost_ax, event["cost"])):
            ax.axvline(event["time"], color=colour, linestyle=":", linewidth=1)
            ax.plot(
                [event["time"]],
                [value],
                linestyle="none",
                marker=marker,
                markersize=7,
                color=colour,
                markerfacecolor="white" if event["launched"] is not None else colour,
                label=label if (ax is nodes_ax and label not in seen) else None,
            )
        seen.add(label)
    _style(nodes_ax, "Nodes, and Karpenter's commands", "time (seconds)", "nodes", from_zero=True)
    _style(cost_ax, "Cost of the fleet", "time (seconds)", unit, from_zero=True)
    for ax in (pods_ax, nodes_ax, cost_ax):
        ax.set_xlim(0, end * 1.04 + 1)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure, "chart-way-down", "The way down: pods, nodes and cost over time")


def _event_cells(data: Mapping[str, Any], base: Path, event: Mapping[str, Any]) -> list[str]:
    if event["kind"] == "scale-in":
        what = (
            f"HPA deletes {_fig(data, (*base, 'podsDeleted'))} pods of {_fig(data, (*base, 'workload'))} "
            f"({_fig(data, (*base, 'workloadPods'))} left)"
        )
        return [_fig(data, (*base, "time")), "HPA scale-in", what, "—", "—"]
    removed = ", ".join(_fig(data, (*base, "removed", i)) for i in range(len(event["removed"])))
    what = f"{_fig(data, (*base, 'reason'))}: removes {removed}"
    if event["launched"] is not None:
        what += (
            f" for one {_fig(data, (*base, 'launched', 'capacityType'))} "
            f"{_fig(data, (*base, 'launched', 'instanceType'))} at {_fig(data, (*base, 'launched', 'price'))}"
        )
    what += f"; {_fig(data, (*base, 'podsMoved'))} pods moved"
    return [
        _fig(data, (*base, "time")),
        _fig(data, (*base, "kind")),
        what,
        _fig(data, (*base, "nodes")),
        _fig(data, (*base, "cost")),
    ]


def _way_down(data: Mapping[str, Any]) -> str:
    """The way down: its timeline chart and table, the fleet at rest against the optimal one, why
    each node stays, and what the planned and current limits do."""
    way_down = data.get("wayDown")
    if not way_down:
        return ""
    unit = data["priceUnit"]
    run = way_down["planned"]
    base_run: Path = ("wayDown", "planned")
    svg = _way_down_chart(data)
    timeline = run["timeline"]
    rows = [
        _event_cells(data, (*base_run, "timeline", i), timeline[i])
        for i in range(min(len(timeline), MAX_WAY_DOWN_ROWS))
    ]
    more = ""
    if len(timeline) > MAX_WAY_DOWN_ROWS:
        more = f" The table lists the first {_bound(MAX_WAY_DOWN_ROWS)} events."
    table = _table(
        "The way down, event by event (nodes and cost after each of Karpenter's commands)",
        ["time (s)", "who", "what", "nodes", f"cost ({unit})"],
        rows,
        [True, False, False, True, True],
    )
    targets = (
        ", ".join(f"{_esc(name)} to {_fig(data, ('wayDown', 'targets', name))}" for name in way_down["targets"])
        or "no HPA"
    )
    rest = (*base_run, "atRest")
    rest_rows = [
        [
            "Karpenter at rest",
            _fig(data, (*rest, "nodes")),
            _fig(data, (*rest, "cost")),
        ]
    ]
    optimal = way_down["optimal"]
    gap = " The plan holds no optimal fleet for the pods at rest."
    if optimal is not None:
        rest_rows.append(
            [
                "optimal for the same pods",
                _fig(data, ("wayDown", "optimal", "nodes")),
                _fig(data, ("wayDown", "optimal", "cost")),
            ]
        )
        gap_cost = run["atRest"]["cost"] - optimal["cost"]
        gap = (
            f" At rest the fleet costs {_fig(data, (*rest, 'cost'))} {_esc(unit)} on {_fig(data, (*rest, 'nodes'))} "
            f"nodes; the optimal fleet for the same pods {_fig(data, ('wayDown', 'optimal', 'cost'))} "
            f"{_esc(unit)} on {_fig(data, ('wayDown', 'optimal', 'nodes'))} nodes"
            + (": Karpenter keeps more than it needs." if gap_cost > 1e-9 else ": no gap.")
        )
    rest_table = _table(
        f"The fleet at rest ({unit})", ["fleet", "nodes", f"cost ({unit})"], rest_rows, [False, True, True]
    )
    stays = list(run["stays"])
    stay_rows = [[_esc(name), _fig(data, (*base_run, "stays", name))] for name in stays[:MAX_WAY_DOWN_ROWS]]
    stay_table = _table("Nodes left, and why Karpenter keeps each", ["node", "why it stays"], stay_rows, [False, False])
    limits = run["limits"]
    limit_text = ""
    if limits:
        limit_text = (
            f" It runs under limits of {_fig(data, (*base_run, 'limits', 'cpu'), 'cores')} cores and "
            f"{_fig(data, (*base_run, 'limits', 'memory'), 'gib')} GiB"
            + (" (raised for it)." if way_down["limitsRaised"] else ".")
            if "cpu" in limits and "memory" in limits
            else ""
        )
    current = way_down["current"]
    current_text = ""
    if current is not None:
        if current["keepsDecisions"]:
            current_text = "<p>Under the NodePool's current limits the way down decides the same.</p>"
        else:
            changes = "".join(
                f"<li>{_fig(data, ('wayDown', 'current', 'changes', i))}</li>"
                for i in range(min(len(current["changes"]), MAX_WAY_DOWN_ROWS))
            )
            current_text = (
                "<p>Under the NodePool's current limits the way down decides otherwise: they block a "
                f"replacement or a consolidation.</p><ul>{changes}</ul><p>At rest under them: "
                f"{_fig(data, ('wayDown', 'current', 'atRest', 'nodes'))} nodes, "
                f"{_fig(data, ('wayDown', 'current', 'atRest', 'cost'))} {_esc(unit)}.</p>"
            )
    title = "The way down: pods, nodes and cost over time"
    caption = (
        f"Load drops at the start; the HPAs scale in ({targets}); from "
        f"{_fig(data, (*base_run, 'start', 'nodes'))} nodes at {_fig(data, (*base_run, 'start', 'cost'))} "
        f"{_esc(unit)} to {_fig(data, (*rest, 'nodes'))} nodes after {_fig(data, (*rest, 'seconds'))} s. Dots mark "
        "the HPA's steps; dotted vertical lines and markers Karpenter's commands (hollow: a replacement is "
        f"launched); the dashed line is the optimal fleet's cost at rest.{limit_text}{gap}{more}"
    )
    return (
        f'<section id="way-down"><h2>{_esc(title)}</h2><figure>{svg}<figcaption>{caption}</figcaption></figure>'
        f"<details open><summary>The figures as tables</summary>{table}{rest_table}{stay_table}</details>"
        f"{current_text}</section>"
    )


def _ramp(data: Mapping[str, Any]) -> str:
    name = next((n for n in RAMP_SCENARIOS if data["scenarios"].get(n, {}).get("timeline")), None)
    if name is None:
        return '<section id="ramp"><h2>The ramp</h2><p>The plan holds no batch timeline.</p></section>'
    timeline = data["scenarios"][name]["timeline"]
    seconds = [point["seconds"] for point in timeline]
    figure, axes = _new_figure(9, 5.6, 2, 2)
    pods, nodes, cpu, memory = axes[0][0], axes[0][1], axes[1][0], axes[1][1]
    for key, label, colour, marker in (
        ("podsWanted", "wanted", PALETTE[0], "o"),
        ("podsPlaced", "placed", PALETTE[2], "s"),
        ("podsPending", "pending", PALETTE[5], "^"),
    ):
        pods.plot(seconds, [p[key] for p in timeline], drawstyle="steps-post", marker=marker, color=colour, label=label)
    _style(pods, "Pods", "time (seconds)", "pods", from_zero=True)
    pods.legend(fontsize=8)
    nodes.plot(seconds, [p["nodeCount"] for p in timeline], drawstyle="steps-post", marker="o", color=PALETTE[1])
    _style(nodes, "Nodes", "time (seconds)", "nodes", from_zero=True)
    cpu.plot(
        seconds, [p["capacity"]["cpu"] / 1000 for p in timeline], drawstyle="steps-post", marker="o", color=PALETTE[0]
    )
    _limit_lines(cpu, data, "cpu", vertical=False)
    _style(cpu, "cpu counted against the limits", "time (seconds)", "cores", from_zero=True)
    memory.plot(
        seconds,
        [p["capacity"]["memory"] / 1024 for p in timeline],
        drawstyle="steps-post",
        marker="o",
        color=PALETTE[4],
    )
    _limit_lines(memory, data, "memory", vertical=False)
    _style(memory, "memory counted against the limits", "time (seconds)", "GiB", from_zero=True)
    if cpu.get_legend_handles_labels()[0]:
        cpu.legend(fontsize=8)
    title = f"The {name} scenario, batch by batch"
    svg = _svg(figure, "chart-ramp", title)
    base: Path = ("scenarios", name, "timeline")
    rows = [
        [
            _fig(data, (*base, i, "seconds")),
            _fig(data, (*base, i, "podsWanted")),
            _fig(data, (*base, i, "podsPlaced")),
            _fig(data, (*base, i, "podsPending")),
            _fig(data, (*base, i, "nodeCount")),
            _fig(data, (*base, i, "capacity", "cpu"), "cores"),
            _fig(data, (*base, i, "capacity", "memory"), "gib"),
        ]
        for i in range(len(timeline))
    ]
    table = _table(
        "The ramp's batches",
        ["time (s)", "pods wanted", "placed", "pending", "nodes", "cpu (cores)", "memory (GiB)"],
        rows,
        [True] * 7,
    )
    return (
        f'<section id="ramp"><h2>{_esc(title)}</h2><figure>{svg}<figcaption>'
        f"{_fig(data, ('scenarios', name, 'description'))}. The dashed line is the planned limit, the dotted one "
        "the NodePool's current limit.</figcaption></figure><details><summary>The figures as a table</summary>"
        f"{table}</details></section>"
    )


def _scenarios(data: Mapping[str, Any]) -> str:
    scenarios = data["scenarios"]
    names = list(scenarios)
    binding = data["limits"].get("bindingScenario", {})
    figure, axes = _new_figure(9, 1.2 + 0.45 * len(names), 1, 2)
    labels = [name + (" ★" if name in binding.values() else "") for name in names]
    for ax, key, unit, scale, colour in (
        (axes[0][0], "cpu", "cores", 1000, PALETTE[0]),
        (axes[0][1], "memory", "GiB", 1024, PALETTE[4]),
    ):
        values = [scenarios[name]["capacity"][key] / scale for name in names]
        bars = ax.barh(labels, values, color=colour)
        for bar, name in zip(bars, names, strict=True):
            if binding.get(key) == name:
                bar.set_hatch("//")
                bar.set_edgecolor("#000")
        _limit_lines(ax, data, key, vertical=True)
        ax.invert_yaxis()
        _style(ax, f"{key} counted against the limits", unit, "scenario")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="lower right")
    title = "Scenarios against the limits"
    svg = _svg(figure, "chart-scenarios", title)
    rows = []
    for name in names:
        base: Path = ("scenarios", name)
        sets = [key for key, value in binding.items() if value == name]
        rows.append(
            [
                _esc(name),
                _fig(data, (*base, "description")),
                _fig(data, (*base, "pods")),
                _fig(data, (*base, "nodeCount")),
                _fig(data, (*base, "capacity", "cpu"), "cores"),
                _fig(data, (*base, "capacity", "memory"), "gib"),
                _fig(data, (*base, "podsPending")),
                _esc(", ".join(scenarios[name]["overLimits"]) or "none"),
                _esc(" and ".join(sets) or "—"),
            ]
        )
    table = _table(
        "Scenarios under the planned limits",
        ["scenario", "what it simulates", "pods", "nodes", "cpu (cores)", "memory (GiB)", "pending", "over", "sets"],
        rows,
        [False, False, True, True, True, True, True, False, False],
    )
    limits = data["limits"]
    limit_text = ""
    if limits.get("values"):
        limit_text = (
            f" Planned limits: {_fig(data, ('limits', 'values', 'cpu'), 'cores')} cores and "
            f"{_fig(data, ('limits', 'values', 'memory'), 'gib')} GiB (the largest need "
            f"{_fig(data, ('limits', 'minimum', 'cpu'), 'cores')} cores and "
            f"{_fig(data, ('limits', 'minimum', 'memory'), 'gib')} GiB, plus "
            f"{_fig(data, ('limits', 'headroomPercent'))} % headroom)."
        )
    return (
        f'<section id="scenarios"><h2>{title}</h2><figure>{svg}<figcaption>The capacity of the planned '
        "NodePool's nodes at each scenario's end. ★ and hatching mark the scenario that sets a limit; the dashed "
        f"line is the planned limit, the dotted one the current limit.{limit_text}</figcaption></figure>"
        f"<details open><summary>The figures as a table</summary>{table}</details></section>"
    )


def _kinds(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    kinds = {(n["instanceType"], n["capacityType"]) for n in data["fleet"]["nodes"]}
    optimal = data.get("optimal")
    if optimal:
        kinds |= {(g["instanceType"], g["capacityType"]) for g in optimal["groups"]}
    return sorted(kinds)


def _fleet(data: Mapping[str, Any]) -> str:
    unit = data["priceUnit"]
    optimal = data.get("optimal")
    kinds = _kinds(data)
    figure, axes = _new_figure(9, 2.6, 1, 2)
    types, costs = axes[0][0], axes[0][1]
    fleets = ["Karpenter"] + (["optimal"] if optimal else [])
    left = [0.0] * len(fleets)
    for index, (instance_type, capacity_type) in enumerate(kinds):
        counts = [
            sum(
                1
                for n in data["fleet"]["nodes"]
                if (n["instanceType"], n["capacityType"]) == (instance_type, capacity_type)
            )
        ]
        if optimal:
            counts.append(
                sum(
                    g["count"]
                    for g in optimal["groups"]
                    if (g["instanceType"], g["capacityType"]) == (instance_type, capacity_type)
                )
            )
        colour = PALETTE[index % len(PALETTE)]
        hatch = "xx" if capacity_type == "spot" else None
        types.barh(fleets, counts, left=left, color=colour, hatch=hatch, label=f"{instance_type} {capacity_type}")
        left = [a + b for a, b in zip(left, counts, strict=True)]
    types.invert_yaxis()
    _style(types, "Nodes by instance type and capacity type", "nodes", "fleet")
    if len(kinds) <= 12:
        types.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3)
    cost_labels = ["Karpenter"]
    cost_values = [data["fleet"]["cost"]]
    if optimal:
        cost_labels += ["optimal", "lower bound"]
        cost_values += [optimal["cost"], optimal["lowerBound"]["cost"]]
    costs.barh(cost_labels, cost_values, color=[PALETTE[0], PALETTE[2], "#999999"][: len(cost_values)])
    costs.invert_yaxis()
    _style(costs, "Cost", unit, "fleet")
    title = "The fleet: Karpenter's against the optimal one"
    svg = _svg(figure, "chart-fleet", title)
    rows = []
    for instance_type, capacity_type in kinds:
        where = {"instanceType": instance_type, "capacityType": capacity_type}
        row = [
            _esc(instance_type),
            _esc(capacity_type),
            _fig(data, ("fleet", "nodes"), "count", where=where),
            _fig(data, ("optimal", "groups"), "sum", where=where, field="count") if optimal else "—",
        ]
        rows.append(row)
    table = _table(
        "Nodes by instance type",
        ["instance type", "capacity type", "Karpenter", "optimal"],
        rows,
        [False, False, True, True],
    )
    cost_rows = [["Karpenter", _fig(data, ("fleet", "nodeCount")), _fig(data, ("fleet", "cost"))]]
    if optimal:
        cost_rows.append(["optimal", _fig(data, ("optimal", "nodeCount")), _fig(data, ("optimal", "cost"))])
        cost_rows.append(
            [
                "lower bound",
                _fig(data, ("optimal", "lowerBound", "nodes")),
                _fig(data, ("optimal", "lowerBound", "cost")),
            ]
        )
    cost_table = _table(f"Cost ({unit})", ["fleet", "nodes", f"cost ({unit})"], cost_rows, [False, True, True])
    gap = ""
    if data.get("gap"):
        gap = (
            f" Karpenter's fleet is {_fig(data, ('gap', 'nodes'))} nodes and {_fig(data, ('gap', 'cost'))} "
            f"{_esc(unit)} above the optimal one ({_fig(data, ('gap', 'percent'))} %)."
        )
    if optimal:
        gap += f" The optimal fleet is {_fig(data, ('optimal', 'status'))}."
    placed = (
        f" Karpenter's fleet places {_fig(data, ('fleet', 'podsPlaced'))} pods and leaves "
        f"{_fig(data, ('fleet', 'podsPending'))} pending."
    )
    return (
        f'<section id="fleet"><h2>{title}</h2><figure>{svg}<figcaption>The fleet at peak with the rollout surge, '
        f"under the planned limits; spot nodes are cross-hatched.{placed}{gap}</figcaption></figure>"
        f"<details open><summary>The figures as tables</summary>{table}{cost_table}</details></section>"
    )


def _node_tip(node: Mapping[str, Any]) -> str:
    workloads = ", ".join(f"{name} {count}" for name, count in node["podsByWorkload"].items())
    return (
        f"{node['name']}: {node['instanceType']} {node['capacityType']}, {node['pods']} pods"
        + (f" ({workloads})" if workloads else "")
        + f"; cpu {node['requested']['cpu']}/{node['allocatable']['cpu']} m, "
        f"memory {node['requested']['memory']}/{node['allocatable']['memory']} MiB, "
        f"pod slots {node['requested']['pods']}/{node['allocatable']['pods']}"
    )


def _nodes(data: Mapping[str, Any]) -> str:
    nodes = data["fleet"]["nodes"]
    if not nodes:
        return '<section id="nodes"><h2>Nodes</h2><p>The fleet has no node.</p></section>'
    drawn = nodes[:MAX_NODE_BARS]
    figure, axes = _new_figure(9, 1.0 + 0.22 * len(drawn), 1, 3)
    names = [node["name"] for node in drawn]
    tooltips: dict[str, str] = {}
    for ax, key, label, colour in zip(
        axes[0],
        ("cpu", "memory", "pods"),
        ("cpu", "memory", "pod slots"),
        (PALETTE[0], PALETTE[4], PALETTE[2]),
        strict=True,
    ):
        values = [
            100.0 * node["requested"][key] / node["allocatable"][key] if node["allocatable"][key] else 0.0
            for node in drawn
        ]
        ax.barh(range(len(drawn)), [100.0] * len(drawn), color="#eeeeee")
        bars = ax.barh(range(len(drawn)), values, color=colour)
        for index, bar in enumerate(bars):
            gid = f"node-{key}-{index}"
            bar.set_gid(gid)
            tooltips[gid] = _node_tip(drawn[index])
        ax.set_xlim(0, 100)
        ax.set_yticks(range(len(drawn)), names if key == "cpu" else [""] * len(drawn), fontsize=7)
        ax.invert_yaxis()
        _style(ax, f"{label} requested", "percent of allocatable", "node" if key == "cpu" else "")
    title = "Each node's use of cpu, memory and pod slots"
    svg = _svg(figure, "chart-nodes", title, tooltips)
    more = ""
    if len(nodes) > MAX_NODE_BARS:
        more = (
            f" The chart draws the first {_bound(MAX_NODE_BARS)} of "
            f"{_fig(data, ('fleet', 'nodes'), 'count', where={})} nodes; the table and the JSON list more."
        )
    rows = []
    for index in range(min(len(nodes), MAX_NODE_ROWS)):
        base: Path = ("fleet", "nodes", index)
        rows.append(
            [
                _fig(data, (*base, "name")),
                _fig(data, (*base, "instanceType")),
                _fig(data, (*base, "capacityType")),
                _fig(data, (*base, "zone")),
                _fig(data, (*base, "price")),
                _fig(data, (*base, "pods")),
                _fig(data, (*base, "requested", "cpu"), "percent", of=(*base, "allocatable", "cpu")),
                _fig(data, (*base, "requested", "memory"), "percent", of=(*base, "allocatable", "memory")),
                _fig(data, (*base, "requested", "pods"), "percent", of=(*base, "allocatable", "pods")),
            ]
        )
    if len(nodes) > MAX_NODE_ROWS:
        more += f" The table lists the first {_bound(MAX_NODE_ROWS)}."
    table = _table(
        "Nodes (requests over allocatable, DaemonSets included)",
        [
            "node",
            "instance type",
            "capacity",
            "zone",
            f"price ({data['priceUnit']})",
            "pods",
            "cpu %",
            "memory %",
            "pod slots %",
        ],
        rows,
        [False, False, False, False, True, True, True, True, True],
    )
    return (
        f'<section id="nodes"><h2>{title}</h2><figure>{svg}<figcaption>Requests (DaemonSets included) over '
        "allocatable, as eks-node-viewer shows them; hover over a bar for the node's type and pods."
        f"{more}</figcaption></figure><details><summary>The figures as a table</summary>{table}</details></section>"
    )


def _extra(data: Mapping[str, Any]) -> str:
    """Sections the page has no chart for, as JSON, so that nothing the plan says is left out."""
    parts = [
        f"<details><summary>{_esc(key)}</summary>{_fig(data, (key,), 'json', tag='pre')}</details>"
        for key in data
        if key not in KNOWN_KEYS and data[key] not in (None, [], {})
    ]
    return f'<section id="more"><h2>More of the plan</h2>{"".join(parts)}</section>' if parts else ""


def render_html(data: Mapping[str, Any]) -> str:
    """The plan's JSON (`plan_data`) as one self-contained HTML page (see the module docstring)."""
    title = f"Capacity plan: NodePool {data['nodePool']} in {data['region']}"
    intro = (
        f"<p>{_fig(data, ('pods', 'peak'))} pods at peak (HPA maxReplicas) and {_fig(data, ('pods', 'surge'))} "
        f"rollout surge: {_fig(data, ('pods', 'withSurge'))} pods, {_fig(data, ('workloads',), 'count', where={})} "
        f"workloads, on {_fig(data, ('instanceTypes',), 'count', where={})} instance types. Costs in {_fig(data, ('priceUnit',))}.</p>"
    )
    body = "".join(
        [
            f"<h1>{_esc(title)}</h1>",
            intro,
            _attention(data),
            _ramp(data),
            _scenarios(data),
            _fleet(data),
            _nodes(data),
            _way_down(data),
            _extra(data),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>{body}</body></html>\n"
    )
