"""Size measurement and security checks over IAM policy documents.

The checks take a policy document (a plain dict as IAM reads it) and return
the statements that break a rule, so that tests and security gates can print
exactly what is wrong and, where an upstream policy is accepted as it is,
compare the findings against a known list.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from typing import Any, Iterator, NamedTuple

from iam.errors import PolicySizeError

# IAM quotas (IAM User Guide, "IAM and AWS STS quotas"); IAM does not count
# whitespace against them.
MANAGED_POLICY_CHARACTER_LIMIT = 6144
ROLE_TRUST_POLICY_CHARACTER_LIMIT = 2048

# RunInstances and CreateFleet need permission on every resource they only
# reference (the AMI, the subnet, the security groups, ...). Allowing such a
# reference does not let the caller change the referenced resource, so an
# unconditioned launch statement limited to these types is not a finding; the
# resources the launch creates (instance, volume, fleet, launch template, ...)
# are still expected to carry conditions.
LAUNCH_ACTIONS = ("ec2:runinstances", "ec2:createfleet")
LAUNCH_REFERENCED_RESOURCE_TYPES = (
    "image",
    "snapshot",
    "security-group",
    "subnet",
    "capacity-reservation",
    "placement-group",
)

_WHITESPACE = re.compile(r"\s")
_READ_ONLY_EC2_PREFIXES = ("describe", "get")


class Finding(NamedTuple):
    """One statement that breaks a check."""

    statement_index: int
    sid: str | None
    detail: str


def policy_size(document: dict) -> int:
    """The size IAM compares with its quotas: characters other than whitespace.

    Measured on the compact JSON text the document serialises to, which is
    what a Pulumi program sends after `json.dumps`.
    """
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return len(_WHITESPACE.sub("", text))


def require_within_limit(
    policy_name: str, document: dict, limit: int = MANAGED_POLICY_CHARACTER_LIMIT, hint: str = ""
) -> dict:
    """Return `document` unchanged, or raise `PolicySizeError` when it is too large."""
    size = policy_size(document)
    if size > limit:
        raise PolicySizeError(policy_name, size, limit, hint or "split it into several policies")
    return document


def statements_allowing_wildcard_action(document: Mapping[str, Any]) -> list[Finding]:
    """Allow statements whose actions contain a wildcard, or that use NotAction."""
    findings = []
    for index, statement in _allow_statements(document):
        if "NotAction" in statement:
            findings.append(_finding(index, statement, "NotAction in an Allow grants every other action"))
            continue
        wildcards = [action for action in _as_list(statement.get("Action")) if "*" in action or "?" in action]
        if wildcards:
            findings.append(_finding(index, statement, "wildcard action " + ", ".join(wildcards)))
    return findings


def unscoped_pass_role(document: Mapping[str, Any]) -> list[Finding]:
    """Allow statements granting iam:PassRole on a wildcard resource or without iam:PassedToService."""
    findings = []
    for index, statement in _allow_statements(document):
        if not _grants(statement, "iam:PassRole"):
            continue
        resources = _as_list(statement.get("Resource"))
        if "NotResource" in statement or not resources or any("*" in resource for resource in resources):
            scope = resources or "(NotResource)"
            findings.append(_finding(index, statement, f"iam:PassRole on wildcard resources {scope}"))
        elif "iam:passedtoservice" not in _condition_keys(statement):
            findings.append(_finding(index, statement, "iam:PassRole without an iam:PassedToService condition"))
    return findings


def mutating_ec2_actions_without_condition(document: dict) -> list[Finding]:
    """EC2 actions other than Describe*/Get* allowed by a statement without a Condition.

    Launch actions limited to resource types they only reference are not
    reported (see `LAUNCH_REFERENCED_RESOURCE_TYPES`).
    """
    findings = []
    for index, statement in _allow_statements(document):
        if statement.get("Condition"):
            continue
        if "NotAction" in statement:
            findings.append(_finding(index, statement, "NotAction without a Condition grants mutating EC2 actions"))
            continue
        resources = _as_list(statement.get("Resource"))
        for action in _as_list(statement.get("Action")):
            if not _may_mutate_ec2(action):
                continue
            if action.lower() in LAUNCH_ACTIONS and _only_launch_referenced(resources):
                continue
            findings.append(_finding(index, statement, f"{action} allowed without a Condition on {resources}"))
    return findings


def trust_has_sub_and_aud(document: dict) -> bool:
    """Whether every web-identity grant pins both the service account and the audience.

    Each Allow statement with sts:AssumeRoleWithWebIdentity must name one OIDC
    provider and carry StringEquals on `<provider>:sub` (one exact service
    account) and `<provider>:aud` = sts.amazonaws.com, with `<provider>` the
    host and path the provider ARN names. A document with no such statement
    does not pass.
    """
    web_identity = [s for _, s in _allow_statements(document) if _grants(s, "sts:AssumeRoleWithWebIdentity")]
    return bool(web_identity) and all(_pins_sub_and_aud(statement) for statement in web_identity)


def _pins_sub_and_aud(statement: dict) -> bool:
    principal = statement.get("Principal")
    providers = _as_list(principal.get("Federated")) if isinstance(principal, dict) else []
    if len(providers) != 1 or ":oidc-provider/" not in providers[0]:
        return False
    issuer = providers[0].split(":oidc-provider/", 1)[1]
    equals = statement.get("Condition", {}).get("StringEquals", {})
    subjects = _as_list(equals.get(f"{issuer}:sub"))
    audiences = _as_list(equals.get(f"{issuer}:aud"))
    return (
        len(subjects) == 1
        and subjects[0].startswith("system:serviceaccount:")
        and not any(c in subjects[0] for c in "*?")
        and audiences == ["sts.amazonaws.com"]
    )


def _allow_statements(document: Mapping[str, Any]) -> Iterator[tuple[int, dict]]:
    for index, statement in enumerate(_as_list(document.get("Statement"))):
        if statement.get("Effect") == "Allow":
            yield index, statement


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _grants(statement: dict, action: str) -> bool:
    """Whether the statement's Action (or NotAction) covers `action`; IAM matches case-insensitively."""
    target = action.lower()
    if "NotAction" in statement:
        return not any(fnmatch.fnmatchcase(target, p.lower()) for p in _as_list(statement["NotAction"]))
    return any(fnmatch.fnmatchcase(target, p.lower()) for p in _as_list(statement.get("Action")))


def _condition_keys(statement: dict) -> set[str]:
    return {key.lower() for block in statement.get("Condition", {}).values() for key in block}


def _may_mutate_ec2(action: str) -> bool:
    lowered = action.lower()
    if lowered == "*" or lowered.startswith("ec2:*"):
        return True
    if not lowered.startswith("ec2:"):
        return False
    return not lowered[len("ec2:") :].startswith(_READ_ONLY_EC2_PREFIXES)


def _only_launch_referenced(resources: list[str]) -> bool:
    def resource_type(arn: str) -> str | None:
        parts = arn.split(":", 5)
        if len(parts) != 6 or parts[2] != "ec2":
            return None
        return parts[5].split("/", 1)[0]

    return bool(resources) and all(resource_type(r) in LAUNCH_REFERENCED_RESOURCE_TYPES for r in resources)


def _finding(index: int, statement: dict, detail: str) -> Finding:
    return Finding(index, statement.get("Sid"), detail)
