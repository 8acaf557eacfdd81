"""checkov and parliament themselves, from their environments under .tools/: each fails on a
crafted bad input and passes on the real stacks with the listed skips and accepted findings.

`make check` installs the tools and runs this module with SECURITY_TOOLS_REQUIRED=1; `make test`
skips it, so that the suite neither depends on .tools/ nor spends its seconds starting checkov.
"""

from __future__ import annotations

import json
import os

import pytest

from offline.plan import Presenter, write_manifests
from offline.program import PROJECT_DIR
from security.checkov_scan import manifest_files, run_checkov
from security.parliament_scan import apply_ignores, run_parliament, unused_ignores, write_identity_policies
from security.suppressions import load_checkov_skips, load_parliament_ignores
from tests.security.conftest import STACKS

CHECKOV = PROJECT_DIR / ".tools" / "checkov" / "bin" / "checkov"
PARLIAMENT = PROJECT_DIR / ".tools" / "parliament" / "bin" / "parliament"

pytestmark = pytest.mark.skipif(
    os.environ.get("SECURITY_TOOLS_REQUIRED") != "1",
    reason="runs under `make check`, which installs checkov and parliament in .tools/ and sets SECURITY_TOOLS_REQUIRED=1",
)


@pytest.fixture(scope="module", autouse=True)
def tools_are_installed():
    missing = [str(tool) for tool in (CHECKOV, PARLIAMENT) if not tool.is_file()]
    assert not missing, f"missing {', '.join(missing)}; `make security-tools` installs them"


ROOT_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: httpbin
  namespace: test-app
spec:
  selector:
    matchLabels: {app: httpbin}
  template:
    metadata:
      labels: {app: httpbin}
    spec:
      containers:
        - name: httpbin
          image: kennethreitz/httpbin:latest
          securityContext:
            runAsUser: 0
            privileged: true
"""


def test_checkov_fails_a_root_privileged_container(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "test-app--deployment--httpbin.yaml").write_text(ROOT_DEPLOYMENT)
    report = run_checkov(CHECKOV, manifest_files(tmp_path), load_checkov_skips())
    failed = {failure.check for failure in report.failures}
    # Root containers, privileged containers, privilege escalation, no seccomp, a moving tag.
    assert {"CKV_K8S_23", "CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_31", "CKV_K8S_14"} <= failed
    # The skipped checks reached checkov: the digest-less image is not reported.
    assert not failed & {skip.check for skip in load_checkov_skips()}


def test_checkov_passes_the_plans_of_the_real_stacks(recording_of, tmp_path):
    files = []
    for stack in STACKS:
        # The manifests exactly as `python -m offline plan` writes them (the rest of the plan is not scanned).
        recording = recording_of(stack)
        write_manifests(recording, tmp_path / stack / "manifests", Presenter(recording.invented))
        files += manifest_files(tmp_path / stack)
    report = run_checkov(CHECKOV, files, load_checkov_skips())
    assert report.failures == ()
    assert report.resource_count >= len(files) and report.passed > 0


def _policy(directory, name, statements):
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"Version": "2012-10-17", "Statement": statements}, indent=2) + "\n")
    return path


def test_parliament_fails_a_typo_and_a_mismatched_resource(tmp_path):
    files = [
        _policy(tmp_path, "identities-typo", [{"Effect": "Allow", "Action": "ec2:RunInstance", "Resource": "*"}]),
        _policy(
            tmp_path,
            "identities-aws-load-balancer-controller-policy",
            [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bucket"}],
        ),
    ]
    unaccepted, accepted = apply_ignores(run_parliament(PARLIAMENT, files), load_parliament_ignores())
    assert accepted == []
    found = {(finding.policy, finding.issue, tuple(sorted(finding.actions))) for finding in unaccepted}
    assert ("identities-typo", "UNKNOWN_ACTION", ("ec2:RunInstance",)) in found
    assert ("identities-aws-load-balancer-controller-policy", "RESOURCE_MISMATCH", ("s3:GetObject",)) in found


@pytest.mark.parametrize("stack", STACKS)
def test_parliament_findings_on_the_real_stack_are_all_accepted(recording_of, tmp_path, stack):
    ignores = load_parliament_ignores()
    files = write_identity_policies(recording_of(stack), tmp_path)
    unaccepted, accepted = apply_ignores(run_parliament(PARLIAMENT, files), ignores)
    assert unaccepted == []
    assert unused_ignores(ignores, accepted) == []
