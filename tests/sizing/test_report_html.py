"""The HTML report: rendered from the plan's JSON alone, every figure held to the JSON, each chart
titled with units and a table, self-contained, deterministic and bounded. (A real browser loads
it in test_report_html_browser.py.)"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.cli import main
from sizing.kube.objects import read_objects
from sizing.planning import report_html
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import plan_capacity
from sizing.planning.report import plan_data
from sizing.planning.report_html import MAX_NODE_BARS, MAX_NODE_ROWS, render_html
from tests.sizing.html_figures import figure_paths, mismatches, parse

HERE = Path(__file__).parent
ATTENTION = HERE / "needs_attention.yaml"
PROJECT_DIR = HERE.parents[1]
SMALL = PROJECT_DIR / "docs" / "examples" / "pods-that-never-schedule.yaml"
CHARTS = ("chart-ramp", "chart-scenarios", "chart-fleet", "chart-nodes")


@pytest.fixture(scope="module")
def attention():
    plan = plan_capacity(plan_input_from_objects(read_objects([("attention", ATTENTION.read_text())])))
    data = json.loads(json.dumps(plan_data(plan)))
    return plan, data, render_html(data)


def test_every_figure_of_the_page_is_the_jsons(attention):
    _, data, page = attention
    assert mismatches(data, page) == []
    paths = figure_paths(page)
    for path in [
        ("recommendation", "summary"),
        ("limits", "spec", "cpu"),
        ("limits", "spec", "memory"),
        ("limits", "values", "cpu"),
        ("fleet", "cost"),
        ("fleet", "nodeCount"),
        ("optimal", "cost") if data["optimal"] else ("fleet", "podsPending"),
        ("fleet", "pending", 0, "count"),
        ("findings", 0, "changes", "peak", 0, "text"),
        ("scenarios", "rollout", "capacity", "cpu"),
    ]:
        assert path in paths, path


def test_the_check_finds_a_wrong_figure_and_a_number_from_nowhere(attention):
    """The checker itself: a figure changed in the page, or a number written without its place, is found."""
    _, data, page = attention
    cost = f"{data['fleet']['cost']:.4f}".rstrip("0").rstrip(".")
    marker = f'data-json="[&quot;fleet&quot;, &quot;cost&quot;]" data-op="value">{cost}<'
    assert marker in page
    assert mismatches(data, page.replace(marker, marker.replace(f">{cost}<", ">9.99<")))
    assert mismatches(data, page.replace("<h2>What needs attention</h2>", "<h2>What needs attention: 42</h2>"))


def test_the_page_shows_what_needs_attention_first(attention):
    plan, data, page = attention
    start = page.index('<section id="attention"')
    assert start < page.index('id="ramp"') < page.index('id="scenarios"') < page.index('id="fleet"')
    assert page.index('id="fleet"') < page.index('id="nodes"')
    attention_html = page[start : page.index("</section>", start)]
    assert "What needs attention" in attention_html
    assert plan.fleet.pending and plan.findings and not plan.current_limits.sufficient
    for text in [
        data["fleet"]["pending"][0]["reason"],
        data["findings"][0]["changes"]["peak"][0]["text"],
        next(iter(data["currentLimits"]["changes"].values()))[0]["text"],
        data["recommendation"]["summary"],
    ]:
        assert report_html._esc(text) in attention_html


def test_a_calm_plan_says_nothing_needs_attention():
    plan = plan_capacity(plan_input_from_objects(read_objects([("small", _calm_objects())])))
    data = json.loads(json.dumps(plan_data(plan)))
    page = render_html(data)
    assert '<section id="attention" class="calm"><h2>Nothing needs attention</h2>' in page
    assert mismatches(data, page) == []


def _calm_objects() -> str:
    text = SMALL.read_text().replace("replicas: 5", "replicas: 3")
    assert "replicas: 3" in text
    return text


def test_each_chart_has_a_title_units_and_a_table(attention):
    _, _, page = attention
    parsed = parse(page)
    assert parsed.chart_ids == list(CHARTS)
    for chart in CHARTS:
        svg = page[page.index(f'id="{chart}"') : page.index("</svg>", page.index(f'id="{chart}"'))]
        assert f'aria-labelledby="{chart}-title"' in page and f'<title id="{chart}-title">' in svg
        section = page[page.rindex("<section", 0, page.index(f'id="{chart}"')) :]
        section = section[: section.index("</section>")]
        assert "<table>" in section and "<caption>" in section, chart
    units = {
        "chart-ramp": ["time (seconds)", "pods", "nodes", "cores", "GiB"],
        "chart-scenarios": ["cores", "GiB"],
        "chart-fleet": ["nodes", "USD/hour"],
        "chart-nodes": ["percent of allocatable"],
    }
    for chart, labels in units.items():
        start = page.index(f'id="{chart}"')
        svg = page[start : page.index("</svg>", start)]
        for label in labels:
            assert f">{label}<" in svg, (chart, label)


def test_hovering_a_node_bar_names_the_node_its_type_and_pods(attention):
    _, data, page = attention
    start = page.index('id="chart-nodes"')
    svg = page[start : page.index("</svg>", start)]
    tips = re.findall(r'<g id="node-cpu-(\d+)"><title>([^<]*)</title>', svg)
    assert len(tips) == len(data["fleet"]["nodes"][:MAX_NODE_BARS])
    for index, tip in tips:
        node = data["fleet"]["nodes"][int(index)]
        assert tip.startswith(f"{node['name']}: {node['instanceType']} {node['capacityType']}, {node['pods']} pods")


def test_the_page_loads_nothing_from_elsewhere(attention):
    _, _, page = attention
    assert "<script" not in page and "<link" not in page and "@import" not in page and "@font-face" not in page
    # Only references inside the page (a marker drawn at many points) are allowed.
    assert not re.search(r"\b(?:src|href)\s*=\s*\"(?!#)", page)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "default-src 'none'" in page


def test_the_page_uses_a_colour_blind_safe_palette(attention):
    _, _, page = attention
    colours = {c.upper() for c in re.findall(r"fill:\s*(#[0-9a-fA-F]{6})", page)}
    allowed = {c.upper() for c in report_html.PALETTE} | {"#FFFFFF", "#EEEEEE", "#999999", "#000000"}
    assert colours and colours <= allowed, colours - allowed


def test_the_same_plan_gives_the_same_bytes_in_another_process(attention, tmp_path):
    _, data, page = attention
    source = tmp_path / "plan.json"
    source.write_text(json.dumps(data))
    code = (
        "import json, sys; from sizing.planning.report_html import render_html; "
        "sys.stdout.write(render_html(json.load(open(sys.argv[1]))))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(source)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONHASHSEED": "7", "PATH": "/usr/bin:/bin", "MPLCONFIGDIR": str(tmp_path / "mpl")},
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout == page


def test_a_section_the_page_does_not_know_is_shown_as_json_and_a_missing_one_is_left_out(attention):
    _, data, _ = attention
    newer = copy.deepcopy(data)
    newer["laterSection"] = {"steps": [{"nodes": 3, "cost": 1.5}]}
    page = render_html(newer)
    assert "<summary>laterSection</summary>" in page and mismatches(newer, page) == []
    older = copy.deepcopy(data)
    for scenario in older["scenarios"].values():
        del scenario["timeline"]
    page = render_html(older)
    assert "The plan holds no batch timeline." in page and "chart-ramp" not in page
    assert mismatches(older, page) == []


def test_many_nodes_are_drawn_and_listed_up_to_a_bound(attention):
    _, data, _ = attention
    many = copy.deepcopy(data)
    node = many["fleet"]["nodes"][0]
    many["fleet"]["nodes"] = [{**node, "name": f"node-{i}"} for i in range(MAX_NODE_ROWS + 20)]
    many["fleet"]["nodeCount"] = len(many["fleet"]["nodes"])
    page = render_html(many)
    assert len(re.findall(r'<g id="node-cpu-\d+">', page)) == MAX_NODE_BARS
    rows = [f for f in parse(page).figures if f.path[:2] == ["fleet", "nodes"] and f.path[-1] == "name"]
    assert len(rows) == MAX_NODE_ROWS
    assert mismatches(many, page) == []
    assert len(page) < 2_000_000


def test_the_ramp_timeline_ends_as_the_scenario_does(attention):
    plan, data, _ = attention
    for name, run in plan.scenarios.items():
        timeline = data["scenarios"][name]["timeline"]
        if name == "disruption":
            continue
        assert timeline, name
        last = timeline[-1]
        usage = run.result.limit_usage()
        assert last["nodeCount"] == len(run.result.nodes)
        assert last["podsPending"] == run.result.pending_count
        assert last["podsPlaced"] == run.result.placed_count
        assert last["capacity"] == {"cpu": usage["cpu"], "memory": usage["memory"]}
        assert [p["seconds"] for p in timeline] == sorted(p["seconds"] for p in timeline)


# --- the command line ------------------------------------------------------------------------------


def test_plan_writes_the_page_from_kubernetes_objects(tmp_path, capsys):
    out = tmp_path / "capacity.html"
    assert main(["plan", str(ATTENTION), "--html", str(out), "--json", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and mismatches(data, page) == []


def test_plan_writes_the_page_from_a_workload_description(tmp_path, capsys):
    description = tmp_path / "workloads.yaml"
    description.write_text(
        "region: us-east-1\nzones: [us-east-1a, us-east-1b]\n"
        "nodePool:\n  requirements:\n    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n"
        "workloads:\n  - {name: api, requests: {cpu: 500m, memory: 512Mi}, maxReplicas: 6}\n"
    )
    out = tmp_path / "plan.html"
    assert main(["plan", str(description), "--html", str(out), "--json", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert mismatches(data, out.read_text()) == []


@pytest.mark.parametrize("where", ["folder", "missing"])
def test_an_html_path_that_cannot_be_written_is_refused_before_planning(tmp_path, capsys, where):
    target = tmp_path if where == "folder" else tmp_path / "nope" / "plan.html"
    assert main(["plan", str(ATTENTION), "--html", str(target)]) != 0
    err = capsys.readouterr().err
    assert "--html" in err and (
        "is a folder" in err if where == "folder" else "cannot be written (No such file or directory)" in err
    )
