"""IAM for Karpenter: the controller's managed policies and the node role.

The statements reproduce the reference CloudFormation that Karpenter publishes
with its getting-started guide (aws/karpenter-provider-aws v1.14.1,
`website/content/en/docs/getting-started/getting-started-with-karpenter/cloudformation.yaml`),
with the same Sids and the same split into managed policies. That split exists
because all statements together can exceed the 6,144-character limit of one
managed policy (aws/karpenter-provider-aws#7874).

The policy changes between Karpenter releases (new actions, new conditions),
so documents are produced only for the versions listed in `SUPPORTED_VERSIONS`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from iam import _validation
from iam.documents import MANAGED_POLICY_CHARACTER_LIMIT, require_within_limit
from iam.errors import IamInputError, UnsupportedVersionError

POLICY_VERSION = "2012-10-17"

# AWS managed policies of the node role, as ARN suffixes.
NODE_ROLE_MANAGED_POLICIES = (
    "AmazonEKS_CNI_Policy",
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
)

# Keys of `controller_policies`, in the order of the reference template.
NODE_LIFECYCLE = "node-lifecycle"
IAM_INTEGRATION = "iam-integration"
EKS_INTEGRATION = "eks-integration"
INTERRUPTION = "interruption"
ZONAL_SHIFT = "zonal-shift"
RESOURCE_DISCOVERY = "resource-discovery"


def aws_managed_policy_arn(name: str, partition: str = "aws") -> str:
    """`arn:<partition>:iam::aws:policy/<name>` for an AWS managed policy."""
    _validation.partition(partition)
    if not isinstance(name, str) or not re.fullmatch(r"([\w+=,.@-]+/)*[\w+=,.@-]{1,128}", name, re.ASCII):
        raise IamInputError("name", name, "an AWS managed policy name such as AmazonEKSWorkerNodePolicy")
    return f"arn:{partition}:iam::aws:policy/{name}"


def node_role_managed_policy_arns(partition: str = "aws") -> tuple[str, ...]:
    """ARNs of the AWS managed policies the Karpenter node role needs."""
    return tuple(aws_managed_policy_arn(name, partition) for name in NODE_ROLE_MANAGED_POLICIES)


def controller_policies(
    version: str,
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    node_role_arn: str,
    queue_arn: str,
    zonal_shift: bool = False,
) -> dict[str, dict]:
    """The controller's managed policies for Karpenter `version`, keyed by short name.

    Keys: "node-lifecycle", "iam-integration", "eks-integration",
    "interruption", "resource-discovery", plus "zonal-shift" when
    `zonal_shift` is true (only needed when Karpenter should honour ARC zonal
    shifts). Each document is checked against the managed-policy size limit.
    """
    builder = _builder_for(version)
    _validation.partition(partition)
    _validation.region(region)
    _validation.account_id(account_id)
    _validation.cluster_name(cluster_name)
    _validation.role_arn(node_role_arn, partition=partition, account_id=account_id, argument="node_role_arn")
    _validation.queue_arn(
        queue_arn, partition=partition, region=region, account_id=account_id, argument="queue_arn"
    )
    if not isinstance(zonal_shift, bool):
        raise IamInputError("zonal_shift", zonal_shift, "True or False")
    scope = _Scope(partition, region, account_id, cluster_name, node_role_arn, queue_arn)
    # The builder shares condition blocks between statements; a JSON round trip
    # gives every statement its own objects (copy.deepcopy would keep the
    # sharing), so callers may change one document without touching another.
    statements = json.loads(json.dumps(builder(scope)))
    if not zonal_shift:
        del statements[ZONAL_SHIFT]
    return {
        name: require_within_limit(
            name,
            {"Version": POLICY_VERSION, "Statement": body},
            MANAGED_POLICY_CHARACTER_LIMIT,
            hint="a shorter cluster name shortens the tag conditions",
        )
        for name, body in statements.items()
    }


@dataclass(frozen=True)
class _Scope:
    """The values substituted into the statements, and the ARNs built from them."""

    partition: str
    region: str
    account_id: str
    cluster: str
    node_role_arn: str
    queue_arn: str

    @property
    def cluster_arn(self) -> str:
        return f"arn:{self.partition}:eks:{self.region}:{self.account_id}:cluster/{self.cluster}"

    @property
    def instance_profiles(self) -> str:
        return f"arn:{self.partition}:iam::{self.account_id}:instance-profile/*"

    def ec2(self, resource: str, *, account: str = "*") -> str:
        return f"arn:{self.partition}:ec2:{self.region}:{account}:{resource}"


def _statements_v1_14(s: _Scope) -> dict[str, list[dict]]:
    owned_by_cluster = f"kubernetes.io/cluster/{s.cluster}"
    created_resources = [
        s.ec2("fleet/*"),
        s.ec2("instance/*"),
        s.ec2("volume/*"),
        s.ec2("network-interface/*"),
        s.ec2("launch-template/*"),
        s.ec2("spot-instances-request/*"),
    ]
    request_tagged_for_cluster = {
        f"aws:RequestTag/{owned_by_cluster}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": s.cluster,
    }
    resource_owned_by_nodepool = {
        "StringEquals": {f"aws:ResourceTag/{owned_by_cluster}": "owned"},
        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
    }
    node_lifecycle: list[dict] = [
        {
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Effect": "Allow",
            "Resource": [
                s.ec2("image/*", account=""),
                s.ec2("snapshot/*", account=""),
                s.ec2("security-group/*"),
                s.ec2("subnet/*"),
                s.ec2("capacity-reservation/*"),
                s.ec2("placement-group/*"),
            ],
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Effect": "Allow",
            "Resource": s.ec2("launch-template/*"),
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Condition": resource_owned_by_nodepool,
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Effect": "Allow",
            "Resource": created_resources,
            "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            "Condition": {
                "StringEquals": request_tagged_for_cluster,
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Effect": "Allow",
            "Resource": created_resources,
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {
                    **request_tagged_for_cluster,
                    "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                },
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Effect": "Allow",
            "Resource": s.ec2("instance/*"),
            "Action": "ec2:CreateTags",
            "Condition": {
                **resource_owned_by_nodepool,
                "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": s.cluster},
                "ForAllValues:StringEquals": {
                    "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                },
            },
        },
        {
            "Sid": "AllowScopedDeletion",
            "Effect": "Allow",
            "Resource": [s.ec2("instance/*"), s.ec2("launch-template/*")],
            "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Condition": resource_owned_by_nodepool,
        },
    ]

    profile_owned_in_region = {
        f"aws:ResourceTag/{owned_by_cluster}": "owned",
        "aws:ResourceTag/topology.kubernetes.io/region": s.region,
    }
    profile_request_tags = {
        **request_tagged_for_cluster,
        "aws:RequestTag/topology.kubernetes.io/region": s.region,
    }
    iam_integration = [
        {
            "Sid": "AllowPassingInstanceRole",
            "Effect": "Allow",
            "Resource": s.node_role_arn,
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
        },
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Effect": "Allow",
            "Resource": s.instance_profiles,
            "Action": ["iam:CreateInstanceProfile"],
            "Condition": {
                "StringEquals": profile_request_tags,
                "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Effect": "Allow",
            "Resource": s.instance_profiles,
            "Action": ["iam:TagInstanceProfile"],
            "Condition": {
                "StringEquals": {**profile_owned_in_region, **profile_request_tags},
                "StringLike": {
                    "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                },
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Effect": "Allow",
            "Resource": s.instance_profiles,
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            "Condition": {
                "StringEquals": profile_owned_in_region,
                "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
            },
        },
    ]

    eks_integration = [
        {
            "Sid": "AllowAPIServerEndpointDiscovery",
            "Effect": "Allow",
            "Resource": s.cluster_arn,
            "Action": "eks:DescribeCluster",
        }
    ]

    interruption = [
        {
            "Sid": "AllowInterruptionQueueActions",
            "Effect": "Allow",
            "Resource": s.queue_arn,
            "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
        }
    ]

    zonal_shift = [
        {
            "Sid": "AllowZonalShiftStatusReadOnly",
            "Effect": "Allow",
            "Resource": "*",
            "Action": ["arc-zonal-shift:GetManagedResource"],
            "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": s.cluster_arn}},
        }
    ]

    resource_discovery: list[dict] = [
        {
            "Sid": "AllowRegionalReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": [
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstances",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            ],
            "Condition": {"StringEquals": {"aws:RequestedRegion": s.region}},
        },
        {
            "Sid": "AllowSSMReadActions",
            "Effect": "Allow",
            "Resource": f"arn:{s.partition}:ssm:{s.region}::parameter/aws/service/*",
            "Action": "ssm:GetParameter",
        },
        {
            "Sid": "AllowPricingReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": "pricing:GetProducts",
        },
        {
            "Sid": "AllowUnscopedInstanceProfileListAction",
            "Effect": "Allow",
            "Resource": "*",
            "Action": "iam:ListInstanceProfiles",
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Effect": "Allow",
            "Resource": s.instance_profiles,
            "Action": "iam:GetInstanceProfile",
        },
    ]

    return {
        NODE_LIFECYCLE: node_lifecycle,
        IAM_INTEGRATION: iam_integration,
        EKS_INTEGRATION: eks_integration,
        INTERRUPTION: interruption,
        ZONAL_SHIFT: zonal_shift,
        RESOURCE_DISCOVERY: resource_discovery,
    }


# The reference template is identical for 1.14.0 and 1.14.1.
_BUILDERS: Mapping[str, Callable[[_Scope], dict[str, list[dict]]]] = MappingProxyType(
    {"1.14.0": _statements_v1_14, "1.14.1": _statements_v1_14}
)
SUPPORTED_VERSIONS: tuple[str, ...] = tuple(_BUILDERS)


def _builder_for(version: object) -> Callable[[_Scope], dict[str, list[dict]]]:
    builder = _BUILDERS.get(version) if isinstance(version, str) else None
    if builder is None:
        supported = ", ".join(SUPPORTED_VERSIONS)
        raise UnsupportedVersionError(
            "version",
            version,
            supported,
            message=f"no controller IAM policy bundled for Karpenter {version}; bundled: {supported}",
        )
    return builder


# Kubernetes minor versions each Karpenter release supports, from
# aws/karpenter-provider-aws v1.14.1 hack/docs/compatibilitymatrix_gen/compatibility.yaml.
# Rows: (first Karpenter version, last Karpenter version, oldest and newest
# Kubernetes minor). A last version without patch covers every patch of it.
_COMPATIBILITY = (
    ("0.28.0", "0.30", "1.23", "1.27"),
    ("0.31.0", "0.33", "1.23", "1.28"),
    ("0.34.0", "0.36", "1.23", "1.29"),
    ("0.37.0", "0.37", "1.23", "1.30"),
    ("1.0.0", "1.0.4", "1.25", "1.30"),
    ("1.0.5", "1.1", "1.25", "1.31"),
    ("1.2.0", "1.4", "1.25", "1.32"),
    ("1.5.0", "1.5", "1.26", "1.33"),
    ("1.6.0", "1.8", "1.26", "1.34"),
    ("1.9.0", "1.12", "1.26", "1.35"),
    ("1.13.0", "1.14", "1.26", "1.36"),
)
_ANY_PATCH = 10**9
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


class IncompatibleVersionsError(IamInputError):
    """A Kubernetes version outside what the chosen Karpenter release supports."""


def kubernetes_range(karpenter_version: str) -> tuple[str, str]:
    """Oldest and newest Kubernetes minor supported by `karpenter_version` ("1.14.1" or "1.14")."""
    major, minor, patch = _parse_version("karpenter_version", karpenter_version)
    lowest = (major, minor, 0 if patch is None else patch)
    highest = (major, minor, _ANY_PATCH if patch is None else patch)
    for first, last, oldest, newest in _COMPATIBILITY:
        start, end = _bound(first, 0), _bound(last, _ANY_PATCH)
        if start <= lowest and highest <= end:
            return oldest, newest
        if start <= lowest <= end or start <= highest <= end:
            raise IamInputError(
                "karpenter_version",
                karpenter_version,
                "a full version (such as 1.0.5): the supported Kubernetes versions differ between its patches",
            )
    covered = f"{_COMPATIBILITY[0][0]} to {_COMPATIBILITY[-1][1]}.x"
    raise UnsupportedVersionError(
        "karpenter_version",
        karpenter_version,
        covered,
        message=f"no compatibility data for Karpenter {karpenter_version}; the bundled matrix covers {covered}",
    )


def karpenter_supports_kubernetes(karpenter_version: str, kubernetes_version: str) -> bool:
    """Whether Karpenter `karpenter_version` supports Kubernetes `kubernetes_version` ("1.35" or "1.35.2")."""
    oldest, newest = kubernetes_range(karpenter_version)
    major, minor, _ = _parse_version("kubernetes_version", kubernetes_version)
    return _bound(oldest, 0)[:2] <= (major, minor) <= _bound(newest, 0)[:2]


def require_karpenter_supports_kubernetes(karpenter_version: str, kubernetes_version: str) -> None:
    """Raise `IncompatibleVersionsError` unless the two versions are supported together."""
    if not karpenter_supports_kubernetes(karpenter_version, kubernetes_version):
        oldest, newest = kubernetes_range(karpenter_version)
        raise IncompatibleVersionsError(
            "kubernetes_version",
            kubernetes_version,
            f"{oldest} to {newest}",
            message=(
                f"Karpenter {karpenter_version} supports Kubernetes {oldest} to {newest}; "
                f"kubernetes_version={kubernetes_version!r} is outside that range"
            ),
        )


def _parse_version(argument: str, value: object) -> tuple[int, int, int | None]:
    match = _VERSION.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise IamInputError(argument, value, "a version such as 1.14.1 or 1.14 (no leading 'v')")
    major, minor, patch = match.groups()
    return int(major), int(minor), None if patch is None else int(patch)


def _bound(text: str, missing_patch: int) -> tuple[int, int, int]:
    major, minor, patch = _parse_version("bound", text)
    return major, minor, missing_patch if patch is None else patch
