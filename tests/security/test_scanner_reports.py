"""How the gates read checkov's and parliament's reports, on crafted reports (no tool needed):
a failure is reported, a report that covers fewer objects than expected is an error, and a
parliament finding is accepted only by an entry that names it exactly."""

from __future__ import annotations

import json

import pytest

from security.checkov_scan import CheckovError, checkov_command, manifest_files, parse_checkov_report
from security.parliament_scan import (
    ParliamentFinding,
    apply_ignores,
    finding_actions,
    parse_parliament_output,
    statement_at,
    unused_ignores,
)
from security.suppressions import CheckovSkip, ParliamentIgnore


def checkov_json(failed=(), passed=10, resource_count=2, parsing_errors=0) -> str:
    return json.dumps(
        {
            "check_type": "kubernetes",
            "results": {
                "failed_checks": [
                    {"check_id": check, "check_name": name, "resource": resource, "file_path": "/a--deployment--b.yaml"}
                    for check, name, resource in failed
                ]
            },
            "summary": {
                "passed": passed,
                "failed": len(failed),
                "skipped": 0,
                "parsing_errors": parsing_errors,
                "resource_count": resource_count,
            },
        }
    )


def test_a_failed_check_is_reported_with_its_resource():
    report = parse_checkov_report(
        checkov_json(failed=[("CKV_K8S_23", "Minimize the admission of root containers", "Deployment.a.b")]),
        expected_resources=2,
    )
    (failure,) = report.failures
    assert (
        str(failure) == "CKV_K8S_23 Minimize the admission of root containers: Deployment.a.b (a--deployment--b.yaml)"
    )


def test_a_clean_report_has_no_failures():
    report = parse_checkov_report(checkov_json(passed=94), expected_resources=2)
    assert (report.failures, report.passed, report.resource_count) == ((), 94, 2)


def test_checkov_reports_from_several_frameworks_are_searched_for_kubernetes():
    text = json.dumps([{"check_type": "secrets", "summary": {}}, json.loads(checkov_json())])
    assert parse_checkov_report(text, expected_resources=2).resource_count == 2


@pytest.mark.parametrize(
    "text, message",
    [
        (checkov_json(resource_count=1), "counted 1 objects in 2 files"),
        (checkov_json(parsing_errors=1), "could not parse 1 file"),
        ("Traceback (most recent call last)", "not JSON"),
        (json.dumps({"passed": 0, "failed": 0}), "no kubernetes results"),
    ],
    ids=["object missed", "parsing error", "not json", "nothing scanned"],
)
def test_an_incomplete_checkov_run_is_an_error_not_a_pass(text, message):
    with pytest.raises(CheckovError, match=message):
        parse_checkov_report(text, expected_resources=2)


def test_checkov_runs_offline_on_the_object_files_with_the_listed_skips(tmp_path):
    (tmp_path / "manifests" / "helm").mkdir(parents=True)
    (tmp_path / "manifests" / "test-app--deployment--test-app.yaml").write_text("kind: Deployment\n")
    (tmp_path / "manifests" / "helm" / "karpenter.yaml").write_text("chart: karpenter\n")
    files = manifest_files(tmp_path)
    assert [path.name for path in files] == ["test-app--deployment--test-app.yaml"]
    command = checkov_command(
        "checkov", files, [CheckovSkip("CKV_K8S_43", "t", "r"), CheckovSkip("CKV_K8S_15", "t", "r")]
    )
    assert command[command.index("--framework") + 1] == "kubernetes"
    assert "--skip-download" in command
    assert command[command.index("--skip-check") + 1] == "CKV_K8S_43,CKV_K8S_15"
    assert command[command.index("--file") + 1 :] == [str(files[0])]


POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Sid": "Describe", "Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": "*"},
        {"Effect": "Allow", "Action": ["ec2:RunInstance"], "Resource": "*"},
    ],
}


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "identities-demo-policy.json"
    path.write_text(json.dumps(POLICY, indent=2) + "\n")
    return path


def test_findings_name_their_policy_statement_and_actions(policy_file):
    lines = policy_file.read_text().splitlines()
    action_line = next(number for number, text in enumerate(lines, start=1) if "ec2:RunInstance" in text)
    output = "\n".join(
        [
            json.dumps(
                {
                    "issue": "RESOURCE_STAR",
                    "title": "Unnecessary use of Resource *",
                    "severity": "LOW",
                    "detail": ["ec2:DescribeInstances"],
                    "location": {"line": 4, "filepath": str(policy_file)},
                }
            ),
            json.dumps(
                {
                    "issue": "UNKNOWN_ACTION",
                    "title": "Unknown action",
                    "severity": "LOW",
                    "detail": "Unknown action ec2:RunInstance",
                    "location": {"string": "ec2:RunInstance", "line": action_line, "filepath": str(policy_file)},
                }
            ),
        ]
    )
    star, unknown = parse_parliament_output(output)
    assert (star.policy, star.statement, star.actions) == (
        "identities-demo-policy",
        "Describe",
        frozenset({"ec2:DescribeInstances"}),
    )
    assert (unknown.statement, unknown.actions) == ("#1", frozenset({"ec2:RunInstance"}))
    assert str(unknown) == "LOW UNKNOWN_ACTION (Unknown action) on identities-demo-policy #1: ec2:RunInstance"


def test_statement_lines_follow_the_written_layout(policy_file):
    lines = policy_file.read_text().splitlines()
    assert statement_at(lines, 4) == "Describe"
    assert statement_at(lines, len(lines) - 2) == "#1"
    assert statement_at(lines, 1) is None


@pytest.mark.parametrize(
    "detail, actions, condition",
    [
        (["iam:CreateServiceLinkedRole"], {"iam:CreateServiceLinkedRole"}, None),
        ([{"action": "ssm:GetParameter", "required_format": "arn:*:ssm:*:*:parameter/*"}], {"ssm:GetParameter"}, None),
        ("Unknown action elasticloadbalancing:ModifyIpPools", {"elasticloadbalancing:ModifyIpPools"}, None),
        (
            "Unknown condition elasticloadbalancing:CreateAction for action elasticloadbalancing:AddTags",
            {"elasticloadbalancing:AddTags"},
            "elasticloadbalancing:CreateAction",
        ),
        ({"something": "else"}, set(), None),
    ],
    ids=["resource star", "resource mismatch", "unknown action", "unknown condition", "unrecognised detail"],
)
def test_the_actions_of_each_finding_shape(detail, actions, condition):
    assert finding_actions("ANY", detail) == (frozenset(actions), condition)


def _finding(actions, issue="RESOURCE_STAR", policy="identities-demo-policy", statement="#0", condition=None):
    return ParliamentFinding(policy, issue, "LOW", "t", frozenset(actions), statement, condition, list(actions))


def _ignore(actions, issue="RESOURCE_STAR", statement=None, condition=None):
    return ParliamentIgnore("identities-demo-policy", issue, frozenset(actions), "reason", statement, condition)


def test_an_entry_accepts_only_the_exact_finding_it_names():
    entry = _ignore({"ec2:CreateSecurityGroup"})
    accepted_finding = _finding({"ec2:CreateSecurityGroup"})
    # The same statement with one more action is a new finding that needs its own review.
    widened = _finding({"ec2:CreateSecurityGroup", "ec2:DeleteVpc"})
    other_issue = _finding({"ec2:CreateSecurityGroup"}, issue="RESOURCE_MISMATCH")
    other_policy = _finding({"ec2:CreateSecurityGroup"}, policy="identities-other-policy")
    unaccepted, accepted = apply_ignores([accepted_finding, widened, other_issue, other_policy], [entry])
    assert accepted == [(accepted_finding, entry)]
    assert unaccepted == [widened, other_issue, other_policy]


def test_statement_and_condition_narrow_an_entry():
    entry = _ignore({"ec2:RunInstances"}, issue="RESOURCE_MISMATCH", statement="AllowScoped")
    assert (
        apply_ignores([_finding({"ec2:RunInstances"}, issue="RESOURCE_MISMATCH", statement="Other")], [entry])[1] == []
    )
    condition_entry = _ignore({"elasticloadbalancing:AddTags"}, issue="UNKNOWN_CONDITION_FOR_ACTION", condition="a:B")
    other_condition = _finding({"elasticloadbalancing:AddTags"}, issue="UNKNOWN_CONDITION_FOR_ACTION", condition="a:C")
    assert apply_ignores([other_condition], [condition_entry])[1] == []


def test_a_finding_that_names_no_action_is_never_accepted():
    unaccepted, accepted = apply_ignores([_finding(set())], [_ignore(set())])
    assert accepted == [] and len(unaccepted) == 1


def test_entries_that_accept_nothing_are_reported():
    used, stale = _ignore({"ec2:CreateSecurityGroup"}), _ignore({"ec2:CreateTags"})
    _, accepted = apply_ignores([_finding({"ec2:CreateSecurityGroup"})], [used, stale])
    assert unused_ignores([used, stale], accepted) == [stale]


def test_custom_resources_alone_give_checkov_nothing_to_check_and_that_is_no_error(tmp_path):
    from security.checkov_scan import CheckovError, _built_in, parse_checkov_report

    empty = '{"passed": 0, "failed": 0, "skipped": 0, "parsing_errors": 0, "resource_count": 0}'
    assert parse_checkov_report(empty, expected_resources=0).resource_count == 0
    with pytest.raises(CheckovError, match="no kubernetes results"):
        parse_checkov_report(empty, expected_resources=1)
    pool = tmp_path / "pool.yaml"
    pool.write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\n")
    deployment = tmp_path / "deployment.yaml"
    deployment.write_text("apiVersion: apps/v1\nkind: Deployment\n")
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n")
    assert [_built_in(path) for path in (pool, deployment, policy)] == [False, True, True]
