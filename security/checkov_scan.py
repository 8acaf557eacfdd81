"""checkov (kubernetes framework) over the Kubernetes objects of a written plan.

The plan writes one object per file in `build/plan/<stack>/manifests/`; the Helm summaries in
its `helm/` folder are chart values, not objects, and are not scanned. checkov runs offline
(`--skip-download`: no Prisma Cloud guidelines) from its own virtualenv, with the checks of
`security/checkov-skips.yaml` passed as `--skip-check`, and reports in JSON so that a run
that counted fewer objects than there are files fails instead of passing quietly.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from security.suppressions import CheckovSkip

CHECKOV_TIMEOUT_SECONDS = 300


class CheckovError(Exception):
    """checkov did not produce a usable report."""


@dataclass(frozen=True)
class CheckovFailure:
    check: str
    title: str
    resource: str
    file: str

    def __str__(self) -> str:
        return f"{self.check} {self.title}: {self.resource} ({self.file})"


@dataclass(frozen=True)
class CheckovReport:
    passed: int
    resource_count: int
    failures: tuple[CheckovFailure, ...] = field(default_factory=tuple)


def manifest_files(plan_directory: Path) -> list[Path]:
    """The object files of a plan: `manifests/*.yaml`, without the Helm summaries below it."""
    return sorted((plan_directory / "manifests").glob("*.yaml"))


def checkov_command(checkov: Path | str, files: Sequence[Path], skips: Sequence[CheckovSkip]) -> list[str]:
    command = [str(checkov), "--framework", "kubernetes", "--skip-download", "--output", "json", "--quiet", "--compact"]
    if skips:
        command += ["--skip-check", ",".join(skip.check for skip in skips)]
    return command + ["--file", *[str(path) for path in files]]


def run_checkov(checkov: Path | str, files: Sequence[Path], skips: Sequence[CheckovSkip]) -> CheckovReport:
    """Scan `files` (one Kubernetes object each); raise CheckovError when checkov itself fails."""
    if not files:
        raise CheckovError("no manifest files to scan; write the plan first (make plan)")
    # No network: BC_SKIP_MAPPING backs --skip-download (no guideline mapping from Prisma Cloud)
    # and CKV_SKIP_PACKAGE_UPDATE_CHECK stops the banner's version lookup on PyPI.
    environment = {
        **os.environ,
        "BC_SKIP_MAPPING": "TRUE",
        "CKV_SKIP_PACKAGE_UPDATE_CHECK": "TRUE",
        "LOG_LEVEL": "ERROR",
    }
    completed = subprocess.run(
        checkov_command(checkov, files, skips),
        capture_output=True,
        text=True,
        env=environment,
        timeout=CHECKOV_TIMEOUT_SECONDS,
        stdin=subprocess.DEVNULL,
    )
    # checkov exits 1 when a check fails and 0 when none does; anything else is its own failure.
    if completed.returncode not in (0, 1):
        raise CheckovError(f"checkov exited with {completed.returncode}: {completed.stderr.strip()[-2000:]}")
    return parse_checkov_report(completed.stdout, expected_resources=sum(map(_built_in, files)))


def _built_in(path: Path) -> bool:
    """Whether the file's object is of a built-in Kubernetes API (core, or a group that is not a
    custom resource's), which checkov scans; custom resources (NodePool, EC2NodeClass) it skips."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("apiVersion:"):
            group = line.split(":", 1)[1].strip().strip("'\"").rpartition("/")[0]
            return not group or "." not in group or group.endswith(".k8s.io")
    return True


def parse_checkov_report(text: str, expected_resources: int) -> CheckovReport:
    """The report from checkov's JSON output, checked to cover at least `expected_resources` objects."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise CheckovError(f"checkov's output is not JSON ({error}): {text[:500]!r}") from None
    reports = document if isinstance(document, list) else [document]
    kubernetes = [r for r in reports if isinstance(r, dict) and r.get("check_type") == "kubernetes"]
    if not kubernetes and expected_resources == 0 and isinstance(document, dict) and not document.get("resource_count"):
        # Custom resources alone (a stack without the test app): checkov has nothing to check.
        return CheckovReport(passed=0, resource_count=0)
    if len(kubernetes) != 1:
        raise CheckovError(f"checkov reported no kubernetes results: {text[:500]!r}")
    report: dict[str, Any] = kubernetes[0]
    summary = report.get("summary", {})
    if summary.get("parsing_errors"):
        raise CheckovError(f"checkov could not parse {summary['parsing_errors']} file(s)")
    # checkov counts each object, plus one Pod for each workload's pod template.
    resource_count = int(summary.get("resource_count", 0))
    if resource_count < expected_resources:
        raise CheckovError(f"checkov counted {resource_count} objects in {expected_resources} files of one object each")
    failures = tuple(
        CheckovFailure(
            check=result["check_id"],
            title=result.get("check_name", ""),
            resource=result.get("resource", ""),
            file=Path(result.get("file_path", "")).name,
        )
        for result in report.get("results", {}).get("failed_checks", [])
    )
    if len(failures) != int(summary.get("failed", len(failures))):
        raise CheckovError(f"checkov's summary counts {summary.get('failed')} failures but lists {len(failures)}")
    return CheckovReport(passed=int(summary.get("passed", 0)), resource_count=resource_count, failures=failures)
