"""Validation of Kubernetes objects against the real schemas, for the tests.

Built-in kinds: kubernetes-validate's strict schemas (unknown fields are errors).
Karpenter kinds: the openAPIV3Schema of the Karpenter 1.14.1 CRDs (read from the reference
material beside the project), made strict in the same way, as the API server rejects unknown
fields. CEL rules (x-kubernetes-validations) are not evaluated by jsonschema.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
KARPENTER_CRDS = REPO_ROOT.parent / "shared" / "upstream" / "karpenter-1.14.1"
CRD_FILES = {
    ("karpenter.sh/v1", "NodePool"): "karpenter.sh_nodepools.yaml",
    ("karpenter.k8s.aws/v1", "EC2NodeClass"): "karpenter.k8s.aws_ec2nodeclasses.yaml",
}


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
    """(apiVersion, kind) -> validator; skips the calling test when the CRDs are absent."""
    if not KARPENTER_CRDS.is_dir():
        pytest.skip(f"the Karpenter CRDs are not available at {KARPENTER_CRDS} (reference material absent)")
    validators = {}
    for (api_version, kind), filename in CRD_FILES.items():
        crd = yaml.safe_load((KARPENTER_CRDS / filename).read_text())
        assert crd["spec"]["names"]["kind"] == kind
        (version,) = [v for v in crd["spec"]["versions"] if f"{crd['spec']['group']}/{v['name']}" == api_version]
        validators[(api_version, kind)] = jsonschema.Draft202012Validator(
            make_strict(version["schema"]["openAPIV3Schema"])
        )
    return validators


def label(obj: dict) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def validate_kubernetes(obj: dict, kubernetes_version: str) -> str:
    """Strict validation of a built-in kind; returns the version whose schema was used."""
    return kubernetes_validate.validate(obj, kubernetes_version, strict=True)


def validate_crd(validators: dict, obj: dict) -> None:
    errors = sorted(validators[(obj["apiVersion"], obj["kind"])].iter_errors(obj), key=str)
    assert not errors, f"{label(obj)}: " + "; ".join(
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors
    )
