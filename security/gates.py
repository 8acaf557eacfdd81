"""The project's own security gates over one offline evaluation of the program.

Each gate returns a `GateResult`: what it examined and what it found. A gate passes when it
found nothing; `run_gates` runs them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from offline.plan import iam_documents, kubernetes_objects, plain
from offline.recording import Recording, Registered
from policies.eks_autoscaling_rules import RULES, violations_of
from security.iam_checks import (
    is_service_account_trust,
    pass_role_findings,
    service_account_trust_problems,
    wildcard_action_findings,
)
from security.pod_security import restricted_violations

SERVICE_ACCOUNT_ROLE_COMPONENT = "eks-autoscaling:identities:ServiceAccountRole"
PSS_ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
DIGEST_PINNED = re.compile(r"@sha256:[0-9a-f]{64}$")
_UNREADABLE = "not a JSON policy document (unknown until deployment, or malformed), so it cannot be checked"


@dataclass(frozen=True)
class GateResult:
    gate: str
    description: str
    examined: str
    findings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return not self.findings


def iam_wildcard_actions(recording: Recording) -> GateResult:
    documents = iam_documents(recording)
    findings = [
        f"{path}: {finding}"
        for path, document in sorted(documents.items())
        for finding in (wildcard_action_findings(document) if isinstance(document, Mapping) else [_UNREADABLE])
    ]
    return GateResult(
        "iam-no-wildcard-actions",
        "no IAM statement allows a wildcard action (*, service:*) or uses NotAction",
        _count(len(documents), "IAM document"),
        tuple(findings),
    )


def iam_pass_role(recording: Recording) -> GateResult:
    documents = {path: doc for path, doc in iam_documents(recording).items() if path.startswith("policies/")}
    findings = [
        f"{path}: {finding}"
        for path, document in sorted(documents.items())
        for finding in (pass_role_findings(document) if isinstance(document, Mapping) else [_UNREADABLE])
    ]
    return GateResult(
        "iam-pass-role-scoped",
        "iam:PassRole only on named roles and with iam:PassedToService",
        _count(len(documents), "identity policy", "identity policies"),
        tuple(findings),
    )


def service_account_trust(recording: Recording) -> GateResult:
    """IRSA trusts carry sub and aud; Pod Identity trusts pods.eks.amazonaws.com alone. Roles under a
    ServiceAccountRole component must be one or the other; any other role that trusts a service
    account is held to the same rules."""
    findings, examined = [], 0
    for role in recording.of_type("aws:iam/role:Role"):
        document = _json(role.input("assumeRolePolicy", None))
        expected = _parent_type(recording, role) == SERVICE_ACCOUNT_ROLE_COMPONENT
        if not isinstance(document, Mapping):
            if expected:
                findings.append(f"{role.name}: the trust policy is not a JSON document")
            continue
        if expected or is_service_account_trust(document):
            examined += 1
            findings += [
                f"{role.name}: {problem}" for problem in service_account_trust_problems(document, expected=expected)
            ]
    return GateResult(
        "service-account-trust",
        "IRSA trusts pin sub and aud; Pod Identity trusts only pods.eks.amazonaws.com",
        _count(examined, "service-account role"),
        tuple(findings),
    )


def pod_security_restricted(recording: Recording) -> GateResult:
    """Every pod template meets Pod Security Standards "restricted", and its namespace enforces it."""
    objects = kubernetes_objects(recording)
    namespaces = {
        document.get("metadata", {}).get("name"): document
        for _, document in objects
        if document.get("kind") == "Namespace"
    }
    findings, examined = [], 0
    for _, document in objects:
        template = pod_template(document)
        if template is None:
            continue
        examined += 1
        metadata = document.get("metadata", {})
        subject = f"{document['kind']} {metadata.get('namespace', 'default')}/{metadata.get('name')}"
        pod_metadata = template.get("metadata") or {}
        for finding in restricted_violations(template.get("spec") or {}, pod_metadata.get("annotations")):
            findings.append(f"{subject}: {finding}")
        namespace = namespaces.get(metadata.get("namespace"))
        if namespace is None:
            findings.append(
                f"{subject}: its namespace is not created by the program, so its Pod Security level is unknown"
            )
        elif (namespace.get("metadata", {}).get("labels") or {}).get(PSS_ENFORCE_LABEL) != "restricted":
            findings.append(
                f"{subject}: namespace {metadata.get('namespace')} does not set {PSS_ENFORCE_LABEL}: restricted"
            )
    return GateResult(
        "pod-security-restricted",
        'pods meet Pod Security Standards "restricted" in namespaces that enforce it',
        _count(examined, "pod template"),
        tuple(findings),
    )


def image_pull_policy(recording: Recording) -> GateResult:
    """A container whose image is pinned by tag only is pulled `Always`: a tag can be pushed again,
    and IfNotPresent (the default for any tag but latest) would keep running the old image."""
    findings, examined = [], 0
    for _, document in kubernetes_objects(recording):
        template = pod_template(document)
        if template is None:
            continue
        metadata = document.get("metadata", {})
        subject = f"{document['kind']} {metadata.get('namespace', 'default')}/{metadata.get('name')}"
        spec = template.get("spec") or {}
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            examined += 1
            image = str(container.get("image", ""))
            policy = container.get("imagePullPolicy") or ("Always" if _moving_tag(image) else "IfNotPresent")
            if not DIGEST_PINNED.search(image) and policy != "Always":
                findings.append(
                    f"{subject}: container {container.get('name')} pulls {image} {policy}; an image pinned by "
                    "tag must be pulled Always (or pinned by digest, @sha256:...)"
                )
    return GateResult(
        "image-pull-policy",
        "images pinned by tag are pulled Always, so a re-pushed tag is noticed",
        _count(examined, "container"),
        tuple(findings),
    )


def _moving_tag(image: str) -> bool:
    # The kubelet defaults to Always for an image without a tag or tagged latest.
    last = image.rsplit("/", 1)[-1]
    return ":" not in last or last.rsplit(":", 1)[1] == "latest"


def policy_pack_rules(recording: Recording, config: Mapping[str, Mapping[str, Any]] | None = None) -> GateResult:
    """The policy pack's rules over every recorded resource, with its inputs as the engine would pass them."""
    types = {rule_type for rule in RULES for rule_type in rule.resource_types}
    findings, examined = [], 0
    for resource, props in recorded_props(recording):
        if resource.type not in types:
            continue
        examined += 1
        findings += [
            f"{rule}: {resource.type} {resource.name}: {message}"
            for rule, message in violations_of(resource.type, props, config)
        ]
    return GateResult(
        "policy-pack-rules",
        "the rules of the policy pack (policies/) hold for the recorded resources",
        _count(examined, "resource"),
        tuple(findings),
    )


GATES: tuple[Callable[[Recording], GateResult], ...] = (
    iam_wildcard_actions,
    iam_pass_role,
    service_account_trust,
    pod_security_restricted,
    image_pull_policy,
    policy_pack_rules,
)


def run_gates(recording: Recording) -> list[GateResult]:
    return [gate(recording) for gate in GATES]


def recorded_props(recording: Recording) -> Iterator[tuple[Registered, dict]]:
    """(resource, inputs) as plain values, without the SDK's `__defaults` bookkeeping."""
    for resource in recording.resources:
        yield resource, plain({key: value for key, value in resource.inputs.items() if key != "__defaults"})


def pod_template(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod template (metadata and spec) of a workload object, or None for other kinds."""
    kind = document.get("kind")
    spec = document.get("spec") or {}
    if kind == "Pod":
        return {"metadata": document.get("metadata") or {}, "spec": spec}
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"):
        return spec.get("template") or {}
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return None


def _count(number: int, singular: str, plural: str | None = None) -> str:
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


def _parent_type(recording: Recording, resource: Registered) -> str | None:
    if not resource.parent:
        return None
    try:
        return recording.by_urn(resource.parent).type
    except LookupError:
        return None


def _json(value: Any) -> Any:
    value = plain(value)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value
