"""Interruption queue policy, rule patterns and per-cluster names."""

from __future__ import annotations

import re

import pytest

from iam.errors import IamInputError
from iam.interruption import (
    EVENTBRIDGE_RULE_NAME_LIMIT,
    INTERRUPTION_RULES,
    SQS_QUEUE_NAME_LIMIT,
    event_rules,
    queue_name,
    queue_policy,
    rule_name,
)

QUEUE_ARN = "arn:aws:sqs:eu-west-3:111122223333:autoscaling-demo"
RULE_NAME = re.compile(r"[.\-_A-Za-z0-9]{1,64}")
QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")


def test_queue_policy_allows_eventbridge_and_denies_plain_http():
    assert queue_policy(QUEUE_ARN) == {
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE_ARN,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": QUEUE_ARN,
                "Condition": {"Bool": {"aws:SecureTransport": False}},
                "Principal": "*",
            },
        ],
    }


@pytest.mark.parametrize("arn", ["*", "arn:aws:sqs:eu-west-3:111122223333:*", "arn:aws:sns:eu-west-3:111122223333:q"])
def test_queue_policy_refuses_anything_but_one_queue(arn):
    with pytest.raises(IamInputError, match=r"^queue_arn="):
        queue_policy(arn)


def test_rules_cover_the_five_interruption_events():
    assert [(rule.name_suffix, rule.event_pattern["source"]) for rule in INTERRUPTION_RULES] == [
        ("scheduled-change", ["aws.health"]),
        ("spot-interruption", ["aws.ec2"]),
        ("rebalance", ["aws.ec2"]),
        ("instance-state-change", ["aws.ec2"]),
        ("capacity-reservation-interruption", ["aws.ec2"]),
    ]
    assert INTERRUPTION_RULES[0].event_pattern["detail-type"] == ["AWS Health Event"]


def test_short_cluster_names_give_readable_rule_names():
    assert rule_name("demo", "spot-interruption") == "demo-karpenter-spot-interruption"
    assert [rule.name for rule in event_rules("demo")] == [
        "demo-karpenter-scheduled-change",
        "demo-karpenter-spot-interruption",
        "demo-karpenter-rebalance",
        "demo-karpenter-instance-state-change",
        "demo-karpenter-capacity-reservation-interruption",
    ]


@pytest.mark.parametrize("cluster", ["a", "autoscaling-demo", "c" * 20, "c" * 21, "x" * 64, "y" * 100, "A1_b-" * 20])
def test_rule_names_fit_eventbridge_and_are_unique_within_a_cluster(cluster):
    names = [rule.name for rule in event_rules(cluster)]
    assert len(set(names)) == len(INTERRUPTION_RULES)
    for name in names:
        assert len(name) <= EVENTBRIDGE_RULE_NAME_LIMIT
        assert RULE_NAME.fullmatch(name), name


def test_long_cluster_names_that_share_a_prefix_still_get_different_rule_names():
    first, second = "team-platform-production-" + "a" * 60, "team-platform-production-" + "b" * 60
    for suffix in (rule.name_suffix for rule in INTERRUPTION_RULES):
        assert rule_name(first, suffix) != rule_name(second, suffix)
        assert rule_name(first, suffix).startswith("team-platfo")
        assert rule_name(first, suffix).endswith(f"-karpenter-{suffix}")
    assert rule_name(first, "rebalance") == rule_name(first, "rebalance")


def test_queue_name_is_the_cluster_name_within_the_sqs_limit():
    assert queue_name("autoscaling-demo") == "autoscaling-demo"
    assert queue_name("q" * 80) == "q" * 80
    long_names = [queue_name("q" * 81), queue_name("q" * 100), queue_name("q" * 99 + "r")]
    assert len(set(long_names)) == 3
    for name in long_names:
        assert len(name) <= SQS_QUEUE_NAME_LIMIT
        assert QUEUE_NAME.fullmatch(name)


@pytest.mark.parametrize(
    ("function", "arguments", "argument"),
    [
        (queue_name, ("bad name",), "cluster_name"),
        (rule_name, ("demo", "Spot Interruption"), "name_suffix"),
        (rule_name, ("demo", "x" * 41), "name_suffix"),
        (rule_name, ("", "rebalance"), "cluster_name"),
    ],
)
def test_bad_names_are_refused_naming_the_argument(function, arguments, argument):
    with pytest.raises(IamInputError, match=rf"^{argument}="):
        function(*arguments)


def test_event_rules_hand_out_copies():
    event_rules("demo")[0].event_pattern["source"].append("aws.ec2")
    assert INTERRUPTION_RULES[0].event_pattern["source"] == ["aws.health"]
    assert event_rules("demo")[0].event_pattern["source"] == ["aws.health"]
