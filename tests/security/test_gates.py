"""The project's own gates: they pass on the real stacks and fail when one recorded resource is
made unsafe (an over-broad policy, a PassRole on *, a trust without aud, a root container...)."""

from __future__ import annotations

import copy
import json

import pytest

from security.gates import (
    iam_pass_role,
    iam_wildcard_actions,
    image_pull_policy,
    pod_security_restricted,
    run_gates,
    service_account_trust,
)
from tests.security.conftest import STACKS, with_inputs

POLICY = "aws:iam/policy:Policy"
ROLE = "aws:iam/role:Role"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NAMESPACE = "kubernetes:core/v1:Namespace"
LBC_POLICY = "identities-aws-load-balancer-controller-policy"
KARPENTER_ROLE = "identities-karpenter-role"


@pytest.mark.parametrize("stack", STACKS)
def test_every_gate_passes_on_the_real_stack(recording_of, stack):
    results = run_gates(recording_of(stack))
    assert [result.gate for result in results if not result.passed] == [], [r.findings for r in results]
    # Each gate looked at something: a gate that examines nothing would pass vacuously. prod
    # deploys no test app, so the program makes no pod of its own there for the pod gates.
    vacuous = {"pod-security-restricted", "image-pull-policy"} if stack == "prod" else set()
    assert [result.gate for result in results if result.examined.startswith("0 ") and result.gate not in vacuous] == []
    for result in results:
        if result.gate in vacuous:
            assert result.examined.startswith("0 "), result


def _with_policy(recording, name, statement):
    resource = recording.one(POLICY, name)
    document = json.loads(resource.input("policy"))
    document["Statement"].append(statement)
    return with_inputs(recording, POLICY, name, {**resource.inputs, "policy": json.dumps(document)})


def test_a_statement_allowing_every_action_fails(recording_of):
    broad = _with_policy(recording_of("dev"), LBC_POLICY, {"Effect": "Allow", "Action": "*", "Resource": "*"})
    (finding,) = iam_wildcard_actions(broad).findings
    assert finding.startswith(f"policies/{LBC_POLICY}.json: statement 16") and "wildcard action *" in finding


def test_a_service_wildcard_fails(recording_of):
    broad = _with_policy(recording_of("prod"), LBC_POLICY, {"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"})
    assert "wildcard action s3:*" in iam_wildcard_actions(broad).findings[0]


def test_not_action_fails(recording_of):
    broad = _with_policy(recording_of("dev"), LBC_POLICY, {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})
    assert "NotAction" in iam_wildcard_actions(broad).findings[0]


def test_pass_role_on_every_role_fails(recording_of):
    open_pass = _with_policy(
        recording_of("dev"),
        "identities-karpenter-iam-integration",
        {"Sid": "PassAnything", "Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
    )
    (finding,) = iam_pass_role(open_pass).findings
    assert "(PassAnything)" in finding and "iam:PassRole on wildcard resources" in finding


def test_pass_role_without_passed_to_service_fails(recording_of):
    unconditioned = _with_policy(
        recording_of("dev"),
        "identities-karpenter-iam-integration",
        {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::123456789012:role/nodes"},
    )
    assert "without an iam:PassedToService condition" in iam_pass_role(unconditioned).findings[0]


def _with_trust(recording, name, change):
    role = recording.one(ROLE, name)
    document = json.loads(role.input("assumeRolePolicy"))
    change(document)
    return with_inputs(recording, ROLE, name, {**role.inputs, "assumeRolePolicy": json.dumps(document)})


def test_irsa_trust_without_aud_fails(recording_of):
    def drop_aud(document):
        equals = document["Statement"][0]["Condition"]["StringEquals"]
        for key in [key for key in equals if key.endswith(":aud")]:
            del equals[key]

    (finding,) = service_account_trust(_with_trust(recording_of("dev"), KARPENTER_ROLE, drop_aud)).findings
    assert finding.startswith(f"{KARPENTER_ROLE}: statement 0") and "<issuer>:aud" in finding


def test_irsa_trust_for_every_service_account_fails(recording_of):
    def any_account(document):
        condition = document["Statement"][0]["Condition"]
        condition["StringLike"] = {
            k: "system:serviceaccount:*" for k in condition["StringEquals"] if k.endswith(":sub")
        }
        for key in condition["StringLike"]:
            del condition["StringEquals"][key]

    assert service_account_trust(_with_trust(recording_of("dev"), KARPENTER_ROLE, any_account)).findings


def test_pod_identity_trust_that_adds_a_principal_fails(recording_of):
    def add_ec2(document):
        document["Statement"][0]["Principal"]["Service"] = ["pods.eks.amazonaws.com", "ec2.amazonaws.com"]

    (finding,) = service_account_trust(_with_trust(recording_of("prod"), KARPENTER_ROLE, add_ec2)).findings
    assert "pods.eks.amazonaws.com alone" in finding


def test_a_service_account_role_trusting_something_else_fails(recording_of):
    def trust_ec2(document):
        document["Statement"] = [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ]

    (finding,) = service_account_trust(_with_trust(recording_of("prod"), KARPENTER_ROLE, trust_ec2)).findings
    assert "trusts neither a cluster OIDC provider (IRSA) nor pods.eks.amazonaws.com" in finding


def _without_run_as_non_root(pod):
    pod["securityContext"].pop("runAsNonRoot")
    pod["containers"][0]["securityContext"].pop("runAsNonRoot")


def _with_pod(recording, change):
    deployment = recording.one(DEPLOYMENT)
    inputs = copy.deepcopy(deployment.inputs)
    change(inputs["spec"]["template"]["spec"])
    return with_inputs(recording, DEPLOYMENT, deployment.name, inputs)


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda pod: pod["containers"][0]["securityContext"].update(runAsUser=0), "runAsUser is 0 (root)"),
        (lambda pod: pod["securityContext"].update(runAsUser=0), "pod: runAsUser: securityContext.runAsUser is 0"),
        (_without_run_as_non_root, "runAsNonRoot must be true"),
        (lambda pod: pod["containers"][0]["securityContext"].update(privileged=True), "privileged is true"),
        (lambda pod: pod["securityContext"].pop("seccompProfile"), "no seccompProfile"),
    ],
    ids=["root container", "root pod", "non-root not required", "privileged", "missing seccomp"],
)
def test_an_unsafe_test_app_pod_fails(recording_of, change, expected):
    findings = pod_security_restricted(_with_pod(recording_of("dev"), change)).findings
    assert findings and all(f.startswith("Deployment test-app/test-app: ") for f in findings)
    assert any(expected in finding for finding in findings), findings


def test_a_namespace_that_does_not_enforce_restricted_fails(recording_of):
    recording = recording_of("dev")
    namespace = recording.one(NAMESPACE, "workload-namespace")
    inputs = copy.deepcopy(namespace.inputs)
    inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "baseline"
    (finding,) = pod_security_restricted(with_inputs(recording, NAMESPACE, namespace.name, inputs)).findings
    assert "does not set pod-security.kubernetes.io/enforce: restricted" in finding


@pytest.mark.parametrize(
    "image, policy",
    [
        ("ghcr.io/mccutchen/go-httpbin:2.25.0", "IfNotPresent"),
        ("ghcr.io/mccutchen/go-httpbin:2.25.0", "Never"),
        ("ghcr.io/mccutchen/go-httpbin:2.25.0", None),  # the kubelet's default for a tag is IfNotPresent
    ],
    ids=["IfNotPresent", "Never", "default"],
)
def test_a_tag_pinned_image_not_pulled_always_fails(recording_of, image, policy):
    def change(pod):
        container = pod["containers"][0]
        container["image"] = image
        if policy is None:
            container.pop("imagePullPolicy", None)
        else:
            container["imagePullPolicy"] = policy

    (finding,) = image_pull_policy(_with_pod(recording_of("dev"), change)).findings
    assert finding.startswith(
        "Deployment test-app/test-app: container httpbin pulls ghcr.io/mccutchen/go-httpbin:2.25.0"
    )
    assert "must be pulled Always" in finding


def test_a_digest_pinned_image_may_be_pulled_if_not_present(recording_of):
    digest = "ghcr.io/mccutchen/go-httpbin:2.25.0@sha256:" + "0" * 64

    def change(pod):
        pod["containers"][0].update(image=digest, imagePullPolicy="IfNotPresent")

    result = image_pull_policy(_with_pod(recording_of("dev"), change))
    assert result.passed and result.examined == "1 container"


def test_the_test_app_is_pulled_always(recording_of):
    (container,) = recording_of("dev").one(DEPLOYMENT).input("spec.template.spec.containers")
    assert container["imagePullPolicy"] == "Always"
