"""The Grafana dashboards monitoring provisions: Karpenter's own capacity and performance
dashboards for the pinned Karpenter version (verbatim from its repository, `monitoring/dashboards/`),
and the plan dashboard, generated from the capacity plan's figures.
"""

from __future__ import annotations

import json
from typing import Any

from stackconfig.karpenter_dashboards import DASHBOARDS_DIR, check_karpenter_dashboards_bundled, karpenter_minor
from stackmonitoring.figures import LIMIT_UNITS, PlannedFigures
from stackmonitoring.rules import number, prometheus_duration

KARPENTER_DASHBOARD_FILES = ("karpenter-capacity-dashboard.json", "karpenter-performance-dashboard.json")
PLAN_DASHBOARD_FILE = "eks-autoscaling-capacity-plan.json"
PLAN_DASHBOARD_UID = "eks-autoscaling-capacity-plan"
# The uid the provisioned Prometheus data source gets, which the plan dashboard's panels name.
DATASOURCE_UID = "prometheus"
DATASOURCE = {"type": "prometheus", "uid": DATASOURCE_UID}
GRAFANA_UNITS = {"cores": "none", "bytes": "bytes"}
TEXT_HEIGHT = 5
GRAPH_HEIGHT = 8


def karpenter_dashboards(karpenter_version: str) -> dict[str, str]:
    """File name -> JSON text of Karpenter's dashboards for `karpenter_version`, as published."""
    check_karpenter_dashboards_bundled(karpenter_version)
    folder = DASHBOARDS_DIR / f"karpenter-{karpenter_minor(karpenter_version)}"
    return {name: (folder / name).read_text() for name in KARPENTER_DASHBOARD_FILES}


def plan_dashboard(figures: PlannedFigures, alerts: Any) -> dict:
    """The capacity plan against the live cluster: the HPA against its planned peak, pending
    pods, the NodePool's usage against each planned limit and the instance types it runs."""
    pool = figures.node_pool
    panels: list[dict] = [_text_panel(figures, alerts)]
    if figures.hpa is not None:
        hpa = figures.hpa
        selector = f'{{namespace="{hpa.namespace}", horizontalpodautoscaler="{hpa.name}"}}'
        panels.append(
            _timeseries(
                f"HPA {hpa.namespace}/{hpa.name}: replicas against the planned peak ({hpa.max_replicas})",
                [
                    (f"kube_horizontalpodautoscaler_status_current_replicas{selector}", "current"),
                    (f"kube_horizontalpodautoscaler_status_desired_replicas{selector}", "desired"),
                    (f"kube_horizontalpodautoscaler_spec_max_replicas{selector}", "maxReplicas (live)"),
                ],
                unit="none",
                lines=[(hpa.max_replicas, "red")],
                description="The red line is the peak the capacity plan sized the NodePool for.",
            )
        )
    allowed = figures.ramp_seconds + alerts.node_startup_seconds
    panels.append(
        _timeseries(
            "Pending pods by namespace",
            [('sum by (namespace) (kube_pod_status_phase{phase="Pending"})', "{{namespace}}")],
            unit="none",
            lines=[],
            description=(
                f"A pod Pending for more than {prometheus_duration(allowed)} (the plan's ramp of "
                f"{figures.ramp_seconds} s and {alerts.node_startup_seconds} s for a node to start) raises "
                "PodPendingLongerThanPlannedRamp."
            ),
        )
    )
    for limit in figures.limits:
        selector = f'{{nodepool="{pool}", resource_type="{limit.resource}"}}'
        share = limit.value * alerts.node_pool_usage_percent / 100
        panels.append(
            _timeseries(
                f"NodePool {pool}: {limit.resource} against its limit of {limit.quantity}",
                [
                    (f"karpenter_nodepools_usage{selector}", "usage"),
                    (f"karpenter_nodepools_limit{selector}", "limit (live)"),
                ],
                unit=GRAFANA_UNITS[LIMIT_UNITS[limit.resource]],
                lines=[(share, "orange"), (limit.value, "red")],
                description=(
                    f"Red: the limit the NodePool was given ({number(limit.value)} {LIMIT_UNITS[limit.resource]}); "
                    f"orange: {alerts.node_pool_usage_percent} % of it, above which NodePoolUsageNearPlannedLimit "
                    "fires."
                ),
            )
        )
    panels.append(
        _timeseries(
            f"NodePool {pool}: nodes by instance type",
            [
                (
                    f'count by (instance_type) (karpenter_nodes_allocatable{{nodepool="{pool}", resource_type="cpu"}})',
                    "{{instance_type}}",
                )
            ],
            unit="none",
            lines=[],
            description=(
                f"Planned types: {', '.join(figures.instance_types) or 'none'}. Any other raises "
                "NodeOfUnplannedInstanceType."
            ),
        )
    )
    # The text across the top, then the graphs two to a row.
    panels[0]["gridPos"] = {"x": 0, "y": 0, "w": 24, "h": TEXT_HEIGHT}
    for index, panel in enumerate(panels[1:]):
        row, column = divmod(index, 2)
        panel["gridPos"] = {"x": 12 * column, "y": TEXT_HEIGHT + GRAPH_HEIGHT * row, "w": 12, "h": GRAPH_HEIGHT}
    for index, panel in enumerate(panels):
        panel["id"] = index + 1
    return {
        "uid": PLAN_DASHBOARD_UID,
        "title": f"eks-autoscaling: capacity plan of stack {figures.stack}",
        "tags": ["eks-autoscaling", "karpenter"],
        "editable": False,
        "schemaVersion": 39,
        "time": {"from": "now-3h", "to": "now"},
        "refresh": "30s",
        "panels": panels,
    }


def plan_dashboard_json(figures: PlannedFigures, alerts: Any) -> str:
    return json.dumps(plan_dashboard(figures, alerts), indent=2, sort_keys=True) + "\n"


def _text_panel(figures: PlannedFigures, alerts: Any) -> dict:
    limits = ", ".join(f"{limit.resource} {limit.quantity}" for limit in figures.limits) or "none"
    peak = (
        f"{figures.hpa.max_replicas} replicas of {figures.hpa.namespace}/{figures.hpa.name}"
        if figures.hpa is not None
        else "the workloads of `capacity.workloads`"
    )
    content = "\n".join(
        [
            f"**NodePool {figures.node_pool}**: limits {limits}, sized for a peak of {peak} "
            f"with {number(figures.headroom_percent)} % headroom.",
            f"**Ramp**: the HPAs reach the peak {figures.ramp_seconds} s after the load arrives; a pod may stay "
            f"Pending {prometheus_duration(figures.ramp_seconds + alerts.node_startup_seconds)}.",
            f"**Instance types planned**: {', '.join(figures.instance_types) or 'none'}.",
            f"Re-plan with `{figures.replan_command}`; the alerts are on Prometheus' Alerts page and in "
            "Grafana's Alerting > Alert rules.",
        ]
    )
    return {"type": "text", "title": "The capacity plan", "options": {"mode": "markdown", "content": content}}


def _timeseries(
    title: str, queries: list[tuple[str, str]], *, unit: str, lines: list[tuple[float, str]], description: str
) -> dict:
    steps: list[dict] = [{"color": "green", "value": None}]
    steps += [{"color": color, "value": value} for value, color in lines]
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "targets": [
            {"refId": chr(ord("A") + index), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
            for index, (expr, legend) in enumerate(queries)
        ],
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "min": 0,
                "thresholds": {"mode": "absolute", "steps": steps},
                "custom": {"thresholdsStyle": {"mode": "line" if lines else "off"}},
            },
            "overrides": [],
        },
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
    }
