"""Every metric a dashboard or an alert uses is exported by the pinned versions: Karpenter v1.14 and
kube-state-metrics v2.20 (the lists in upstream/, with their sources)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.monitoring.recorded import alert_rules, dashboards
from tests.monitoring.upstream import (
    KARPENTER_METRICS,
    karpenter_metrics,
    known_metric,
    kube_state_metrics,
    metric_names,
)

SHARED_KARPENTER_METRICS = Path(__file__).resolve().parents[3] / "shared" / "reference" / "karpenter-v1.14-metrics.txt"
# The node exporter's, read by one column (node uptime) of Karpenter's capacity dashboard; the stack
# does not install the exporter (monitoring/README.md says why), so that column stays empty.
NODE_EXPORTER_ONLY = {"node_time_seconds", "node_boot_time_seconds"}


def dashboard_queries(dashboard: dict) -> list[str]:
    """Every PromQL expression of a dashboard: its panels' (nested rows too) and its variables'."""
    queries: list[str] = []

    def walk(panels: list[dict]) -> None:
        for panel in panels:
            queries.extend(target["expr"] for target in panel.get("targets", []) if target.get("expr"))
            walk(panel.get("panels", []))

    walk(dashboard.get("panels", []))
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query")
        if variable.get("type") == "query" and query:
            queries.append(query.removeprefix("label_values(").rsplit(",", 1)[0] if "label_values(" in query else query)
    return queries


def _rule_exprs(recording) -> list[str]:
    return [rule["expr"] for group in alert_rules(recording)["groups"] for rule in group["rules"]]


def test_the_lists_hold_what_the_alerts_rely_on():
    assert {
        "karpenter_nodepools_usage",
        "karpenter_nodepools_limit",
        "karpenter_nodes_allocatable",
    } <= karpenter_metrics()
    assert kube_state_metrics()["kube_pod_status_phase"] == ("STABLE",)
    assert kube_state_metrics()["kube_horizontalpodautoscaler_status_current_replicas"] == ("STABLE",)
    assert "opt-in" in kube_state_metrics()["kube_pod_nodeselectors"]


def test_the_karpenter_list_is_the_shared_reference():
    if not SHARED_KARPENTER_METRICS.exists():
        pytest.skip(f"{SHARED_KARPENTER_METRICS} is not present (the reference material lives beside the project)")
    assert KARPENTER_METRICS.read_text() == SHARED_KARPENTER_METRICS.read_text()


def test_every_metric_of_the_alerts_is_exported(dev):
    used = set().union(*(metric_names(expr) for expr in _rule_exprs(dev)))
    assert {"karpenter_nodepools_usage", "kube_pod_status_phase", "up"} <= used
    assert sorted(name for name in used if not known_metric(name)) == []


def test_every_metric_of_the_dashboards_is_exported(dev):
    used: dict[str, set[str]] = {}
    for name, text in dashboards(dev).items():
        queries = dashboard_queries(json.loads(text))
        assert queries, name
        used[name] = set().union(*(metric_names(query) for query in queries))
    unknown = {name: sorted(m for m in metrics if not known_metric(m)) for name, metrics in used.items()}
    assert unknown == {
        "eks-autoscaling-capacity-plan.json": [],
        "karpenter-capacity-dashboard.json": sorted(NODE_EXPORTER_ONLY),
        "karpenter-performance-dashboard.json": [],
    }
    assert "karpenter_nodepools_usage" in used["eks-autoscaling-capacity-plan.json"]
    assert "controller_runtime_reconcile_time_seconds_bucket" in used["karpenter-performance-dashboard.json"]


def test_the_node_exporter_metrics_are_absent_because_it_is_off(dev):
    from tests.monitoring.recorded import values

    assert values(dev, "prometheus")["prometheus-node-exporter"] == {"enabled": False}
    assert not any(known_metric(name) for name in NODE_EXPORTER_ONLY)


def test_an_unknown_or_renamed_metric_is_caught():
    # Karpenter before v1 named the NodePool's usage karpenter_nodepool_usage; opt-in metrics are off.
    assert not known_metric("karpenter_nodepool_usage")
    assert not known_metric("kube_pod_nodeselectors")
    assert known_metric("karpenter_pods_startup_duration_seconds_count")
    assert not known_metric("kube_pod_status_phase_bucket")


@pytest.mark.parametrize(
    "expr, names",
    [
        ('100 * karpenter_nodepools_usage{nodepool="a", resource_type="cpu"} / 5 > 80', {"karpenter_nodepools_usage"}),
        ('max by (namespace, pod) (kube_pod_status_phase{phase="Pending"}) > 0', {"kube_pod_status_phase"}),
        ('absent(up{job="karpenter"} == 1)', {"up"}),
        (
            "count by (nodepool, instance_type) (karpenter_nodes_allocatable{instance_type!~`m5\\.large|c5\\.x`}) > 0",
            {"karpenter_nodes_allocatable"},
        ),
        (
            "histogram_quantile(0.9, rate(controller_runtime_reconcile_time_seconds_bucket"
            '{controller="$controller"}[10m]))',
            {"controller_runtime_reconcile_time_seconds_bucket"},
        ),
        (
            'count by (nodepool)(karpenter_nodes_allocatable{nodepool!="N/A"}) # Selects a single resource type',
            {"karpenter_nodes_allocatable"},
        ),
        (
            'label_replace(sum by (node)(node_time_seconds) - sum by (node)(node_boot_time_seconds), "node_name", "$1", '
            '"node", "(.+)")',
            {"node_time_seconds", "node_boot_time_seconds"},
        ),
        ("sum(rate(a_total[$__rate_interval])) by(cluster,nodepool) or vector(0)", {"a_total"}),
        ("(b or c*0) + on(instance) group_left(x) d offset 5m", {"b", "c", "d"}),
    ],
)
def test_metric_names_of_an_expression(expr, names):
    assert metric_names(expr) == names
