"""The HTML report in a real browser: headless Chromium loads it from file:// with the network
off, logs no error, asks for nothing else, draws a page that is not blank, and its DOM holds each
chart and the JSON's figures. For the dev and prod stacks (the `--stack` door) and for Kubernetes
objects whose plan has pods left pending, findings and current limits that change decisions."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from scripts.browser import check_page, find_chromium
from sizing.cli import main
from tests.sizing.html_figures import figure_paths, mismatches

REQUIRE_CHROMIUM = "EKS_AUTOSCALING_REQUIRE_CHROMIUM"
PROJECT_DIR = Path(__file__).resolve().parents[2]
ATTENTION = Path(__file__).parent / "needs_attention.yaml"
CHARTS = ("chart-ramp", "chart-scenarios", "chart-fleet", "chart-nodes")


@pytest.fixture(scope="module")
def chromium() -> str:
    """Chromium from Debian's chromium package (`make chromium`); CI requires it."""
    found = find_chromium()
    if found:
        return found
    reason = (
        "Chromium is not installed: `make chromium` installs Debian's chromium package "
        "(make install tries it; CI installs it and fails instead of skipping)"
    )
    if os.environ.get(REQUIRE_CHROMIUM):
        pytest.fail(f"{REQUIRE_CHROMIUM} is set and {reason}")
    pytest.skip(reason)


def _plan(capsys, tmp_path: Path, *door: str) -> tuple[dict, Path]:
    page = tmp_path / "capacity.html"
    assert main(["plan", *door, "--json", "--html", str(page), "--workers", "1"]) == 0
    return json.loads(capsys.readouterr().out), page


def _not_blank(png: bytes) -> bool:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 16)
    # A blank page is one colour; a drawn one has text, bars and lines in many.
    return colours is None or len(colours) > 50


@pytest.mark.parametrize("door", ["dev", "prod", "attention"])
def test_chromium_shows_the_page_offline_with_every_chart_and_figure(chromium, capsys, tmp_path, door):
    args = ("--stack", door, "--project-dir", str(PROJECT_DIR)) if door != "attention" else (str(ATTENTION),)
    data, page = _plan(capsys, tmp_path, *args)
    check = check_page(page, chromium)
    assert check.errors == []
    assert check.requests == []
    assert check.png.startswith(b"\x89PNG") and _not_blank(check.png)
    for chart in CHARTS:
        assert f'id="{chart}"' in check.dom, chart
    assert mismatches(data, check.dom) == []
    shown = figure_paths(check.dom)
    for path in [
        ("limits", "spec", "cpu"),
        ("limits", "spec", "memory"),
        ("fleet", "cost"),
        ("fleet", "nodeCount"),
        ("fleet", "nodes", 0, "instanceType"),
        ("recommendation", "summary"),
    ]:
        assert path in shown, path
    if data["optimal"]:
        assert ("optimal", "cost") in shown and ("optimal", "lowerBound", "cost") in shown
    if door == "attention":
        assert data["fleet"]["pending"] and data["findings"]
        assert ("fleet", "pending", 0, "count") in shown
        assert any(path[0] == "findings" for path in shown)


def test_the_checker_sees_a_console_error_and_a_request(chromium, tmp_path):
    """The check itself: a page that logs an error and asks the network for a picture is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body><p>bad</p>'
        '<img src="https://example.com/x.png" alt="x"><script>console.error("boom")</script></body></html>'
    )
    check = check_page(page, chromium)
    assert any("boom" in error for error in check.errors)
    assert "https://example.com/x.png" in check.requests


@pytest.mark.parametrize("case", ["never-running", "dev-way-down", "replacement"])
def test_chromium_shows_never_running_workloads_and_the_way_down(chromium, capsys, tmp_path, case):
    from sizing.planning.report_html import render_html
    from tests.sizing.html_plans import dev_way_down, never_running, replacement

    if case == "never-running":
        data = never_running(capsys, tmp_path)
    elif case == "dev-way-down":
        data = dev_way_down(capsys)
    else:
        data = replacement()
    page = tmp_path / "capacity.html"
    page.write_text(render_html(data), encoding="utf-8")
    check = check_page(page, chromium)
    assert check.errors == [] and check.requests == []
    assert check.png.startswith(b"\x89PNG") and _not_blank(check.png)
    assert mismatches(data, check.dom) == []
    shown = figure_paths(check.dom)
    if case == "never-running":
        assert data["neverRunning"] and ("neverRunning", 0, "reason") in shown
        assert 'id="chart-way-down"' not in check.dom
    else:
        assert 'id="chart-way-down"' in check.dom
        assert ("wayDown", "planned", "atRest", "cost") in shown
        assert ("wayDown", "planned", "timeline", 0, "time") in shown
