"""Karpenter interruption handling: the SQS queue, its policy and the EventBridge rules.

EventBridge forwards spot interruptions, rebalance recommendations, scheduled
maintenance and instance state changes to an SQS queue that the controller
polls, so that it can drain a node before EC2 takes it away. Everything here
follows the reference CloudFormation of Karpenter v1.14.1.
"""

from __future__ import annotations

import copy
import hashlib
import re
from typing import NamedTuple

from iam import _validation
from iam.errors import IamInputError

# Queue settings of the reference template: messages older than five minutes
# are of no use to the controller.
QUEUE_MESSAGE_RETENTION_SECONDS = 300
QUEUE_SQS_MANAGED_SSE_ENABLED = True

SQS_QUEUE_NAME_LIMIT = 80
EVENTBRIDGE_RULE_NAME_LIMIT = 64


class InterruptionRule(NamedTuple):
    """An EventBridge rule: the suffix of its name and the events it matches."""

    name_suffix: str
    event_pattern: dict


# Treat as read-only; `event_rules` hands out copies with per-cluster names.
INTERRUPTION_RULES: tuple[InterruptionRule, ...] = (
    InterruptionRule("scheduled-change", {"source": ["aws.health"], "detail-type": ["AWS Health Event"]}),
    InterruptionRule(
        "spot-interruption", {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}
    ),
    InterruptionRule("rebalance", {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}),
    InterruptionRule(
        "instance-state-change", {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]}
    ),
    InterruptionRule(
        "capacity-reservation-interruption",
        {"source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"]},
    ),
)

_HASH_LENGTH = 8
_NAME_SUFFIX = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class NamedRule(NamedTuple):
    """A rule ready to create: its full name and its event pattern."""

    name: str
    event_pattern: dict


def queue_policy(queue_arn: str) -> dict:
    """The queue's resource policy: EventBridge may send to it, nobody may use it over plain HTTP."""
    _validation.any_queue_arn(queue_arn)
    return {
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": False}},
                "Principal": "*",
            },
        ],
    }


def queue_name(cluster_name: str) -> str:
    """The interruption queue's name: the cluster name, as in the reference template.

    EKS allows 100 characters in a cluster name and SQS 80 in a queue name;
    longer names are shortened with a hash of the full name so that they stay
    unique per cluster.
    """
    _validation.cluster_name(cluster_name)
    return _bounded(cluster_name, "", SQS_QUEUE_NAME_LIMIT)


def rule_name(cluster_name: str, name_suffix: str) -> str:
    """`<cluster>-karpenter-<suffix>`, within EventBridge's 64-character limit.

    Rule names are unique per account and region, so they carry the cluster
    name; when the result would be too long, the cluster part is shortened and
    followed by a hash of the full cluster name.
    """
    _validation.cluster_name(cluster_name)
    if not isinstance(name_suffix, str) or not _NAME_SUFFIX.fullmatch(name_suffix) or len(name_suffix) > 40:
        raise IamInputError("name_suffix", name_suffix, "lower-case words joined by '-', at most 40 characters")
    return _bounded(cluster_name, f"-karpenter-{name_suffix}", EVENTBRIDGE_RULE_NAME_LIMIT)


def event_rules(cluster_name: str) -> tuple[NamedRule, ...]:
    """Every interruption rule with its name for this cluster and a fresh copy of its pattern."""
    return tuple(
        NamedRule(rule_name(cluster_name, rule.name_suffix), copy.deepcopy(rule.event_pattern))
        for rule in INTERRUPTION_RULES
    )


def _bounded(cluster_name: str, suffix: str, limit: int) -> str:
    name = cluster_name + suffix
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(cluster_name.encode()).hexdigest()[:_HASH_LENGTH]
    keep = limit - len(suffix) - len(digest) - 1
    return f"{cluster_name[:keep].rstrip('-_')}-{digest}{suffix}"
