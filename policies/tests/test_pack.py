"""The pack as the Pulumi CLI loads it: __main__.py builds one PolicyPack with every rule."""

from __future__ import annotations

import runpy
from pathlib import Path

import pulumi_policy
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from policies.eks_autoscaling_policies import PACK_NAME, POLICIES
from policies.eks_autoscaling_rules import RULES

PACK_DIR = Path(__file__).resolve().parents[1]


def test_main_serves_every_rule_as_a_mandatory_policy(monkeypatch):
    served = []

    # The real PolicyPack starts the analyzer's gRPC server and never returns.
    class RecordingPolicyPack:
        def __init__(self, **kwargs):
            served.append(kwargs)

    monkeypatch.setattr(pulumi_policy, "PolicyPack", RecordingPolicyPack)
    runpy.run_path(str(PACK_DIR), run_name="__main__")
    (pack,) = served
    assert pack["name"] == PACK_NAME
    assert pack["enforcement_level"] is EnforcementLevel.MANDATORY
    assert [policy.name for policy in pack["policies"]] == [rule.name for rule in RULES]


def test_policies_are_mandatory_resource_policies_with_unique_names():
    assert len({policy.name for policy in POLICIES}) == len(POLICIES) == len(RULES)
    for policy in POLICIES:
        assert isinstance(policy, ResourceValidationPolicy)
        assert policy.enforcement_level is EnforcementLevel.MANDATORY
        assert policy.description and policy.remediation_steps


def test_configurable_policies_publish_their_defaults():
    schemas = {policy.name: policy.config_schema for policy in POLICIES if policy.config_schema}
    assert set(schemas) == {
        "eks-cluster-endpoint-restricted",
        "eks-cluster-audit-logging-enabled",
        "eks-cluster-secrets-encrypted-with-kms",
    }
    for schema in schemas.values():
        assert all("default" in prop for prop in schema.properties.values())


def test_pack_metadata_points_at_its_environment():
    text = (PACK_DIR / "PulumiPolicy.yaml").read_text()
    assert "name: python" in text and "virtualenv: ../.tools/policy" in text
