"""The dashboards Grafana provisions: Karpenter's, byte for byte as published for the pinned
version, and the plan dashboard generated from the capacity plan; every query parses as PromQL."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess

import pytest
import yaml

from offline.program import PROJECT_DIR
from stackconfig.karpenter_dashboards import (
    DASHBOARDS_DIR,
    bundled_karpenter_minors,
    check_karpenter_dashboards_bundled,
)
from tests.monitoring.recorded import dashboards, values
from tests.monitoring.test_metrics import dashboard_queries

PLAN = "eks-autoscaling-capacity-plan.json"
KARPENTER = ("karpenter-capacity-dashboard.json", "karpenter-performance-dashboard.json")
GIB = 2**30


def _plan(recording) -> dict:
    return json.loads(dashboards(recording)[PLAN])


def _panel(dashboard: dict, title_start: str) -> dict:
    (panel,) = [p for p in dashboard["panels"] if p["title"].startswith(title_start)]
    return panel


def _lines(panel: dict) -> list[tuple[float, str]]:
    return [(step["value"], step["color"]) for step in panel["fieldConfig"]["defaults"]["thresholds"]["steps"][1:]]


def test_karpenters_dashboards_are_the_published_files():
    readme = (PROJECT_DIR / "monitoring" / "README.md").read_text()
    recorded = dict(re.findall(r"\| `([\w-]+\.json)` \|[^|]*\| ([0-9a-f]{64}) \|", readme))
    assert sorted(recorded) == sorted(KARPENTER)
    for name, digest in recorded.items():
        assert hashlib.sha256((DASHBOARDS_DIR / "karpenter-1.14" / name).read_bytes()).hexdigest() == digest, name
    assert "tag v1.14.1 (commit bde00654cd316fddb3dccfba3f5ac07039865429)" in readme


def test_the_config_map_holds_karpenters_dashboards_unchanged_and_the_plan(dev):
    data = dashboards(dev)
    assert sorted(data) == sorted([*KARPENTER, PLAN])
    for name in KARPENTER:
        assert data[name] == (DASHBOARDS_DIR / "karpenter-1.14" / name).read_text()
    titles = {json.loads(text)["title"] for text in data.values()}
    assert titles == {
        "Karpenter Capacity v1",
        "Karpenter Performance v1",
        "eks-autoscaling: capacity plan of stack dev",
    }


def test_only_bundled_karpenter_versions_have_dashboards():
    assert bundled_karpenter_minors() == ("1.14",)
    check_karpenter_dashboards_bundled("1.14.0")
    with pytest.raises(ValueError, match="bundled for Karpenter 1.14 only, and addons.karpenter.version is 1.15.0"):
        check_karpenter_dashboards_bundled("1.15.0")


def test_the_plan_dashboard_draws_the_planned_figures(dev):
    plan = _plan(dev)
    assert plan["uid"] == "eks-autoscaling-capacity-plan"
    hpa = _panel(plan, "HPA test-app/test-app")
    assert _lines(hpa) == [(10, "red")]
    assert [t["expr"] for t in hpa["targets"]][0] == (
        'kube_horizontalpodautoscaler_status_current_replicas{namespace="test-app", horizontalpodautoscaler="test-app"}'
    )
    cpu = _panel(plan, "NodePool test-app: cpu")
    assert _lines(cpu) == [(4, "orange"), (5, "red")]
    assert cpu["fieldConfig"]["defaults"]["unit"] == "none"
    memory = _panel(plan, "NodePool test-app: memory")
    assert _lines(memory) == [(17 * GIB * 80 / 100, "orange"), (17 * GIB, "red")]
    assert memory["fieldConfig"]["defaults"]["unit"] == "bytes"
    assert "Planned types: m5.large" in _panel(plan, "NodePool test-app: nodes")["description"]
    text = _panel(plan, "The capacity plan")["options"]["content"]
    assert "limits cpu 5, memory 17Gi" in text and "python -m sizing plan --stack dev" in text
    assert "Pending 5m30s" in text


def test_the_plan_dashboard_reads_the_provisioned_data_source(dev):
    (source,) = values(dev, "grafana")["datasources"]["datasources.yaml"]["datasources"]
    plan = _plan(dev)
    graphs = [panel for panel in plan["panels"] if panel["type"] == "timeseries"]
    assert graphs and all(panel["datasource"] == {"type": "prometheus", "uid": source["uid"]} for panel in graphs)
    # Karpenter's dashboards pick the default Prometheus data source through their variable.
    assert source["isDefault"] is True and source["type"] == "prometheus"


def test_panels_do_not_overlap(dev):
    taken = set()
    for panel in _plan(dev)["panels"]:
        grid = panel["gridPos"]
        cells = {
            (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & taken, panel["title"]
        assert grid["x"] + grid["w"] <= 24
        taken |= cells


def _as_promql(query: str) -> str:
    """A Grafana query with its variables replaced by values of their kind."""
    query = query.replace("$__rate_interval", "5m").replace("$distribution_filter", "nodepool")
    return re.sub(r"\$\{?\w+\}?", "x", query)


def test_every_dashboard_query_is_valid_promql(promtool, dev, tmp_path):
    rules = []
    for name, text in sorted(dashboards(dev).items()):
        queries = _panel_queries(json.loads(text))
        assert queries, name
        for query in queries:
            rules.append({"record": f"dashboard:query_{len(rules)}", "expr": _as_promql(query)})
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    result = subprocess.run(
        [promtool, "check", "rules", "queries.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout


def _panel_queries(dashboard: dict) -> list[str]:
    # The variables' label_values(...) are Grafana's, not PromQL; the panels' queries are PromQL.
    return dashboard_queries({"panels": dashboard.get("panels", [])})
