"""Karpenter / Kubernetes compatibility matrix (Karpenter v1.14.1 docs)."""

from __future__ import annotations

import pytest

from iam.errors import IamInputError, UnsupportedVersionError
from iam.karpenter import (
    IncompatibleVersionsError,
    karpenter_supports_kubernetes,
    kubernetes_range,
    require_karpenter_supports_kubernetes,
)


@pytest.mark.parametrize(
    ("karpenter", "kubernetes", "supported"),
    [
        ("1.14.1", "1.35", True),
        ("1.14.1", "1.36", True),
        ("1.14.1", "1.37", False),
        ("1.14.1", "1.25", False),
        ("1.14.0", "1.26.4", True),
        ("1.8", "1.35", False),
        ("1.8.0", "1.34", True),
        ("0.37.0", "1.30", True),
        ("0.37.0", "1.31", False),
        ("0.28.0", "1.23", True),
        ("0.28.0", "1.22", False),
    ],
)
def test_matrix_cases(karpenter, kubernetes, supported):
    assert karpenter_supports_kubernetes(karpenter, kubernetes) is supported


@pytest.mark.parametrize(
    ("karpenter", "expected"),
    [
        ("0.28.0", ("1.23", "1.27")),
        ("0.30.2", ("1.23", "1.27")),
        ("0.31.0", ("1.23", "1.28")),
        ("0.33.1", ("1.23", "1.28")),
        ("0.34.0", ("1.23", "1.29")),
        ("0.36.5", ("1.23", "1.29")),
        ("0.37.7", ("1.23", "1.30")),
        ("1.0.0", ("1.25", "1.30")),
        ("1.0.4", ("1.25", "1.30")),
        ("1.0.5", ("1.25", "1.31")),
        ("1.0.9", ("1.25", "1.31")),
        ("1.1", ("1.25", "1.31")),
        ("1.2", ("1.25", "1.32")),
        ("1.4.0", ("1.25", "1.32")),
        ("1.5", ("1.26", "1.33")),
        ("1.6", ("1.26", "1.34")),
        ("1.8.4", ("1.26", "1.34")),
        ("1.9", ("1.26", "1.35")),
        ("1.12.1", ("1.26", "1.35")),
        ("1.13", ("1.26", "1.36")),
        ("1.14.1", ("1.26", "1.36")),
    ],
)
def test_every_row_of_the_matrix(karpenter, expected):
    assert kubernetes_range(karpenter) == expected


# The docs' table "minimum Karpenter per Kubernetes version", paired with the release just before it.
@pytest.mark.parametrize(
    ("kubernetes", "minimum", "previous"),
    [
        ("1.30", "0.37.0", "0.36.9"),
        ("1.31", "1.0.5", "1.0.4"),
        ("1.32", "1.2.0", "1.1.9"),
        ("1.33", "1.5.0", "1.4.9"),
        ("1.34", "1.6.0", "1.5.9"),
        ("1.35", "1.9.0", "1.8.9"),
        ("1.36", "1.13.0", "1.12.9"),
    ],
)
def test_agrees_with_the_minimum_version_table(kubernetes, minimum, previous):
    assert karpenter_supports_kubernetes(minimum, kubernetes)
    assert not karpenter_supports_kubernetes(previous, kubernetes)


def test_minor_1_0_needs_a_patch_because_its_patches_differ():
    with pytest.raises(IamInputError, match=r"^karpenter_version='1.0' .*full version"):
        kubernetes_range("1.0")


@pytest.mark.parametrize("version", ["0.27.0", "1.15.0", "2.0"])
def test_versions_outside_the_matrix_are_refused(version):
    with pytest.raises(
        UnsupportedVersionError, match=rf"Karpenter {version}; the bundled matrix covers 0.28.0 to 1.14.x"
    ):
        karpenter_supports_kubernetes(version, "1.30")


@pytest.mark.parametrize(
    ("argument", "karpenter", "kubernetes"),
    [
        ("karpenter_version", "v1.14.1", "1.35"),
        ("karpenter_version", "latest", "1.35"),
        ("kubernetes_version", "1.14.1", "1.35-eks"),
    ],
)
def test_malformed_versions_are_refused_naming_the_argument(argument, karpenter, kubernetes):
    with pytest.raises(IamInputError, match=rf"^{argument}="):
        karpenter_supports_kubernetes(karpenter, kubernetes)


def test_require_raises_with_the_supported_range():
    require_karpenter_supports_kubernetes("1.14.1", "1.36")
    with pytest.raises(IncompatibleVersionsError) as raised:
        require_karpenter_supports_kubernetes("1.8.0", "1.35")
    assert str(raised.value) == (
        "Karpenter 1.8.0 supports Kubernetes 1.26 to 1.34; kubernetes_version='1.35' is outside that range"
    )
