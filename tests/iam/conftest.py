"""Fixtures for the IAM tests: sample deployment values and the upstream reference files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "upstream"
KARPENTER_TEMPLATE = UPSTREAM / "karpenter-1.14.1" / "getting-started-cloudformation.yaml"
LBC_POLICY = UPSTREAM / "aws-load-balancer-controller-3.5.0" / "iam_policy.json"

PARTITION = "aws"
REGION = "eu-west-3"
ACCOUNT_ID = "111122223333"
CLUSTER = "autoscaling-demo"
NODE_ROLE_ARN = f"arn:aws:iam::{ACCOUNT_ID}:role/KarpenterNodeRole-{CLUSTER}"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{CLUSTER}"

# What CloudFormation would substitute when the template is deployed with the values above.
_TEMPLATE_VALUES = {
    "${AWS::Partition}": PARTITION,
    "${AWS::Region}": REGION,
    "${AWS::AccountId}": ACCOUNT_ID,
    "${AWS::URLSuffix}": "amazonaws.com",
    "${ClusterName}": CLUSTER,
    "${KarpenterNodeRole.Arn}": NODE_ROLE_ARN,
    "${KarpenterInterruptionQueue.Arn}": QUEUE_ARN,
    "${KarpenterInterruptionQueue}": QUEUE_ARN,
}


class _CloudFormationLoader(yaml.SafeLoader):
    """SafeLoader that reads the short-form intrinsic functions as `${...}` placeholders."""


def _scalar_tag(placeholder):
    def construct(loader, node):
        if not isinstance(node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(None, None, f"unexpected non-scalar {node.tag}", node.start_mark)
        return placeholder(loader.construct_scalar(node))

    return construct


_CloudFormationLoader.add_constructor("!Sub", _scalar_tag(lambda text: text))
_CloudFormationLoader.add_constructor("!GetAtt", _scalar_tag(lambda text: "${" + text + "}"))
_CloudFormationLoader.add_constructor("!Ref", _scalar_tag(lambda text: "${" + text + "}"))


def substitute(value):
    """Replace the template's placeholders in every string of `value`."""
    if isinstance(value, str):
        for placeholder, replacement in _TEMPLATE_VALUES.items():
            value = value.replace(placeholder, replacement)
        assert "${" not in value, f"unsubstituted placeholder in {value!r}"
        return value
    if isinstance(value, list):
        return [substitute(item) for item in value]
    if isinstance(value, dict):
        return {substitute(key): substitute(item) for key, item in value.items()}
    return value


@pytest.fixture(scope="session")
def reference_resources() -> dict:
    """The `Resources` of Karpenter's reference CloudFormation, placeholders substituted."""
    if not KARPENTER_TEMPLATE.is_file():
        pytest.skip(f"reference template not available at {KARPENTER_TEMPLATE}")
    template = yaml.load(KARPENTER_TEMPLATE.read_text(encoding="utf-8"), Loader=_CloudFormationLoader)
    resources = substitute(template["Resources"])
    for resource in resources.values():
        properties = resource.get("Properties", {})
        if isinstance(properties.get("PolicyDocument"), str):
            properties["PolicyDocument"] = json.loads(properties["PolicyDocument"])
    return resources


@pytest.fixture(scope="session")
def published_lbc_policy_path() -> Path:
    if not LBC_POLICY.is_file():
        pytest.skip(f"published Load Balancer Controller policy not available at {LBC_POLICY}")
    return LBC_POLICY


@pytest.fixture
def karpenter_args() -> dict:
    """Keyword arguments of `controller_policies` for the sample deployment."""
    return {
        "partition": PARTITION,
        "region": REGION,
        "account_id": ACCOUNT_ID,
        "cluster_name": CLUSTER,
        "node_role_arn": NODE_ROLE_ARN,
        "queue_arn": QUEUE_ARN,
    }
