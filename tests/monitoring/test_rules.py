"""The alert rules generated from the capacity plan: their thresholds are the plan's figures,
`promtool check rules` accepts them, and `promtool test rules` feeds them synthetic series and
asserts which alerts fire."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from stackmonitoring.rules import number, prometheus_duration
from tests.harness import run_program
from tests.monitoring.recorded import alert_rules

RULES_FILE = "alerting_rules.yml"
TESTS_FILE = "alerting_rules_test.yml"
INTERVAL = "30s"
GIB = 2**30


def _rules(recording) -> list[dict]:
    (group,) = alert_rules(recording)["groups"]
    return group["rules"]


def _rule(rules: list[dict], alert: str, **labels: str) -> dict:
    (found,) = [r for r in rules if r["alert"] == alert and all(r["labels"].get(k) == v for k, v in labels.items())]
    return found


def _promtool(promtool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _write_rules(directory: Path, rule_file: dict) -> Path:
    path = directory / RULES_FILE
    path.write_text(yaml.safe_dump(rule_file, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def prod_with_monitoring():
    return run_program("prod", {"monitoring": {"enabled": True}})


# --- the thresholds are the plan's figures -----------------------------------------------------------


def test_usage_alerts_divide_by_the_deployed_limits(dev):
    rules = _rules(dev)
    limits = dev.outputs["nodePoolLimits"]
    assert limits == {"cpu": "5", "memory": "17Gi"}
    cpu = _rule(rules, "NodePoolUsageNearPlannedLimit", resource_type="cpu")
    memory = _rule(rules, "NodePoolUsageNearPlannedLimit", resource_type="memory")
    assert cpu["expr"] == '100 * karpenter_nodepools_usage{nodepool="test-app", resource_type="cpu"} / 5 > 80'
    assert memory["expr"] == (
        f'100 * karpenter_nodepools_usage{{nodepool="test-app", resource_type="memory"}} / {17 * GIB} > 80'
    )
    assert "limit cpu = 5 (planned for the peak with 10 % headroom)" in cpu["annotations"]["description"]


def test_an_overridden_limit_is_named_as_such():
    recording = run_program("dev", {"nodePool": {"limits": {"cpu": "8"}}})
    cpu = _rule(_rules(recording), "NodePoolUsageNearPlannedLimit", resource_type="cpu")
    assert cpu["expr"].endswith("/ 8 > 80")
    assert "set by nodePool.limits, which overrides the planned value" in cpu["annotations"]["description"]


def test_the_pending_alert_waits_for_the_plans_ramp_and_a_node_start(dev):
    # The app's HPA goes 1 -> 5 -> 10 replicas at 15 s and 30 s (Kubernetes' default scale-up).
    rule = _rule(_rules(dev), "PodPendingLongerThanPlannedRamp")
    assert rule["for"] == prometheus_duration(30 + 300) == "5m30s"
    assert "peak 30 s after the load arrives" in rule["annotations"]["description"]


def test_the_hpa_alert_checks_the_planned_peak(dev):
    hpa = dev.one("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")
    peak = int(hpa.input("spec.maxReplicas"))  # numbers cross the wire as floats
    rule = _rule(_rules(dev), "HpaAtPlannedPeak")
    assert rule["expr"] == (
        'kube_horizontalpodautoscaler_status_current_replicas{namespace="test-app", '
        f'horizontalpodautoscaler="test-app"}} >= {peak}'
    )
    assert rule["for"] == "15m"


def test_the_instance_type_alert_lists_the_planned_types(dev, prod_with_monitoring):
    dev_rule = _rule(_rules(dev), "NodeOfUnplannedInstanceType")
    assert "instance_type!~`m5\\.large`" in dev_rule["expr"]
    fleet = prod_with_monitoring.outputs["capacityPlan"]["fleet"]["instanceTypes"]
    prod_rule = _rule(_rules(prod_with_monitoring), "NodeOfUnplannedInstanceType")
    planned = re.search(r"instance_type!~`([^`]*)`", prod_rule["expr"]).group(1).replace("\\", "").split("|")
    # Every type of the planned fleet, and those the other scenarios launch.
    assert set(fleet) <= set(planned) and planned == sorted(planned)


def test_no_hpa_alert_without_the_test_app():
    recording = run_program(
        "dev",
        {
            "deployTestApp": False,
            "capacity": {
                "workloads": [{"name": "api", "requests": {"cpu": "500m", "memory": "1Gi"}, "maxReplicas": 8}]
            },
        },
    )
    assert "HpaAtPlannedPeak" not in {rule["alert"] for rule in _rules(recording)}


def test_every_description_names_its_figure_and_how_to_replan(dev):
    for rule in _rules(dev):
        description = rule["annotations"]["description"]
        assert description.startswith("Checks "), rule["alert"]
        assert "`python -m sizing plan --stack dev`" in description, rule["alert"]
        assert rule["labels"]["severity"] in ("warning", "info")


def test_the_alert_settings_reach_the_rules():
    recording = run_program(
        "dev",
        {
            "monitoring": {
                "enabled": True,
                "alerts": {"nodePoolUsagePercent": 90, "nodeStartupSeconds": 120, "hpaAtMaxSeconds": 3600},
            }
        },
    )
    rules = _rules(recording)
    assert _rule(rules, "NodePoolUsageNearPlannedLimit", resource_type="cpu")["expr"].endswith("> 90")
    assert _rule(rules, "PodPendingLongerThanPlannedRamp")["for"] == "2m30s"
    assert _rule(rules, "HpaAtPlannedPeak")["for"] == "1h"


@pytest.mark.parametrize(
    "seconds, text", [(0, "0s"), (30, "30s"), (330, "5m30s"), (900, "15m"), (3600, "1h"), (3725, "1h2m5s")]
)
def test_prometheus_durations(seconds, text):
    assert prometheus_duration(seconds) == text


def test_numbers_are_written_plainly():
    assert (number(5.0), number(18253611008.0), number(4.5)) == ("5", "18253611008", "4.5")


# --- promtool -----------------------------------------------------------------------------------------


def test_promtool_accepts_the_dev_rules(promtool, dev, tmp_path):
    _write_rules(tmp_path, alert_rules(dev))
    result = _promtool(promtool, "check", "rules", RULES_FILE, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules(dev))} rules found" in result.stdout


def test_promtool_accepts_the_prod_rules(promtool, prod_with_monitoring, tmp_path):
    _write_rules(tmp_path, alert_rules(prod_with_monitoring))
    result = _promtool(promtool, "check", "rules", RULES_FILE, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_refuses_a_broken_rule(promtool, dev, tmp_path):
    broken = copy.deepcopy(alert_rules(dev))
    broken["groups"][0]["rules"][0]["expr"] += " >"
    _write_rules(tmp_path, broken)
    assert _promtool(promtool, "check", "rules", RULES_FILE, cwd=tmp_path).returncode != 0


def _expand(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)


def _fires(rule: dict, series_labels: dict[str, str]) -> dict:
    labels = {**series_labels, **rule["labels"]}
    return {
        "exp_labels": labels,
        "exp_annotations": {key: _expand(value, labels) for key, value in rule["annotations"].items()},
    }


def _series(name: str, labels: dict[str, str], values: str) -> dict:
    rendered = ", ".join(f'{key}="{value}"' for key, value in labels.items())
    return {"series": f"{name}{{{rendered}}}", "values": values}


def _unit_tests(rules: list[dict]) -> dict:
    """Synthetic series of one hour of the dev cluster, in 30 s steps, and the alerts expected."""
    usage = {"job": "karpenter", "instance": "10.0.1.5:8080", "nodepool": "test-app"}
    cpu_rule = _rule(rules, "NodePoolUsageNearPlannedLimit", resource_type="cpu")
    pending_rule = _rule(rules, "PodPendingLongerThanPlannedRamp")
    hpa_rule = _rule(rules, "HpaAtPlannedPeak")
    type_rule = _rule(rules, "NodeOfUnplannedInstanceType")
    karpenter_missing = _rule(rules, "CapacityPlanMetricsMissing", job="karpenter")
    pod = {"namespace": "test-app", "pod": "test-app-7d9f-slow"}
    hpa = {"job": "kube-state-metrics", "namespace": "test-app", "horizontalpodautoscaler": "test-app"}
    node = {"nodepool": "test-app", "resource_type": "cpu", "zone": "ap-northeast-1a"}
    input_series = [
        # cpu usage: 3 of the limit of 5 (60 %) for 5 minutes, then 4.5 (90 %); memory stays at 8 of 17Gi.
        _series("karpenter_nodepools_usage", {**usage, "resource_type": "cpu"}, "3x9 4.5x110"),
        _series("karpenter_nodepools_usage", {**usage, "resource_type": "memory"}, f"{8 * GIB}x119"),
        # One pod Pending for ten minutes, another for three.
        _series("kube_pod_status_phase", {**pod, "phase": "Pending"}, "1x19 0x100"),
        _series("kube_pod_status_phase", {**pod, "pod": "test-app-7d9f-quick", "phase": "Pending"}, "1x5 0x114"),
        # The app's HPA at its maximum of 10 for twenty minutes; another HPA far above it.
        _series("kube_horizontalpodautoscaler_status_current_replicas", hpa, "10x39 4x80"),
        _series(
            "kube_horizontalpodautoscaler_status_current_replicas",
            {**hpa, "horizontalpodautoscaler": "other"},
            "50x119",
        ),
        # A node of the planned type and one of another.
        _series("karpenter_nodes_allocatable", {**node, "instance_type": "m5.large", "node_name": "a"}, "1.93x119"),
        _series("karpenter_nodes_allocatable", {**node, "instance_type": "c5.large", "node_name": "b"}, "1.93x119"),
        # kube-state-metrics is scraped; no Karpenter target is.
        _series("up", {"job": "kube-state-metrics", "instance": "10.0.1.9:8080"}, "1x119"),
    ]
    return {
        "rule_files": [RULES_FILE],
        "evaluation_interval": INTERVAL,
        "tests": [
            {
                "interval": INTERVAL,
                "input_series": input_series,
                "alert_rule_test": [
                    # Usage crosses 80 % at 5m; the alert waits its 2m.
                    {"eval_time": "6m", "alertname": "NodePoolUsageNearPlannedLimit", "exp_alerts": []},
                    {
                        "eval_time": "8m",
                        "alertname": "NodePoolUsageNearPlannedLimit",
                        "exp_alerts": [_fires(cpu_rule, {**usage, "resource_type": "cpu"})],
                    },
                    # Pending since 0: not yet at 5m, only the slow pod at 6m (after 5m30s).
                    {"eval_time": "5m", "alertname": "PodPendingLongerThanPlannedRamp", "exp_alerts": []},
                    {
                        "eval_time": "6m",
                        "alertname": "PodPendingLongerThanPlannedRamp",
                        "exp_alerts": [_fires(pending_rule, pod)],
                    },
                    {"eval_time": "11m", "alertname": "PodPendingLongerThanPlannedRamp", "exp_alerts": []},
                    # At the planned peak since 0: fires after 15m, and ends when it scales down at 20m.
                    {"eval_time": "14m", "alertname": "HpaAtPlannedPeak", "exp_alerts": []},
                    {"eval_time": "16m", "alertname": "HpaAtPlannedPeak", "exp_alerts": [_fires(hpa_rule, hpa)]},
                    {"eval_time": "25m", "alertname": "HpaAtPlannedPeak", "exp_alerts": []},
                    # The c5.large node, not the m5.large one, after 10m.
                    {"eval_time": "9m", "alertname": "NodeOfUnplannedInstanceType", "exp_alerts": []},
                    {
                        "eval_time": "11m",
                        "alertname": "NodeOfUnplannedInstanceType",
                        "exp_alerts": [_fires(type_rule, {"nodepool": "test-app", "instance_type": "c5.large"})],
                    },
                    # No Karpenter target for 10m; kube-state-metrics is there.
                    {"eval_time": "9m", "alertname": "CapacityPlanMetricsMissing", "exp_alerts": []},
                    {
                        "eval_time": "11m",
                        "alertname": "CapacityPlanMetricsMissing",
                        "exp_alerts": [_fires(karpenter_missing, {})],
                    },
                ],
            }
        ],
    }


def _run_unit_tests(promtool: str, directory: Path, rule_file: dict, unit_tests: dict) -> subprocess.CompletedProcess:
    _write_rules(directory, rule_file)
    (directory / TESTS_FILE).write_text(yaml.safe_dump(unit_tests, sort_keys=False))
    return _promtool(promtool, "test", "rules", TESTS_FILE, cwd=directory)


def test_promtool_unit_tests_of_the_dev_rules(promtool, dev, tmp_path):
    rule_file = alert_rules(dev)
    result = _run_unit_tests(promtool, tmp_path, rule_file, _unit_tests(_rules(dev)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_the_unit_tests_catch_a_rule_that_checks_the_wrong_figure(promtool, dev, tmp_path):
    """The same synthetic series against a rule whose threshold is not the plan's: promtool fails."""
    rule_file = copy.deepcopy(alert_rules(dev))
    cpu = _rule(rule_file["groups"][0]["rules"], "NodePoolUsageNearPlannedLimit", resource_type="cpu")
    cpu["expr"] = cpu["expr"].replace("/ 5 >", "/ 6 >")
    result = _run_unit_tests(promtool, tmp_path, rule_file, _unit_tests(_rules(dev)))
    assert result.returncode != 0
    assert "NodePoolUsageNearPlannedLimit" in result.stdout + result.stderr
