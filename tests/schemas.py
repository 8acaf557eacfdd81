"""Validation of Kubernetes objects against the real schemas, for the tests.

Built-in kinds: kubernetes-validate's strict schemas (unknown fields are errors).
Karpenter kinds: the openAPIV3Schema of the Karpenter 1.14.1 CRDs the sizing library ships
(sizing/karpenter/data/crds/), made strict in the same way, as the API server rejects unknown
fields; then their CEL rules (x-kubernetes-validations), which jsonschema does not evaluate, by
`sizing.karpenter.crd_rules`, as the planner applies them.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import kubernetes_validate

from sizing.karpenter.crd_rules import CRD_FILES, crd_schema, rule_violations

REPO_ROOT = Path(__file__).resolve().parents[1]


def make_strict(schema):
    """Reject unknown fields, as the API server does for structural schemas under strict field validation."""
    if isinstance(schema, list):
        return [make_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    strict = {key: make_strict(value) for key, value in schema.items()}
    if (
        "properties" in strict
        and "additionalProperties" not in strict
        and not strict.get("x-kubernetes-preserve-unknown-fields")
    ):
        strict["additionalProperties"] = False
    return strict


def crd_validators() -> dict:
    """(apiVersion, kind) -> jsonschema validator of the shipped CRD's schema."""
    return {
        (api_version, kind): jsonschema.Draft202012Validator(make_strict(crd_schema(kind)))
        for kind, (api_version, _) in CRD_FILES.items()
    }


def label(obj: dict) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def validate_kubernetes(obj: dict, kubernetes_version: str) -> str:
    """Strict validation of a built-in kind; returns the version whose schema was used."""
    return kubernetes_validate.validate(obj, kubernetes_version, strict=True)


def validate_crd(validators: dict, obj: dict) -> None:
    """The object passes its CRD's schema (strict) and then its CEL rules."""
    errors = sorted(validators[(obj["apiVersion"], obj["kind"])].iter_errors(obj), key=str)
    assert not errors, f"{label(obj)}: " + "; ".join(
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors
    )
    violations = rule_violations(obj, obj["kind"])
    assert not violations, f"{label(obj)}: " + "; ".join(violation.describe() for violation in violations)
