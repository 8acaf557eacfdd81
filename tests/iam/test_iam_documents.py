"""Policy size and the security checks, on crafted bad documents and on the real ones."""

from __future__ import annotations

import json

import pytest

from iam.documents import (
    Finding,
    mutating_ec2_actions_without_condition,
    policy_size,
    require_within_limit,
    statements_allowing_wildcard_action,
    trust_has_sub_and_aud,
    unscoped_pass_role,
)
from iam.errors import PolicySizeError
from iam.karpenter import controller_policies
from iam.load_balancer_controller import controller_policy
from iam.trust import ec2_trust_policy, irsa_trust_policy, pod_identity_trust_policy

ISSUER = "oidc.eks.eu-west-3.amazonaws.com/id/ABCDEF0123456789"
PROVIDER = f"arn:aws:iam::111122223333:oidc-provider/{ISSUER}"


def policy(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


@pytest.fixture
def real_identity_policies(karpenter_args) -> dict[str, dict]:
    documents = {
        f"karpenter/{name}": document
        for name, document in controller_policies("1.14.1", zonal_shift=True, **karpenter_args).items()
    }
    documents["aws-load-balancer-controller"] = controller_policy("3.5.0")
    return documents


def test_policy_size_ignores_whitespace():
    document = policy({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
    compact = json.dumps(document, separators=(",", ":"))
    assert policy_size(document) == len(compact)
    assert policy_size(json.loads(json.dumps(document, indent=4))) == len(compact)


def test_require_within_limit_returns_small_documents_and_refuses_large_ones():
    small = policy({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
    assert require_within_limit("small", small) is small
    large = policy(
        *(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::bucket-{i:04d}/*"}
            for i in range(200)
        )
    )
    with pytest.raises(
        PolicySizeError, match=r"^policy 'large' is \d+ characters without whitespace, over the IAM limit of 6144"
    ):
        require_within_limit("large", large)


@pytest.mark.parametrize(
    "statement",
    [
        {"Sid": "All", "Effect": "Allow", "Action": "*", "Resource": "*"},
        {"Sid": "All", "Effect": "Allow", "Action": ["s3:GetObject", "ec2:*"], "Resource": "*"},
        {"Sid": "All", "Effect": "Allow", "Action": "iam:Get?ole", "Resource": "*"},
        {"Sid": "All", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
    ],
)
def test_wildcard_actions_are_flagged(statement):
    findings = statements_allowing_wildcard_action(
        policy({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}, statement)
    )
    assert [(f.statement_index, f.sid) for f in findings] == [(1, "All")]


def test_wildcard_in_a_deny_is_not_flagged():
    assert statements_allowing_wildcard_action(policy({"Effect": "Deny", "Action": "sqs:*", "Resource": "*"})) == []


@pytest.mark.parametrize(
    ("statement", "reason"),
    [
        (
            {
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": "*",
                "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
            },
            "wildcard",
        ),
        (
            {
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": "arn:aws:iam::111122223333:role/*",
                "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
            },
            "wildcard",
        ),
        (
            {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111122223333:role/node"},
            "PassedToService",
        ),
        ({"Effect": "Allow", "Action": "iam:*", "Resource": "arn:aws:iam::111122223333:role/node"}, "PassedToService"),
        (
            {
                "Effect": "Allow",
                "Action": "IAM:passrole",
                "Resource": "arn:aws:iam::111122223333:role/node",
                "Condition": {"StringEquals": {"aws:RequestedRegion": "eu-west-3"}},
            },
            "PassedToService",
        ),
        (
            {"Effect": "Allow", "NotAction": "s3:*", "Resource": "arn:aws:iam::111122223333:role/node"},
            "PassedToService",
        ),
    ],
)
def test_unscoped_pass_role_is_flagged(statement, reason):
    findings = unscoped_pass_role(policy(statement))
    assert len(findings) == 1 and reason in findings[0].detail


def test_scoped_pass_role_passes():
    scoped = {
        "Effect": "Allow",
        "Action": "iam:PassRole",
        "Resource": "arn:aws:iam::111122223333:role/node",
        "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
    }
    assert unscoped_pass_role(policy(scoped)) == []


@pytest.mark.parametrize(
    ("statement", "flagged"),
    [
        (
            {"Effect": "Allow", "Action": ["ec2:DescribeInstances", "ec2:TerminateInstances"], "Resource": "*"},
            ["ec2:TerminateInstances"],
        ),
        ({"Effect": "Allow", "Action": "ec2:*", "Resource": "*"}, ["ec2:*"]),
        (
            {"Effect": "Allow", "Action": "ec2:RunInstances", "Resource": "arn:aws:ec2:eu-west-3:*:instance/*"},
            ["ec2:RunInstances"],
        ),
        (
            {
                "Effect": "Allow",
                "Action": "ec2:DeleteSecurityGroup",
                "Resource": "arn:aws:ec2:eu-west-3:*:security-group/*",
            },
            ["ec2:DeleteSecurityGroup"],
        ),
    ],
)
def test_mutating_ec2_without_condition_is_flagged(statement, flagged):
    findings = mutating_ec2_actions_without_condition(policy(statement))
    assert [f.detail.split(" ", 1)[0] for f in findings] == flagged


def test_read_only_conditioned_and_launch_reference_statements_pass():
    document = policy(
        {"Effect": "Allow", "Action": ["ec2:DescribeSubnets", "ec2:GetConsoleOutput"], "Resource": "*"},
        {
            "Effect": "Allow",
            "Action": "ec2:TerminateInstances",
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:ResourceTag/owner": "me"}},
        },
        {
            "Effect": "Allow",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Resource": ["arn:aws:ec2:eu-west-3::image/*", "arn:aws:ec2:eu-west-3:*:subnet/*"],
        },
        {"Effect": "Deny", "Action": "ec2:*", "Resource": "*"},
    )
    assert mutating_ec2_actions_without_condition(document) == []


def test_real_identity_policies_have_no_wildcard_actions_or_unscoped_pass_role(real_identity_policies):
    for name, document in real_identity_policies.items():
        assert statements_allowing_wildcard_action(document) == [], name
        assert unscoped_pass_role(document) == [], name


def test_mutating_ec2_check_passes_karpenter_and_reports_the_known_lbc_gap(real_identity_policies):
    lbc = real_identity_policies.pop("aws-load-balancer-controller")
    for name, document in real_identity_policies.items():
        assert mutating_ec2_actions_without_condition(document) == [], name
    # The published LBC policy leaves security-group ingress changes and
    # security-group creation unconditioned (statements 3 and 4 upstream).
    assert mutating_ec2_actions_without_condition(lbc) == [
        Finding(3, None, "ec2:AuthorizeSecurityGroupIngress allowed without a Condition on ['*']"),
        Finding(3, None, "ec2:RevokeSecurityGroupIngress allowed without a Condition on ['*']"),
        Finding(4, None, "ec2:CreateSecurityGroup allowed without a Condition on ['*']"),
    ]


def test_trust_check_passes_irsa():
    assert trust_has_sub_and_aud(irsa_trust_policy(PROVIDER, ISSUER, "kube-system", "karpenter"))


def _irsa_with(**changes) -> dict:
    document = irsa_trust_policy(PROVIDER, ISSUER, "kube-system", "karpenter")
    statement = document["Statement"][0]
    equals = statement["Condition"]["StringEquals"]
    if "drop" in changes:
        del equals[f"{ISSUER}:{changes['drop']}"]
    if "sub" in changes:
        equals[f"{ISSUER}:sub"] = changes["sub"]
    if "aud" in changes:
        equals[f"{ISSUER}:aud"] = changes["aud"]
    if "provider" in changes:
        statement["Principal"]["Federated"] = changes["provider"]
    return document


@pytest.mark.parametrize(
    "document",
    [
        _irsa_with(drop="aud"),
        _irsa_with(drop="sub"),
        _irsa_with(sub="system:serviceaccount:kube-system:*"),
        _irsa_with(sub=["system:serviceaccount:kube-system:a", "system:serviceaccount:kube-system:b"]),
        _irsa_with(aud="sts.example.com"),
        _irsa_with(provider="arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/OTHER"),
        pod_identity_trust_policy(),
        ec2_trust_policy(),
    ],
)
def test_trust_check_fails_documents_without_a_pinned_sub_and_aud(document):
    assert trust_has_sub_and_aud(document) is False
