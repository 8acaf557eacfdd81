"""The bundled AWS Load Balancer Controller policy."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest

from iam.documents import MANAGED_POLICY_CHARACTER_LIMIT, policy_size
from iam.errors import IamInputError, UnsupportedVersionError
from iam.load_balancer_controller import (
    SUPPORTED_CHART_VERSIONS,
    controller_policy,
    controller_policy_text,
)

DATA = Path(str(resources.files("iam") / "data"))


def distinct_actions(document: dict) -> set[str]:
    actions: set[str] = set()
    for statement in document["Statement"]:
        action = statement["Action"]
        actions.update([action] if isinstance(action, str) else action)
    return actions


def test_bundled_file_is_the_published_one(published_lbc_policy_path):
    bundled = resources.files("iam") / "data" / "aws-load-balancer-controller" / "3.5.0" / "iam_policy.json"
    assert bundled.read_bytes() == published_lbc_policy_path.read_bytes()
    assert controller_policy_text("3.5.0") == published_lbc_policy_path.read_text(encoding="utf-8")


def test_policy_shape_for_3_5_0():
    document = controller_policy("3.5.0")
    assert document["Version"] == "2012-10-17"
    assert len(document["Statement"]) == 16
    assert len(distinct_actions(document)) == 80
    assert policy_size(document) == 5196 <= MANAGED_POLICY_CHARACTER_LIMIT


def test_policy_keeps_the_tag_on_create_statement():
    statements = controller_policy("3.5.0")["Statement"]
    add_tags = [s for s in statements if s["Action"] == ["elasticloadbalancing:AddTags"]
                and "elasticloadbalancing:CreateAction" in s.get("Condition", {}).get("StringEquals", {})]
    assert len(add_tags) == 1


def test_each_call_returns_a_new_document():
    first = controller_policy("3.5.0")
    first["Statement"].clear()
    assert len(controller_policy("3.5.0")["Statement"]) == 16


@pytest.mark.parametrize("version", ["3.4.0", "v3.5.0", "1.17.1"])
def test_unknown_chart_versions_are_refused(version):
    with pytest.raises(UnsupportedVersionError) as raised:
        controller_policy(version)
    assert str(raised.value) == (
        f"no IAM policy bundled for aws-load-balancer-controller chart {version}; bundled: 3.5.0"
    )
    assert raised.value.argument == "chart_version"


def test_other_partitions_are_refused_rather_than_given_commercial_arns():
    with pytest.raises(IamInputError, match="partition aws-cn; bundled: aws"):
        controller_policy("3.5.0", partition="aws-cn")
    with pytest.raises(IamInputError, match="^partition='mars'"):
        controller_policy("3.5.0", partition="mars")


def test_supported_versions_are_exactly_the_bundled_folders():
    folders = {p.name for p in (DATA / "aws-load-balancer-controller").iterdir() if p.is_dir()}
    assert folders == set(SUPPORTED_CHART_VERSIONS)
    for version in SUPPORTED_CHART_VERSIONS:
        assert (DATA / "aws-load-balancer-controller" / version / "iam_policy.json").is_file()


def test_licence_and_sources_are_recorded_beside_the_data():
    licence = (DATA / "aws-load-balancer-controller" / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0" in licence
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for version in SUPPORTED_CHART_VERSIONS:
        policy = DATA / "aws-load-balancer-controller" / version / "iam_policy.json"
        assert f"`v{version}`" in readme
        assert hashlib.sha256(policy.read_bytes()).hexdigest() in readme
