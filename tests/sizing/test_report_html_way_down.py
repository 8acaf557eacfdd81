"""The HTML report's parts for workloads that never run (first in the attention section) and for
the way down (its timeline chart, the fleet at rest against the optimal one, why each node stays,
what the limits do): every figure held to the JSON, nothing left to the raw-JSON section."""

from __future__ import annotations

import copy
import re

import pytest

from sizing.planning.report_html import MAX_WAY_DOWN_ROWS, render_html
from tests.sizing.html_figures import figure_paths, mismatches, parse
from tests.sizing.html_plans import dev_way_down, never_running, replacement


def _attention(page: str) -> str:
    start = page.index('<section id="attention"')
    return page[start : page.index("</section>", start)]


def test_never_running_workloads_come_first_in_the_attention_section(capsys, tmp_path):
    data = never_running(capsys, tmp_path)
    (item,) = data["neverRunning"]
    page = render_html(data)
    assert mismatches(data, page) == []
    attention = _attention(page)
    assert "What needs attention" in attention and 'class="calm"' not in attention
    # Counted as pods left pending, then each workload with its pods and reason, before the recommendation.
    first = attention.index("Pods left pending")
    assert first < attention.index("Never runs:") < attention.index("Recommendation:")
    summary = [f for f in parse(attention).figures if f.path == ["neverRunning"]]
    assert {(f.op, f.text) for f in summary} == {("sum", str(item["pods"])), ("count", "1")}
    assert {("neverRunning", 0, "workload"), ("neverRunning", 0, "pods"), ("neverRunning", 0, "reason")} <= (
        figure_paths(attention)
    )
    assert 'id="more"' not in page and "<summary>neverRunning</summary>" not in page
    assert 'id="way-down"' not in page


def test_a_plan_without_never_running_workloads_says_nothing_of_them(capsys, tmp_path):
    data = never_running(capsys, tmp_path)
    data["neverRunning"] = []
    page = render_html(data)
    assert "Never runs" not in page and "Pods left pending" not in page and mismatches(data, page) == []


@pytest.fixture(scope="module")
def replaced():
    data = replacement()
    return data, render_html(data)


def test_the_way_down_with_a_replacement_is_charted_and_held_to_the_json(replaced):
    data, page = replaced
    found = data["wayDown"]
    assert found["limitsRaised"] and found["current"]["keepsDecisions"] is False
    assert mismatches(data, page) == []
    section = page[page.index('<section id="way-down"') :]
    assert 'id="chart-way-down"' in section and "<title" in section
    assert re.search(r'<svg [^>]*id="chart-way-down"[^>]*role="img"', section)
    shown = figure_paths(page)
    timeline = found["planned"]["timeline"]
    for index, event in enumerate(timeline):
        base = ("wayDown", "planned", "timeline", index)
        assert (*base, "time") in shown
        if event["kind"] != "scale-in":
            assert {(*base, "nodes"), (*base, "cost"), (*base, "removed", 0)} <= shown
    last = ("wayDown", "planned", "timeline", len(timeline) - 1)
    assert timeline[-1]["launched"] is not None
    assert {(*last, "launched", "instanceType"), (*last, "launched", "price")} <= shown
    for path in [
        ("wayDown", "planned", "start", "cost"),
        ("wayDown", "planned", "atRest", "cost"),
        ("wayDown", "planned", "atRest", "seconds"),
        ("wayDown", "current", "atRest", "cost"),
        ("wayDown", "current", "changes", 0),
        ("wayDown", "limitsRaised", "cpu"),
    ]:
        assert path in shown, path
    if found["optimal"] is not None:
        assert ("wayDown", "optimal", "cost") in shown
    for name in found["planned"]["stays"]:
        assert ("wayDown", "planned", "stays", name) in shown
    # The replacement is marked in the chart's legend; the attention section names the raised and blocking limits.
    assert "(replace)" in section
    attention = _attention(page)
    assert "Limits raised for the way down" in attention
    assert "The current limits block consolidation on the way down" in attention
    assert 'id="more"' not in page and "<summary>wayDown</summary>" not in page
    assert render_html(copy.deepcopy(data)) == page


def test_the_checker_finds_a_wrong_way_down_figure(replaced):
    data, page = replaced
    wrong = copy.deepcopy(data)
    wrong["wayDown"]["planned"]["atRest"]["cost"] += 1
    assert mismatches(wrong, page)


def test_a_long_way_down_is_listed_up_to_a_bound(replaced):
    data, _ = replaced
    many = copy.deepcopy(data)
    planned = many["wayDown"]["planned"]
    event = next(e for e in planned["timeline"] if e["kind"] == "scale-in")
    planned["timeline"] = [{**event, "time": i} for i in range(MAX_WAY_DOWN_ROWS + 30)]
    page = render_html(many)
    rows = [f for f in parse(page).figures if f.path[:3] == ["wayDown", "planned", "timeline"] and f.path[-1] == "time"]
    assert len(rows) == MAX_WAY_DOWN_ROWS
    assert f'data-bound="{MAX_WAY_DOWN_ROWS}"' in page and mismatches(many, page) == []


def test_the_dev_stack_with_its_way_down(capsys):
    data = dev_way_down(capsys)
    found = data["wayDown"]
    assert found is not None and not found["limitsRaised"]
    page = render_html(data)
    assert mismatches(data, page) == []
    assert page.index('id="nodes"') < page.index('id="way-down"')
    assert 'id="chart-way-down"' in page and 'id="more"' not in page
    shown = figure_paths(page)
    for index, event in enumerate(found["planned"]["timeline"]):
        assert event["kind"] == "scale-in"
        assert ("wayDown", "planned", "timeline", index, "podsDeleted") in shown
    assert ("wayDown", "targets", next(iter(found["targets"]))) in shown
    assert found["optimal"] is not None and ("wayDown", "optimal", "cost") in shown
    # 1 node kept and why; nothing of the way down asks for attention.
    assert "Limits raised" not in page and "block consolidation" not in page
    assert len(page) < 400_000
