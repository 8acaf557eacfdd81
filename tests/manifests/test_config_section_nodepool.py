"""The `nodePool` config section: defaults, refusals with their messages, zones and limits."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sizing.karpenter.catalog import LABEL_FAMILY, LABEL_GENERATION
from stackconfig.errors import StackConfigError
from stackconfig.nodepool import DEFAULT_BUDGETS, ZONE_KEY, NodePoolConfig, validate_zones


def _only_error(text: str) -> tuple[str, str, str]:
    """(dotted key, error type, message) of the single error `text` produces."""
    with pytest.raises(ValidationError) as caught:
        NodePoolConfig.model_validate_json(text)
    (error,) = caught.value.errors()
    return ".".join(str(part) for part in error["loc"]), error["type"], error["msg"]


def _requirements(*requirements: dict) -> str:
    return json.dumps({"requirements": list(requirements)})


def _budget(**fields: str) -> str:
    return json.dumps({"budgets": [{"nodes": "1", **fields}]})


def test_defaults_are_the_reference_provisioner():
    config = NodePoolConfig.model_validate_json("{}")
    assert config == NodePoolConfig()
    assert (config.name, config.preset, config.requirements, config.zones) == ("test-app", "reference", None, None)
    assert (config.consolidation_policy, config.consolidate_after, config.expire_after) == ("WhenEmpty", "30s", "15m")
    assert config.budgets == DEFAULT_BUDGETS
    assert [budget.to_dict() for budget in config.budgets] == [
        {"nodes": "100%", "reasons": ["Empty"]},
        {"nodes": "1", "reasons": ["Drifted", "Underutilized"]},
    ]
    assert (config.limits, config.acknowledge_limits_below_peak, config.weight) == (None, False, None)


def test_a_full_configuration_is_accepted():
    config = NodePoolConfig.model_validate_json(
        """{
          "name": "spot", "preset": "spot", "zones": ["us-east-1a", "us-east-1b"],
          "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m6i", "m7i"], "minValues": 2},
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["16"]}
          ],
          "consolidationPolicy": "Balanced", "consolidateAfter": "1h30m", "expireAfter": "Never",
          "budgets": [{"nodes": "0", "reasons": ["Drifted"], "schedule": "0 9 * * 1-5", "duration": "8h"}],
          "limits": {"cpu": "64"}, "acknowledgeLimitsBelowPeak": true, "weight": 100
        }"""
    )
    assert config.requirements[0].to_dict() == {
        "key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m6i", "m7i"], "minValues": 2,
    }  # fmt: skip
    assert config.budgets[0].to_dict() == {
        "nodes": "0", "reasons": ["Drifted"], "schedule": "0 9 * * 1-5", "duration": "8h",
    }  # fmt: skip
    assert (config.limits.cpu, config.limits.memory) == ("64", None)


@pytest.mark.parametrize(
    "text, key, fragments",
    [
        (
            _requirements({"key": "karpenter.sh/tier", "operator": "In", "values": ["a"]}),
            "requirements",
            ['requirements[0].key: label domain "karpenter.sh" is restricted', "the NodePool CRD's validation"],
        ),
        (
            _requirements({"key": "kubernetes.io/arch", "operator": "In"}),
            "requirements",
            ["requirements with operator 'In' must have a value defined (at [0])"],
        ),
        (
            _requirements({"key": LABEL_GENERATION, "operator": "Gt", "values": ["two"]}),
            "requirements",
            ["must have a single positive integer value (at [0])"],
        ),
        (
            _requirements({"key": "kubernetes.io/arch", "operator": "Exists", "values": ["amd64"]}),
            "requirements",
            ["operator Exists takes no values"],
        ),
        (
            _requirements({"key": LABEL_FAMILY, "operator": "In", "values": ["m5"], "minValues": 3}),
            "requirements",
            ["requirements with 'minValues' must have at least that many values specified"],
        ),
        (
            _requirements({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["cheap"]}),
            "requirements",
            ["unknown capacity types ['cheap']"],
        ),
        (
            _requirements({"key": ZONE_KEY, "operator": "In", "values": ["us-east-1a"]}),
            "requirements",
            ["requirements[0]: set zones with nodePool.zones"],
        ),
        (
            _requirements({"key": "kubernetes.io/hostname", "operator": "Exists"}),
            "requirements",
            ['requirements[0].key: label "kubernetes.io/hostname" is restricted'],
        ),
        ('{"requirements": []}', "requirements", ["requirements is empty"]),
        ('{"zones": []}', "zones", ["zones is empty"]),
        ('{"zones": ["tokyo-a"]}', "zones", ["'tokyo-a' is not an availability zone name"]),
        ('{"zones": ["us-east-1a", "us-east-1a"]}', "zones", ["lists a zone twice"]),
        ('{"consolidateAfter": "30"}', "consolidateAfter", ["'30' must be a duration", "Never"]),
        ('{"expireAfter": "15min"}', "expireAfter", ["'15min' must be a duration"]),
        ('{"budgets": [{"nodes": "150%"}]}', "budgets.0.nodes", ["nodes '150%' must be a node count"]),
        (_budget(schedule="@daily"), "budgets.0", ["schedule and duration must be set together"]),
        (_budget(schedule="@daily", duration="30s"), "budgets.0.duration", ["'30s' must be in hours and minutes"]),
        (_budget(schedule="daily", duration="1h"), "budgets.0.schedule", ["must be a cron expression"]),
        (json.dumps({"budgets": [{"nodes": "1"}] * 51}), "budgets", ["at most 50"]),
        ('{"weight": 0}', "weight", ["from 1 to 100", "got 0"]),
        ('{"weight": 101}', "weight", ["from 1 to 100", "got 101"]),
        ('{"limits": {"cpu": "lots"}}', "limits.cpu", ["'lots' is not a Kubernetes quantity"]),
        ('{"limits": {"memory": "-1Gi"}}', "limits.memory", ["'-1Gi' must be greater than zero"]),
        ('{"name": "Test_Pool"}', "name", ["'Test_Pool' is not a NodePool name"]),
    ],
)
def test_bad_values_are_refused_with_a_message(text, key, fragments):
    location, error_type, message = _only_error(text)
    assert (location, error_type) == (key, "value_error")
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    "text, key, error_type",
    [
        (
            _requirements({"key": "kubernetes.io/arch", "operator": "Within", "values": ["amd64"]}),
            "requirements.0.operator",
            "literal_error",
        ),
        (
            _requirements({"key": "kubernetes.io/arch", "operator": "In", "value": ["amd64"]}),
            "requirements.0.value",
            "extra_forbidden",
        ),
        ('{"consolidationPolicy": "WhenUnderutilized"}', "consolidationPolicy", "literal_error"),
        ('{"preset": "cheap"}', "preset", "literal_error"),
        ('{"budgets": [{"nodes": "1", "reasons": ["Expired"]}]}', "budgets.0.reasons.0", "literal_error"),
        ('{"limits": {"gpu": "1"}}', "limits.gpu", "extra_forbidden"),
        ('{"acknowledgeLimitsBelowPeak": "yes"}', "acknowledgeLimitsBelowPeak", "bool_type"),
        ('{"ttlSecondsAfterEmpty": 30}', "ttlSecondsAfterEmpty", "extra_forbidden"),
    ],
)
def test_wrong_keys_and_types_are_refused(text, key, error_type):
    location, actual_type, _ = _only_error(text)
    assert (location, actual_type) == (key, error_type)


def test_zones_of_the_region_are_accepted():
    zones = ["ap-northeast-1a", "ap-northeast-1c"]
    assert validate_zones(zones, "ap-northeast-1") == tuple(zones)


@pytest.mark.parametrize("zone", ["us-east-1a", "ap-northeast-10a", "ap-northeast-1", "ap-northeast-1az"])
def test_zones_outside_the_region_are_refused(zone):
    with pytest.raises(StackConfigError) as caught:
        validate_zones(["ap-northeast-1a", zone], "ap-northeast-1")
    (problem,) = caught.value.problems
    assert problem.startswith("nodePool.zones: ")
    assert repr(zone) in problem and "ap-northeast-1a'" not in problem
    assert "region ap-northeast-1" in problem
