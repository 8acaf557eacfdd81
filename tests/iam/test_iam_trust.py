"""Trust policies for IRSA, Pod Identity and EC2 nodes."""

from __future__ import annotations

import pytest

from iam.documents import ROLE_TRUST_POLICY_CHARACTER_LIMIT, policy_size, trust_has_sub_and_aud
from iam.errors import IamInputError
from iam.trust import (
    IDENTITY_MODES,
    ec2_trust_policy,
    irsa_trust_policy,
    issuer_host_path,
    pod_identity_trust_policy,
    validate_identity_mode,
)

ISSUER_HOST_PATH = "oidc.eks.eu-west-3.amazonaws.com/id/5C1B2F0E9A7D4C3B8E6F1A2D3C4B5A69"
PROVIDER_ARN = f"arn:aws:iam::111122223333:oidc-provider/{ISSUER_HOST_PATH}"


@pytest.mark.parametrize("issuer", [f"https://{ISSUER_HOST_PATH}", ISSUER_HOST_PATH])
def test_irsa_trust_policy_is_exact_with_or_without_scheme(issuer):
    assert irsa_trust_policy(PROVIDER_ARN, issuer, "kube-system", "karpenter") == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {
                    "Federated": "arn:aws:iam::111122223333:oidc-provider/"
                    "oidc.eks.eu-west-3.amazonaws.com/id/5C1B2F0E9A7D4C3B8E6F1A2D3C4B5A69"
                },
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        "oidc.eks.eu-west-3.amazonaws.com/id/5C1B2F0E9A7D4C3B8E6F1A2D3C4B5A69:sub": (
                            "system:serviceaccount:kube-system:karpenter"
                        ),
                        "oidc.eks.eu-west-3.amazonaws.com/id/5C1B2F0E9A7D4C3B8E6F1A2D3C4B5A69:aud": (
                            "sts.amazonaws.com"
                        ),
                    }
                },
            }
        ],
    }


def test_irsa_trust_policy_passes_the_sub_and_aud_check_and_fits_a_role():
    document = irsa_trust_policy(PROVIDER_ARN, ISSUER_HOST_PATH, "kube-system", "aws-load-balancer-controller")
    assert trust_has_sub_and_aud(document)
    assert policy_size(document) <= ROLE_TRUST_POLICY_CHARACTER_LIMIT


def test_pod_identity_trust_policy_is_exact():
    assert pod_identity_trust_policy() == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }


def test_pod_identity_trust_policy_is_a_new_dict_each_call():
    first = pod_identity_trust_policy()
    first["Statement"][0]["Action"].append("sts:SetSourceIdentity")
    assert pod_identity_trust_policy()["Statement"][0]["Action"] == ["sts:AssumeRole", "sts:TagSession"]


@pytest.mark.parametrize(
    ("dns_suffix", "service"),
    [("amazonaws.com", "ec2.amazonaws.com"), ("amazonaws.com.cn", "ec2.amazonaws.com.cn")],
)
def test_ec2_trust_policy_names_the_partition_service(dns_suffix, service):
    assert ec2_trust_policy(dns_suffix) == {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": ["sts:AssumeRole"]}],
    }


def test_ec2_trust_policy_defaults_to_the_commercial_partition():
    assert ec2_trust_policy()["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}


def test_ec2_trust_policy_rejects_a_bad_suffix():
    with pytest.raises(IamInputError, match=r"dns_suffix='amazonaws com'.*amazonaws\.com"):
        ec2_trust_policy("amazonaws com")


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"issuer_url": f"http://{ISSUER_HOST_PATH}"}, "issuer_url"),
        ({"issuer_url": f"https://{ISSUER_HOST_PATH}/"}, "issuer_url"),
        ({"issuer_url": ""}, "issuer_url"),
        ({"namespace": "Kube_System"}, "namespace"),
        ({"service_account": "karpenter*"}, "service_account"),
        ({"service_account": ""}, "service_account"),
        (
            {"oidc_provider_arn": "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X"},
            "oidc_provider_arn",
        ),
        ({"oidc_provider_arn": "*"}, "oidc_provider_arn"),
    ],
)
def test_irsa_trust_policy_rejects_bad_arguments_naming_them(kwargs, argument):
    arguments = {
        "oidc_provider_arn": PROVIDER_ARN,
        "issuer_url": ISSUER_HOST_PATH,
        "namespace": "kube-system",
        "service_account": "karpenter",
        **kwargs,
    }
    with pytest.raises(IamInputError, match=rf"^{argument}=") as raised:
        irsa_trust_policy(**arguments)
    assert raised.value.argument == argument
    assert raised.value.value == kwargs[argument]


def test_issuer_host_path_strips_only_https():
    assert issuer_host_path(f"https://{ISSUER_HOST_PATH}") == ISSUER_HOST_PATH
    assert issuer_host_path(ISSUER_HOST_PATH) == ISSUER_HOST_PATH


def test_identity_modes_are_validated():
    assert IDENTITY_MODES == ("irsa", "podIdentity")
    for mode in IDENTITY_MODES:
        assert validate_identity_mode(mode) == mode
    with pytest.raises(IamInputError, match=r"identity_mode='pod-identity'.*irsa, podIdentity"):
        validate_identity_mode("pod-identity")
