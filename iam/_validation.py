"""Argument checks shared by the document builders.

Values end up inside ARNs and condition keys, where a typo does not fail at
deploy time but silently produces a policy that grants nothing (or too much).
So every argument is checked against the format AWS or Kubernetes defines.
"""

from __future__ import annotations

import re

from iam.errors import IamInputError

PARTITIONS = ("aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc")

_REGION = re.compile(r"[a-z]{2,4}(-[a-z]+)+-\d{1,2}")
_ACCOUNT_ID = re.compile(r"\d{12}")
# EKS CreateCluster: 1-100 characters, starting with an alphanumeric.
_CLUSTER_NAME = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")
_DNS_SUFFIX = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+")
# Kubernetes: namespaces are DNS-1123 labels, service accounts DNS-1123 subdomains.
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# What follows "role/" in a role ARN: an optional path, then the name (IAM allows +=,.@_- besides alphanumerics).
_ROLE_PATH_AND_NAME = re.compile(r"([\w+=,.@-]+/)*[\w+=,.@-]{1,64}", re.ASCII)
_SQS_QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")


def _require_str(argument: str, value: object, allowed: str) -> str:
    if not isinstance(value, str):
        raise IamInputError(argument, value, allowed)
    return value


def partition(value: object, argument: str = "partition") -> str:
    allowed = "one of " + ", ".join(PARTITIONS)
    text = _require_str(argument, value, allowed)
    if text not in PARTITIONS:
        raise IamInputError(argument, value, allowed)
    return text


def region(value: object, argument: str = "region") -> str:
    allowed = "an AWS region code such as us-east-1"
    text = _require_str(argument, value, allowed)
    if not _REGION.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def account_id(value: object, argument: str = "account_id") -> str:
    allowed = "a 12-digit AWS account ID"
    text = _require_str(argument, value, allowed)
    if not _ACCOUNT_ID.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def cluster_name(value: object, argument: str = "cluster_name") -> str:
    allowed = "an EKS cluster name: 1-100 letters, digits, '-' or '_', starting with a letter or digit"
    text = _require_str(argument, value, allowed)
    if not _CLUSTER_NAME.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def dns_suffix(value: object, argument: str = "dns_suffix") -> str:
    allowed = "a partition DNS suffix such as amazonaws.com or amazonaws.com.cn"
    text = _require_str(argument, value, allowed)
    if not _DNS_SUFFIX.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def namespace(value: object, argument: str = "namespace") -> str:
    allowed = "a Kubernetes namespace name (DNS-1123 label: lower-case alphanumerics and '-', at most 63)"
    text = _require_str(argument, value, allowed)
    if not _DNS1123_LABEL.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def service_account(value: object, argument: str = "service_account") -> str:
    allowed = "a Kubernetes service account name (DNS-1123 subdomain, at most 253 characters)"
    text = _require_str(argument, value, allowed)
    if len(text) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(text):
        raise IamInputError(argument, value, allowed)
    return text


def role_arn(value: object, *, partition: str, account_id: str, argument: str) -> str:
    allowed = f"an IAM role ARN in this account: arn:{partition}:iam::{account_id}:role/<name>"
    text = _require_str(argument, value, allowed)
    prefix = f"arn:{partition}:iam::{account_id}:role/"
    if not text.startswith(prefix) or not _ROLE_PATH_AND_NAME.fullmatch(text[len(prefix) :]):
        raise IamInputError(argument, value, allowed)
    return text


def queue_arn(value: object, *, partition: str, region: str, account_id: str, argument: str) -> str:
    allowed = f"an SQS queue ARN in this account and region: arn:{partition}:sqs:{region}:{account_id}:<queue name>"
    text = _require_str(argument, value, allowed)
    prefix = f"arn:{partition}:sqs:{region}:{account_id}:"
    if not text.startswith(prefix) or not _SQS_QUEUE_NAME.fullmatch(text[len(prefix) :]):
        raise IamInputError(argument, value, allowed)
    return text


def any_queue_arn(value: object, argument: str = "queue_arn") -> str:
    """An SQS queue ARN in any partition, region and account."""
    allowed = "an SQS queue ARN: arn:<partition>:sqs:<region>:<account id>:<queue name>"
    text = _require_str(argument, value, allowed)
    parts = text.split(":")
    if (
        len(parts) != 6
        or parts[0] != "arn"
        or parts[1] not in PARTITIONS
        or parts[2] != "sqs"
        or not _REGION.fullmatch(parts[3])
        or not _ACCOUNT_ID.fullmatch(parts[4])
        or not _SQS_QUEUE_NAME.fullmatch(parts[5])
    ):
        raise IamInputError(argument, value, allowed)
    return text
