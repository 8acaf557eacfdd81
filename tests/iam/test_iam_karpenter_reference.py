"""The Karpenter documents against the reference CloudFormation of v1.14.1.

The template is read from ../shared/upstream; these tests are skipped when it
is not there.
"""

from __future__ import annotations

import pytest

from iam.interruption import (
    INTERRUPTION_RULES,
    QUEUE_MESSAGE_RETENTION_SECONDS,
    QUEUE_SQS_MANAGED_SSE_ENABLED,
    queue_name,
    queue_policy,
)
from iam.karpenter import controller_policies, node_role_managed_policy_arns
from iam.trust import ec2_trust_policy

POLICY_RESOURCES = {
    "node-lifecycle": "NodeLifecyclePolicy",
    "iam-integration": "IAMIntegrationPolicy",
    "eks-integration": "EKSIntegrationPolicy",
    "interruption": "InterruptionPolicy",
    "zonal-shift": "ZonalShiftPolicy",
    "resource-discovery": "ResourceDiscoveryPolicy",
}
RULE_RESOURCES = {
    "scheduled-change": "ScheduledChangeRule",
    "spot-interruption": "SpotInterruptionRule",
    "rebalance": "RebalanceRule",
    "instance-state-change": "InstanceStateChangeRule",
    "capacity-reservation-interruption": "CapacityReservationInterruptionRule",
}


def as_set(value) -> frozenset:
    return frozenset(value if isinstance(value, list) else [value])


def statement_shapes(documents) -> set[tuple]:
    """(Sid, actions, resources, condition keys) of every statement."""
    return {
        (
            statement.get("Sid"),
            as_set(statement["Action"]),
            as_set(statement["Resource"]),
            frozenset((op, key) for op, block in statement.get("Condition", {}).items() for key in block),
        )
        for document in documents
        for statement in document["Statement"]
    }


def test_the_template_declares_exactly_the_policies_produced(reference_resources):
    managed = {name for name, r in reference_resources.items() if r["Type"] == "AWS::IAM::ManagedPolicy"}
    assert managed == set(POLICY_RESOURCES.values())


@pytest.mark.parametrize("name", list(POLICY_RESOURCES))
def test_each_controller_policy_equals_the_reference(reference_resources, karpenter_args, name):
    produced = controller_policies("1.14.1", zonal_shift=True, **karpenter_args)[name]
    assert produced == reference_resources[POLICY_RESOURCES[name]]["Properties"]["PolicyDocument"]


def test_sids_actions_resources_and_condition_keys_match_the_reference(reference_resources, karpenter_args):
    produced = controller_policies("1.14.1", zonal_shift=True, **karpenter_args).values()
    reference = [reference_resources[r]["Properties"]["PolicyDocument"] for r in POLICY_RESOURCES.values()]
    assert statement_shapes(produced) == statement_shapes(reference)


def test_node_role_matches_the_reference(reference_resources):
    node_role = reference_resources["KarpenterNodeRole"]["Properties"]
    assert ec2_trust_policy() == node_role["AssumeRolePolicyDocument"]
    assert sorted(node_role_managed_policy_arns("aws")) == sorted(node_role["ManagedPolicyArns"])


def test_queue_policy_matches_the_reference(reference_resources, karpenter_args):
    reference = reference_resources["KarpenterInterruptionQueuePolicy"]["Properties"]["PolicyDocument"]
    assert queue_policy(karpenter_args["queue_arn"]) == reference


def test_queue_settings_and_name_match_the_reference(reference_resources, karpenter_args):
    queue = reference_resources["KarpenterInterruptionQueue"]["Properties"]
    assert queue["MessageRetentionPeriod"] == QUEUE_MESSAGE_RETENTION_SECONDS
    assert queue["SqsManagedSseEnabled"] is QUEUE_SQS_MANAGED_SSE_ENABLED
    assert queue_name(karpenter_args["cluster_name"]) == queue["QueueName"]


def test_rules_match_the_reference(reference_resources, karpenter_args):
    declared = {name for name, r in reference_resources.items() if r["Type"] == "AWS::Events::Rule"}
    assert declared == set(RULE_RESOURCES.values())
    assert [rule.name_suffix for rule in INTERRUPTION_RULES] == list(RULE_RESOURCES)
    for rule in INTERRUPTION_RULES:
        properties = reference_resources[RULE_RESOURCES[rule.name_suffix]]["Properties"]
        assert rule.event_pattern == properties["EventPattern"]
        assert [target["Arn"] for target in properties["Targets"]] == [karpenter_args["queue_arn"]]
