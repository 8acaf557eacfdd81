"""The policy pack's rules over the real stacks: the recorded (type, inputs) of every resource go
through the same functions the pack's policies call, without pulumi_policy (which lives in its
own environment; policies/tests exercises the wrappers)."""

from __future__ import annotations

import pytest

from policies.eks_autoscaling_rules import (
    OPEN_ENDPOINT_TAG,
    RULES,
    SECRETS_ENCRYPTION_TAG,
    violations_of,
)
from security.gates import policy_pack_rules, recorded_props
from tests.harness import run_program
from tests.security.conftest import STACKS, with_inputs

EKS_COMPONENT = "eks:index:Cluster"


@pytest.mark.parametrize("stack", STACKS)
def test_no_rule_is_broken_by_the_real_stack(recording_of, stack):
    violations = [
        (rule, resource.type, resource.name, message)
        for resource, props in recorded_props(recording_of(stack))
        for rule, message in violations_of(resource.type, props)
    ]
    assert violations == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_rule_examines_recorded_resources(recording_of, stack):
    """A rule whose resource types the program never registers would pass vacuously."""
    recorded_types = {resource.type for resource in recording_of(stack).resources}
    for rule in RULES:
        if rule.name == "ingress-not-open-to-internet" and stack == "prod":
            # prod deploys no test app, so no Ingress: nothing for the rule to flag.
            assert INGRESS not in recorded_types
            continue
        assert recorded_types & set(rule.resource_types), rule.name


def test_the_dev_stack_tags_its_acknowledged_open_endpoint(recording_of):
    eks = recording_of("dev").one(EKS_COMPONENT)
    assert eks.input("publicAccessCidrs") == ["0.0.0.0/0"]
    assert eks.input("clusterTags", {}).get(OPEN_ENDPOINT_TAG) == "true"


def test_the_prod_stack_asks_for_and_gets_kms_encryption(recording_of):
    eks = recording_of("prod").one(EKS_COMPONENT)
    assert eks.input("clusterTags", {}).get(SECRETS_ENCRYPTION_TAG) == "true"
    assert eks.input("encryptionConfigKeyArn").startswith("arn:aws:kms:")


def test_an_open_endpoint_without_acknowledgement_is_refused():
    recording = run_program("dev", {"cluster": {"acknowledgeOpenEndpoint": False}})
    eks = recording.one(EKS_COMPONENT)
    (violation,) = violations_of(eks.type, dict(recorded_props_of(recording, eks)))
    assert violation[0] == "eks-cluster-endpoint-restricted"
    assert f"does not carry the tag {OPEN_ENDPOINT_TAG}=true" in violation[1]


def test_a_requested_key_that_the_program_loses_is_refused(recording_of):
    recording = recording_of("prod")
    eks = recording.one(EKS_COMPONENT)
    inputs = {key: value for key, value in eks.inputs.items() if key != "encryptionConfigKeyArn"}
    lost = with_inputs(recording, EKS_COMPONENT, eks.name, inputs)
    (violation,) = violations_of(eks.type, dict(recorded_props_of(lost, lost.one(EKS_COMPONENT))))
    assert violation[0] == "eks-cluster-secrets-encrypted-with-kms"


def recorded_props_of(recording, resource) -> dict:
    return next(props for registered, props in recorded_props(recording) if registered is resource)


def test_a_launch_template_that_lets_pods_reach_the_metadata_service_is_refused(recording_of):
    template = recording_of("dev").one("aws:ec2/launchTemplate:LaunchTemplate", "cluster-system-nodes")
    props = dict(recorded_props_of(recording_of("dev"), template))
    assert props["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert violations_of(template.type, props) == []
    two_hops = {**props, "metadataOptions": {**props["metadataOptions"], "httpPutResponseHopLimit": 2}}
    ((rule, message),) = violations_of(template.type, two_hops)
    assert rule == "eks-nodes-require-imdsv2" and "httpPutResponseHopLimit is 2" in message


# --- the test app's ALB ---------------------------------------------------------------------------

INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"


def _ingress_violations(overrides: dict) -> list[tuple[str, str]]:
    recording = run_program("dev", {"app": {"ingress": overrides}})
    ingress = recording.one(INGRESS)
    return violations_of(ingress.type, recorded_props_of(recording, ingress))


def test_an_internet_facing_app_open_to_everyone_is_flagged_unless_acknowledged():
    ((rule, message),) = _ingress_violations({"acknowledgeOpenToInternet": False})
    assert rule == "ingress-not-open-to-internet"
    assert "internet-facing ALB open to 0.0.0.0/0" in message
    assert "eks-autoscaling/app.ingress.acknowledgeOpenToInternet=true" in message
    # The gate that runs the pack's rules over the plan fails with it.
    recording = run_program("dev", {"app": {"ingress": {"acknowledgeOpenToInternet": False}}})
    result = policy_pack_rules(recording)
    assert not result.passed
    assert any("ingress-not-open-to-internet" in finding for finding in result.findings)


@pytest.mark.parametrize(
    "ingress",
    [
        {"acknowledgeOpenToInternet": False, "inboundCidrs": ["198.51.100.7/32", "203.0.113.0/24"]},
        {"acknowledgeOpenToInternet": False, "scheme": "internal"},
    ],
    ids=["limited", "internal"],
)
def test_a_limited_or_internal_app_passes(ingress):
    assert _ingress_violations(ingress) == []


def test_the_dev_stack_acknowledges_its_open_alb(recording_of):
    annotations = recording_of("dev").one(INGRESS).input("metadata.annotations")
    assert annotations["alb.ingress.kubernetes.io/inbound-cidrs"] == "0.0.0.0/0"
    assert annotations["eks-autoscaling/app.ingress.acknowledgeOpenToInternet"] == "true"


def test_the_prod_stack_publishes_nothing(recording_of):
    prod = recording_of("prod")
    assert prod.of_type(INGRESS) == []
    assert prod.of_type("kubernetes:core/v1:Service") == []
