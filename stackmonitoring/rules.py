"""Prometheus alerting rules generated from the capacity plan: each checks one assumption of the
plan in the live cluster, with the planned figure written into its expression.

Metric names are those of the pinned versions: Karpenter v1.14 (`karpenter_nodepools_usage`,
`karpenter_nodes_allocatable`) and kube-state-metrics v2.20 (`kube_pod_status_phase`,
`kube_horizontalpodautoscaler_status_current_replicas`); the lists they are checked against are
in tests/monitoring/upstream/.
"""

from __future__ import annotations

import re
from typing import Any

from stackmonitoring.figures import LIMIT_UNITS, PlannedFigures

GROUP_NAME = "eks-autoscaling-capacity-plan"
KARPENTER_JOB = "karpenter"
KUBE_STATE_METRICS_JOB = "kube-state-metrics"
USAGE_FOR_SECONDS = 120
METRICS_MISSING_FOR_SECONDS = 600


def alert_rules(figures: PlannedFigures, alerts: Any) -> dict:
    """The rule file (`groups`) for Prometheus' alerting_rules.yml. alerts: `monitoring.alerts`."""
    rules = [_usage_rule(figures, limit, alerts.node_pool_usage_percent) for limit in figures.limits]
    rules.append(_pending_rule(figures, alerts.node_startup_seconds))
    if figures.hpa is not None:
        rules.append(_hpa_rule(figures, alerts.hpa_at_max_seconds))
    rules.append(_instance_type_rule(figures, alerts.unplanned_instance_type_seconds))
    rules += [_metrics_missing_rule(figures, job) for job in (KARPENTER_JOB, KUBE_STATE_METRICS_JOB)]
    return {"groups": [{"name": GROUP_NAME, "rules": rules}]}


def prometheus_duration(seconds: int) -> str:
    """Seconds as a Prometheus duration: 330 -> "5m30s", 900 -> "15m", 0 -> "0s"."""
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "".join(f"{value}{unit}" for value, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if value)
    return text or "0s"


def number(value: float) -> str:
    """A PromQL number as written: integers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _usage_rule(figures: PlannedFigures, limit: Any, percent: int) -> dict:
    pool = figures.node_pool
    usage = f'karpenter_nodepools_usage{{nodepool="{pool}", resource_type="{limit.resource}"}}'
    origin = (
        "set by nodePool.limits, which overrides the planned value"
        if limit.overridden
        else f"planned for the peak with {number(figures.headroom_percent)} % headroom"
    )
    return {
        "alert": "NodePoolUsageNearPlannedLimit",
        "expr": f"100 * {usage} / {number(limit.value)} > {percent}",
        "for": prometheus_duration(USAGE_FOR_SECONDS),
        "labels": {"severity": "warning", "nodepool": pool, "resource_type": limit.resource},
        "annotations": {
            "summary": f"NodePool {pool} uses more than {percent} % of its {limit.resource} limit of {limit.quantity}",
            "description": (
                f"Checks the NodePool limit {limit.resource} = {limit.quantity} ({origin}), "
                f"{number(limit.value)} {LIMIT_UNITS[limit.resource]} as Karpenter's metrics count it. NodePool "
                f"{pool} has provisioned more than {percent} % of it; Karpenter launches no node beyond the limit, "
                "so the next scale-out may leave pods Pending. If the workload has grown past what the plan assumed, update app.hpa.maxReplicas or "
                f"capacity.workloads, re-plan with `{figures.replan_command}` and apply the new limits with "
                "pulumi up."
            ),
        },
    }


def _pending_rule(figures: PlannedFigures, node_startup_seconds: int) -> dict:
    allowed = figures.ramp_seconds + node_startup_seconds
    return {
        "alert": "PodPendingLongerThanPlannedRamp",
        "expr": 'max by (namespace, pod) (kube_pod_status_phase{phase="Pending"}) > 0',
        "for": prometheus_duration(allowed),
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": (
                "Pod {{ $labels.namespace }}/{{ $labels.pod }} has been Pending for more than "
                f"{prometheus_duration(allowed)}"
            ),
            "description": (
                f"Checks the plan's ramp: the HPAs reach their peak {figures.ramp_seconds} s after the load arrives "
                f"(hpa-ramp scenario), and a new node runs its pods within {node_startup_seconds} s "
                "(monitoring.alerts.nodeStartupSeconds). This pod has waited longer. `kubectl describe pod` and "
                f"Karpenter's logs say why: NodePool {figures.node_pool} at its limits (see "
                "NodePoolUsageNearPlannedLimit), no capacity of the allowed instance types, or a constraint no "
                f"node meets. If the NodePool is at its limits, re-plan with `{figures.replan_command}` and "
                "apply the new limits with pulumi up."
            ),
        },
    }


def _hpa_rule(figures: PlannedFigures, seconds: int) -> dict:
    hpa = figures.hpa
    assert hpa is not None
    selector = f'{{namespace="{hpa.namespace}", horizontalpodautoscaler="{hpa.name}"}}'
    return {
        "alert": "HpaAtPlannedPeak",
        "expr": f"kube_horizontalpodautoscaler_status_current_replicas{selector} >= {hpa.max_replicas}",
        "for": prometheus_duration(seconds),
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": (
                f"HPA {hpa.namespace}/{hpa.name} has run at the planned peak of {hpa.max_replicas} replicas "
                f"for {prometheus_duration(seconds)}"
            ),
            "description": (
                f"Checks the peak the plan sized NodePool {figures.node_pool} for: {hpa.max_replicas} replicas "
                "(app.hpa.maxReplicas). The HPA has held it for "
                f"{prometheus_duration(seconds)}, so the load likely wants more pods than the plan assumed and "
                "the HPA cannot add them. Raise app.hpa.maxReplicas, re-plan with "
                f"`{figures.replan_command}` so the limits make room for the new peak, and apply it with pulumi up."
            ),
        },
    }


def _instance_type_rule(figures: PlannedFigures, seconds: int) -> dict:
    pool = figures.node_pool
    planned = "|".join(re.escape(name) for name in figures.instance_types)
    nodes = (
        f'karpenter_nodes_allocatable{{nodepool="{pool}", resource_type="cpu", instance_type!~`{planned}`}}'
        if planned
        else f'karpenter_nodes_allocatable{{nodepool="{pool}", resource_type="cpu"}}'
    )
    return {
        "alert": "NodeOfUnplannedInstanceType",
        "expr": f"count by (nodepool, instance_type) ({nodes}) > 0",
        "for": prometheus_duration(seconds),
        "labels": {"severity": "info"},
        "annotations": {
            "summary": f"NodePool {pool} runs {{{{ $labels.instance_type }}}} nodes, a type its plan did not launch",
            "description": (
                f"Checks the instance types of the plan's fleets for NodePool {pool}: "
                f"{', '.join(figures.instance_types) or 'none'}. A node of another type has run for "
                f"{prometheus_duration(seconds)}. The limits were sized for the planned types; another type holds "
                "another number of pods per vCPU and GiB of the limits, so the planned peak may not fit. It often "
                "means the planned types had no capacity (spot) or the NodePool's requirements changed. Re-plan "
                f"with `{figures.replan_command}` to see the fleet the plan expects now."
            ),
        },
    }


def _metrics_missing_rule(figures: PlannedFigures, job: str) -> dict:
    return {
        "alert": "CapacityPlanMetricsMissing",
        "expr": f'absent(up{{job="{job}"}} == 1)',
        "for": prometheus_duration(METRICS_MISSING_FOR_SECONDS),
        "labels": {"severity": "warning", "job": job},
        "annotations": {
            "summary": f"Prometheus has scraped no {job} target for {prometheus_duration(METRICS_MISSING_FOR_SECONDS)}",
            "description": (
                f"Checks no planned figure itself: without the metrics of the {job} job the alerts that check the "
                "capacity plan cannot fire. See Prometheus' targets page (Status > Targets) for the error. Once "
                f"they flow again, `{figures.replan_command}` shows the plan they are checked against."
            ),
        },
    }
