"""Trust policies: who may assume the controller and node roles.

A controller role is assumed either through IRSA (the cluster's OIDC provider
federates the service account token) or through EKS Pod Identity (the EKS
Auth service assumes the role for the pod). The stack picks one mode per
deployment; `IDENTITY_MODES` names them as the stack configuration spells them.
"""

from __future__ import annotations

from typing import Literal

from iam import _validation
from iam.errors import IamInputError

IdentityMode = Literal["irsa", "podIdentity"]
IDENTITY_MODES: tuple[IdentityMode, ...] = ("irsa", "podIdentity")

POLICY_VERSION = "2012-10-17"
STS_AUDIENCE = "sts.amazonaws.com"
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"

_HTTPS = "https://"


def validate_identity_mode(mode: object) -> IdentityMode:
    """Return `mode` if it is one of `IDENTITY_MODES`, else raise `IamInputError`."""
    if mode not in IDENTITY_MODES:
        raise IamInputError("identity_mode", mode, "one of " + ", ".join(IDENTITY_MODES))
    return mode


def issuer_host_path(issuer_url: str) -> str:
    """The issuer as IAM names it in condition keys: host and path, no scheme.

    Accepts the URL EKS reports (`https://oidc.eks.<region>.amazonaws.com/id/<ID>`)
    or the same without `https://`.
    """
    allowed = "an OIDC issuer URL such as https://oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE"
    if not isinstance(issuer_url, str):
        raise IamInputError("issuer_url", issuer_url, allowed)
    host_path = issuer_url[len(_HTTPS) :] if issuer_url.startswith(_HTTPS) else issuer_url
    host = host_path.split("/", 1)[0]
    if (
        not host_path
        or "://" in host_path
        or host_path.endswith("/")
        or "." not in host
        or any(c.isspace() for c in host_path)
    ):
        raise IamInputError("issuer_url", issuer_url, allowed)
    return host_path


def irsa_trust_policy(oidc_provider_arn: str, issuer_url: str, namespace: str, service_account: str) -> dict:
    """Trust for IRSA, limited to one service account and to the STS audience.

    Pinning both `:sub` and `:aud` follows the EKS Best Practices Guide; the
    provider ARN must be the one registered for `issuer_url`, otherwise the
    condition keys would never match and the role could not be assumed.
    """
    host_path = issuer_host_path(issuer_url)
    _validation.namespace(namespace)
    _validation.service_account(service_account)
    _require_provider_for_issuer(oidc_provider_arn, host_path)
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{host_path}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                        f"{host_path}:aud": STS_AUDIENCE,
                    }
                },
            }
        ],
    }


def pod_identity_trust_policy() -> dict:
    """Trust for EKS Pod Identity, as the EKS User Guide gives it ("pod-id-role").

    Pod Identity needs sts:TagSession besides sts:AssumeRole because it passes
    session tags (cluster, namespace, service account) when assuming the role.
    Which service account gets the role is decided by the Pod Identity
    association, whose creation requires iam:PassRole on the role.
    """
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_SERVICE},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }


def ec2_trust_policy(dns_suffix: str = "amazonaws.com") -> dict:
    """Trust for a node role: EC2 instances in the partition whose DNS suffix is given.

    The suffix is `amazonaws.com.cn` in the China regions (CloudFormation's
    AWS::URLSuffix).
    """
    _validation.dns_suffix(dns_suffix)
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": f"ec2.{dns_suffix}"},
                "Action": ["sts:AssumeRole"],
            }
        ],
    }


def _require_provider_for_issuer(oidc_provider_arn: object, host_path: str) -> None:
    allowed = (
        "the ARN of the IAM OIDC provider for this issuer: "
        f"arn:<partition>:iam::<account id>:oidc-provider/{host_path}"
    )
    if not isinstance(oidc_provider_arn, str):
        raise IamInputError("oidc_provider_arn", oidc_provider_arn, allowed)
    parts = oidc_provider_arn.split(":", 5)
    if (
        len(parts) != 6
        or parts[0] != "arn"
        or parts[1] not in _validation.PARTITIONS
        or parts[2] != "iam"
        or parts[3] != ""
        or not parts[4].isdigit()
        or len(parts[4]) != 12
        or parts[5] != f"oidc-provider/{host_path}"
    ):
        raise IamInputError("oidc_provider_arn", oidc_provider_arn, allowed)
