"""The skip and ignore files: they parse, every entry has a reason, and malformed entries are refused."""

from __future__ import annotations

import pytest

from security.suppressions import (
    MINIMUM_REASON_LENGTH,
    SuppressionFileError,
    load_checkov_skips,
    load_parliament_ignores,
)


def test_checkov_skips_parse_and_each_has_a_reason():
    skips = load_checkov_skips()
    assert skips
    for skip in skips:
        assert skip.title and len(skip.reason) >= MINIMUM_REASON_LENGTH


def test_parliament_ignores_parse_and_each_has_a_reason():
    ignores = load_parliament_ignores()
    assert ignores
    for ignore in ignores:
        assert ignore.policy.startswith("identities-") and ignore.actions
        assert len(ignore.reason) >= MINIMUM_REASON_LENGTH


def test_the_accepted_upstream_quirks_are_listed():
    described = {ignore.describe() for ignore in load_parliament_ignores()}
    assert (
        "UNKNOWN_ACTION on identities-aws-load-balancer-controller-policy: elasticloadbalancing:ModifyIpPools"
        in described
    )
    assert (
        "UNKNOWN_CONDITION_FOR_ACTION on identities-aws-load-balancer-controller-policy: "
        "elasticloadbalancing:AddTags condition elasticloadbalancing:CreateAction"
    ) in described


@pytest.mark.parametrize(
    "text, problem",
    [
        ("- check: CKV_K8S_43\n  title: Image should use digest\n", "missing key 'reason'"),
        ("- check: CKV_K8S_43\n  title: t\n  reason: fine\n", "reason must say why"),
        ("- check: CKV_AWS_1\n  title: t\n  reason: " + "x" * 50 + "\n", "not a checkov Kubernetes check id"),
        ("- check: CKV_K8S_43\n  title: t\n  reason: " + "x" * 50 + "\n  until: never\n", "unknown key 'until'"),
        ("check: CKV_K8S_43\n", "a YAML list of entries"),
        ("- CKV_K8S_43\n", "entry 1 is not a mapping"),
    ],
    ids=["no reason", "short reason", "not a kubernetes check", "unknown key", "not a list", "not a mapping"],
)
def test_malformed_checkov_skips_are_refused(tmp_path, text, problem):
    path = tmp_path / "skips.yaml"
    path.write_text(text)
    with pytest.raises(SuppressionFileError) as error:
        load_checkov_skips(path)
    assert problem in str(error.value)


def test_a_checkov_skip_listed_twice_is_refused(tmp_path):
    entry = "- check: CKV_K8S_43\n  title: t\n  reason: " + "x" * 50 + "\n"
    path = tmp_path / "skips.yaml"
    path.write_text(entry * 2)
    with pytest.raises(SuppressionFileError, match="CKV_K8S_43 is listed more than once"):
        load_checkov_skips(path)


REASON = "  reason: " + "the statement is scoped by a tag condition upstream" + "\n"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("- policy: p\n  issue: RESOURCE_STAR\n  actions: [ec2:CreateTags]\n", "missing key 'reason'"),
        ("- policy: p\n  issue: RESOURCE_STAR\n  actions: []\n" + REASON, "actions must list"),
        ("- policy: p\n  issue: RESOURCE_STAR\n  actions: ['*']\n" + REASON, "'*' is not an IAM action"),
        ("- policy: p\n  issue: resource star\n  actions: [ec2:CreateTags]\n" + REASON, "not a parliament issue code"),
        (
            "- policy: p\n  issue: RESOURCE_STAR\n  actions: [ec2:CreateTags]\n  line: 4\n" + REASON,
            "unknown key 'line'",
        ),
    ],
    ids=["no reason", "no actions", "wildcard action", "bad issue", "unknown key"],
)
def test_malformed_parliament_ignores_are_refused(tmp_path, text, problem):
    path = tmp_path / "ignore.yaml"
    path.write_text(text)
    with pytest.raises(SuppressionFileError) as error:
        load_parliament_ignores(path)
    assert problem in str(error.value)
