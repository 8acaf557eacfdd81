"""Karpenter controller policies: scoping invariants, sizes, versions and arguments."""

from __future__ import annotations

import pytest

from iam.documents import (
    LAUNCH_REFERENCED_RESOURCE_TYPES,
    MANAGED_POLICY_CHARACTER_LIMIT,
    mutating_ec2_actions_without_condition,
    policy_size,
    statements_allowing_wildcard_action,
    unscoped_pass_role,
)
from iam.errors import IamInputError, UnsupportedVersionError
from iam.karpenter import (
    NODE_ROLE_MANAGED_POLICIES,
    SUPPORTED_VERSIONS,
    aws_managed_policy_arn,
    controller_policies,
    node_role_managed_policy_arns,
)

BASE_POLICIES = ["node-lifecycle", "iam-integration", "eks-integration", "interruption", "resource-discovery"]


def statements(policies: dict) -> list[dict]:
    return [statement for document in policies.values() for statement in document["Statement"]]


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def resource_type(arn: str) -> str:
    return arn.split(":", 5)[5].split("/", 1)[0]


@pytest.fixture
def policies(karpenter_args):
    return controller_policies("1.14.1", zonal_shift=True, **karpenter_args)


def test_policy_names_follow_the_reference_split_and_zonal_shift_is_opt_in(karpenter_args):
    assert list(controller_policies("1.14.1", **karpenter_args)) == BASE_POLICIES
    with_zonal_shift = controller_policies("1.14.1", zonal_shift=True, **karpenter_args)
    assert sorted(with_zonal_shift) == sorted(BASE_POLICIES + ["zonal-shift"])


def test_every_document_is_a_2012_policy_with_unique_sids(policies):
    sids = [statement["Sid"] for statement in statements(policies)]
    assert len(sids) == len(set(sids)) == 18
    assert {document["Version"] for document in policies.values()} == {"2012-10-17"}


def test_mutating_ec2_actions_carry_a_condition_unless_they_only_reference_launch_inputs(policies):
    checked = 0
    for statement in statements(policies):
        actions = [a for a in as_list(statement["Action"]) if a.startswith("ec2:")]
        mutating = [a for a in actions if not a.startswith(("ec2:Describe", "ec2:Get"))]
        if not mutating:
            continue
        checked += 1
        if "Condition" in statement:
            continue
        assert set(mutating) <= {"ec2:RunInstances", "ec2:CreateFleet"}, statement["Sid"]
        assert {resource_type(r) for r in as_list(statement["Resource"])} <= set(LAUNCH_REFERENCED_RESOURCE_TYPES)
    assert checked == 6


def test_resources_a_launch_creates_or_deletes_are_only_granted_under_conditions(policies):
    created = {"fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request"}
    for statement in statements(policies):
        types = {resource_type(r) for r in as_list(statement["Resource"]) if r.startswith("arn:aws:ec2:")}
        if types & created:
            assert "Condition" in statement, statement["Sid"]


def test_ec2_tag_conditions_name_this_cluster(policies, karpenter_args):
    cluster = karpenter_args["cluster_name"]
    by_sid = {statement["Sid"]: statement for statement in statements(policies)}
    with_tags = by_sid["AllowScopedEC2InstanceActionsWithTags"]["Condition"]["StringEquals"]
    assert with_tags == {
        f"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": cluster,
    }
    deletion = by_sid["AllowScopedDeletion"]["Condition"]
    assert deletion["StringEquals"] == {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}


def test_pass_role_names_only_the_node_role_and_only_to_ec2(policies, karpenter_args):
    pass_role = [s for s in statements(policies) if "iam:PassRole" in as_list(s["Action"])]
    assert len(pass_role) == 1
    assert pass_role[0]["Resource"] == karpenter_args["node_role_arn"]
    assert pass_role[0]["Condition"] == {
        "StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}
    }


def test_describe_cluster_only_on_this_cluster(policies, karpenter_args):
    cluster_arn = "arn:aws:eks:{region}:{account_id}:cluster/{cluster_name}".format(**karpenter_args)
    eks = [s for s in statements(policies) if any(a.startswith("eks:") for a in as_list(s["Action"]))]
    assert [(s["Action"], s["Resource"]) for s in eks] == [("eks:DescribeCluster", cluster_arn)]
    zonal = policies["zonal-shift"]["Statement"][0]
    assert zonal["Condition"] == {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}}


def test_sqs_actions_only_on_the_interruption_queue(policies, karpenter_args):
    sqs = [s for s in statements(policies) if any(a.startswith("sqs:") for a in as_list(s["Action"]))]
    assert len(sqs) == 1
    assert sqs[0]["Resource"] == karpenter_args["queue_arn"]
    assert sqs[0]["Action"] == ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"]


def test_describe_calls_are_limited_to_the_region(policies, karpenter_args):
    describing = [s for s in statements(policies) if any(a.startswith("ec2:Describe") for a in as_list(s["Action"]))]
    assert [s["Sid"] for s in describing] == ["AllowRegionalReadActions"]
    assert describing[0]["Condition"] == {"StringEquals": {"aws:RequestedRegion": karpenter_args["region"]}}
    assert "ec2:DescribeInstanceStatus" in describing[0]["Action"]


def test_ssm_reads_only_public_aws_service_parameters(policies, karpenter_args):
    ssm = [s for s in statements(policies) if s["Action"] == "ssm:GetParameter"]
    assert [s["Resource"] for s in ssm] == [f"arn:aws:ssm:{karpenter_args['region']}::parameter/aws/service/*"]


def test_instance_profile_changes_are_tag_scoped(policies, karpenter_args):
    profile_arn = f"arn:aws:iam::{karpenter_args['account_id']}:instance-profile/*"
    changing = [
        s
        for s in statements(policies)
        if any(
            a.startswith("iam:") and "InstanceProfile" in a and not a.startswith(("iam:Get", "iam:List"))
            for a in as_list(s["Action"])
        )
    ]
    assert len(changing) == 3
    for statement in changing:
        assert statement["Resource"] == profile_arn
        assert statement["Condition"]["StringLike"]


def test_policies_pass_the_document_checks(policies):
    for document in policies.values():
        assert statements_allowing_wildcard_action(document) == []
        assert unscoped_pass_role(document) == []
        assert mutating_ec2_actions_without_condition(document) == []


@pytest.mark.parametrize("cluster_name", ["a", "x" * 100])
def test_each_policy_fits_a_managed_policy_even_with_the_longest_cluster_name(karpenter_args, cluster_name):
    karpenter_args["cluster_name"] = cluster_name
    karpenter_args["queue_arn"] = karpenter_args["queue_arn"].rsplit(":", 1)[0] + ":" + cluster_name[:80]
    policies = controller_policies("1.14.1", zonal_shift=True, **karpenter_args)
    sizes = {name: policy_size(document) for name, document in policies.items()}
    assert all(size <= MANAGED_POLICY_CHARACTER_LIMIT for size in sizes.values()), sizes


def test_both_supported_versions_give_the_same_documents(karpenter_args):
    assert SUPPORTED_VERSIONS == ("1.14.0", "1.14.1")
    assert controller_policies("1.14.0", **karpenter_args) == controller_policies("1.14.1", **karpenter_args)


@pytest.mark.parametrize("version", ["1.13.2", "1.15.0", "v1.14.1", "1.14", None])
def test_unsupported_versions_are_refused_naming_the_supported_ones(karpenter_args, version):
    with pytest.raises(UnsupportedVersionError) as raised:
        controller_policies(version, **karpenter_args)
    assert str(raised.value) == (f"no controller IAM policy bundled for Karpenter {version}; bundled: 1.14.0, 1.14.1")


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("node_role_arn", "*"),
        ("node_role_arn", "arn:aws:iam::444455556666:role/KarpenterNodeRole-autoscaling-demo"),
        ("node_role_arn", "arn:aws:iam::111122223333:user/karpenter"),
        ("queue_arn", "arn:aws:sqs:us-east-1:111122223333:autoscaling-demo"),
        ("queue_arn", "*"),
        ("partition", "aws-china"),
        ("region", "eu west 3"),
        ("account_id", "1111-2222-3333"),
        ("cluster_name", "-leading-dash"),
        ("cluster_name", "x" * 101),
        ("zonal_shift", "yes"),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(karpenter_args, argument, value):
    karpenter_args[argument] = value
    with pytest.raises(IamInputError) as raised:
        controller_policies("1.14.1", **karpenter_args)
    assert raised.value.argument == argument
    assert str(raised.value).startswith(f"{argument}={value!r} is not allowed; expected ")


def test_other_partitions_get_their_own_arns():
    policies = controller_policies(
        "1.14.1",
        partition="aws-cn",
        region="cn-north-1",
        account_id="111122223333",
        cluster_name="demo",
        node_role_arn="arn:aws-cn:iam::111122223333:role/KarpenterNodeRole-demo",
        queue_arn="arn:aws-cn:sqs:cn-north-1:111122223333:demo",
    )
    resources = [r for s in statements(policies) for r in as_list(s["Resource"]) if r != "*"]
    assert resources and all(r.startswith("arn:aws-cn:") for r in resources)


def test_documents_do_not_share_nested_objects(karpenter_args):
    policies = controller_policies("1.14.1", **karpenter_args)
    lifecycle = {s["Sid"]: s for s in policies["node-lifecycle"]["Statement"]}
    lifecycle["AllowScopedDeletion"]["Condition"]["StringLike"]["aws:ResourceTag/karpenter.sh/nodepool"] = "x"
    unchanged = lifecycle["AllowScopedEC2LaunchTemplateAccessActions"]["Condition"]["StringLike"]
    assert unchanged == {"aws:ResourceTag/karpenter.sh/nodepool": "*"}


def test_node_role_managed_policies():
    assert set(NODE_ROLE_MANAGED_POLICIES) == {
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonSSMManagedInstanceCore",
    }
    assert node_role_managed_policy_arns("aws-us-gov")[0] == "arn:aws-us-gov:iam::aws:policy/AmazonEKS_CNI_Policy"
    assert aws_managed_policy_arn("AmazonSSMManagedInstanceCore") == (
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    )
    with pytest.raises(IamInputError, match="^partition='aws-mars'"):
        node_role_managed_policy_arns("aws-mars")
