"""Checks over single IAM documents, phrased as findings a reviewer can act on.

The statement-level rules come from `iam.documents`; this module adds what a trust policy
of a Kubernetes service account must look like. It imports nothing beyond the standard
library and `iam`, so the policy pack can use it from its own environment.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from iam.documents import statements_allowing_wildcard_action, trust_has_sub_and_aud, unscoped_pass_role
from iam.trust import POD_IDENTITY_SERVICE

WEB_IDENTITY_ACTION = "sts:assumerolewithwebidentity"
# What the EKS Auth service needs on a Pod Identity role: the role itself and the session
# tags it passes (cluster, namespace, service account).
POD_IDENTITY_ACTIONS = frozenset({"sts:assumerole", "sts:tagsession"})


def wildcard_action_findings(document: Mapping[str, Any]) -> list[str]:
    """Allow statements with a wildcard action (`*`, `service:*`, `ec2:Describe*`) or NotAction."""
    return [
        f"{_statement_label(f.statement_index, f.sid)}: {f.detail}"
        for f in statements_allowing_wildcard_action(document)
    ]


def pass_role_findings(document: Mapping[str, Any]) -> list[str]:
    """Allow statements granting iam:PassRole on a wildcard or without iam:PassedToService."""
    return [f"{_statement_label(f.statement_index, f.sid)}: {f.detail}" for f in unscoped_pass_role(document)]


def is_service_account_trust(document: Mapping[str, Any]) -> bool:
    """Whether the trust policy lets a Kubernetes service account assume the role (IRSA or Pod Identity)."""
    return any(_is_web_identity(s) or _names_pod_identity(s) for _, s in _allow_statements(document))


def service_account_trust_problems(document: Mapping[str, Any], *, expected: bool = False) -> list[str]:
    """What is wrong with the trust policy of a role meant for a Kubernetes service account.

    Every Allow statement must be either
    - IRSA: sts:AssumeRoleWithWebIdentity from one OIDC provider, with StringEquals on
      `<issuer>:sub` (one service account, no wildcard) and `<issuer>:aud` = sts.amazonaws.com; or
    - Pod Identity: the principal pods.eks.amazonaws.com alone, with sts:AssumeRole and
      sts:TagSession only.
    A document that trusts neither is a problem only when `expected` (the caller knows the role
    belongs to a service account); otherwise it is not a service-account trust and passes.
    """
    statements = list(_allow_statements(document))
    if not any(_is_web_identity(s) or _names_pod_identity(s) for _, s in statements):
        if expected:
            return ["trusts neither a cluster OIDC provider (IRSA) nor pods.eks.amazonaws.com (Pod Identity)"]
        return []
    problems = []
    for index, statement in statements:
        label = _statement_label(index, statement.get("Sid"))
        if _names_pod_identity(statement):
            problems += [f"{label}: {problem}" for problem in _pod_identity_problems(statement)]
        elif _is_web_identity(statement):
            if not trust_has_sub_and_aud({"Statement": [statement]}):
                problems.append(
                    f"{label}: sts:AssumeRoleWithWebIdentity must name one OIDC provider and carry StringEquals on "
                    "both <issuer>:sub (one service account, no wildcard) and <issuer>:aud = sts.amazonaws.com"
                )
        else:
            problems.append(
                f"{label}: trusts {_principal_text(statement)}; a service-account role trusts only its "
                f"OIDC provider (IRSA) or {POD_IDENTITY_SERVICE} (Pod Identity)"
            )
    return problems


def _pod_identity_problems(statement: Mapping[str, Any]) -> list[str]:
    problems = []
    principal = statement.get("Principal")
    services = _as_list(principal.get("Service")) if isinstance(principal, Mapping) else []
    others = sorted(set(principal) - {"Service"}) if isinstance(principal, Mapping) else ["*"]
    if services != [POD_IDENTITY_SERVICE] or others:
        problems.append(f"Pod Identity must trust {POD_IDENTITY_SERVICE} alone, not {_principal_text(statement)}")
    if "NotAction" in statement:
        problems.append("NotAction grants every other action to the principal")
    extra = sorted({str(a).lower() for a in _as_list(statement.get("Action"))} - POD_IDENTITY_ACTIONS)
    if extra:
        problems.append(f"Pod Identity needs only sts:AssumeRole and sts:TagSession, not {', '.join(extra)}")
    return problems


def _is_web_identity(statement: Mapping[str, Any]) -> bool:
    """Whether Action (or NotAction) covers sts:AssumeRoleWithWebIdentity; IAM matches case-insensitively."""
    if "NotAction" in statement:
        return not any(
            fnmatch.fnmatchcase(WEB_IDENTITY_ACTION, str(p).lower()) for p in _as_list(statement["NotAction"])
        )
    return any(fnmatch.fnmatchcase(WEB_IDENTITY_ACTION, str(p).lower()) for p in _as_list(statement.get("Action")))


def _names_pod_identity(statement: Mapping[str, Any]) -> bool:
    principal = statement.get("Principal")
    return isinstance(principal, Mapping) and POD_IDENTITY_SERVICE in _as_list(principal.get("Service"))


def _principal_text(statement: Mapping[str, Any]) -> str:
    principal = statement.get("Principal")
    if isinstance(principal, Mapping):
        return ", ".join(f"{kind} {', '.join(map(str, _as_list(value)))}" for kind, value in principal.items())
    return f"principal {principal!r}"


def _allow_statements(document: Mapping[str, Any]):
    statements = document.get("Statement")
    if isinstance(statements, Mapping):
        statements = [statements]
    for index, statement in enumerate(_as_list(statements)):
        if isinstance(statement, Mapping) and statement.get("Effect") == "Allow":
            yield index, statement


def _statement_label(index: int, sid: Any) -> str:
    return f"statement {index}" + (f" ({sid})" if sid else "")


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return [value]
