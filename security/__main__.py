"""`python -m security gates|check`: the security gates of one or more stacks.

    python -m security gates --stack dev
        the project's own gates on the offline evaluation of the stack
    python -m security check --stack dev --checkov .tools/checkov/bin/checkov \\
                             --parliament .tools/parliament/bin/parliament
        checkov on the plan's manifests (write it first: python -m offline plan --stack dev),
        parliament on the identity policies, then the project's own gates

Without --stack, every stack with a Pulumi.<stack>.yaml is checked. The exit status is 0 when
every gate passes, 1 when a gate has findings, 2 when a gate could not run.
"""

# ruff: noqa: E402 (the imports below come after the handling of signals is installed)
from __future__ import annotations

from sizing.interrupts import stop_cleanly_on_signals

if __name__ == "__main__":
    # Before Pulumi's modules load: Ctrl-C at any moment is one line and status 130.
    stop_cleanly_on_signals()

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from offline.program import PROJECT_DIR, ProgramFailed, run_program
from security.checkov_scan import CheckovError, CheckovReport, manifest_files, run_checkov
from security.gates import GateResult, run_gates
from security.parliament_scan import (
    ParliamentError,
    apply_ignores,
    run_parliament,
    unused_ignores,
    write_identity_policies,
)
from security.suppressions import (
    CHECKOV_SKIPS_FILE,
    PARLIAMENT_IGNORE_FILE,
    SuppressionFileError,
    load_checkov_skips,
    load_parliament_ignores,
)

PLAN_DIR = PROJECT_DIR / "build" / "plan"
SECURITY_BUILD_DIR = PROJECT_DIR / "build" / "security"


class GateCouldNotRun(Exception):
    pass


def available_stacks(project_dir: Path = PROJECT_DIR) -> list[str]:
    return sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in project_dir.glob("Pulumi.*.yaml"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m security", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    gates = commands.add_parser("gates", help="the project's own gates")
    check = commands.add_parser("check", help="checkov, parliament and the project's own gates")
    for command in (gates, check):
        command.add_argument("--stack", action="append", help="a stack to check (repeatable; default: every stack)")
    check.add_argument("--checkov", required=True, type=Path, help="the checkov executable (its own virtualenv)")
    check.add_argument("--parliament", required=True, type=Path, help="the parliament executable (its own virtualenv)")
    check.add_argument("--plan-dir", type=Path, default=PLAN_DIR, help="where `python -m offline plan` wrote the plans")
    args = parser.parse_args(argv)

    stacks = args.stack or available_stacks()
    missing = [stack for stack in stacks if not (PROJECT_DIR / f"Pulumi.{stack}.yaml").exists()]
    if missing or not stacks:
        print(f"error: no stack file for {', '.join(missing) or 'any stack'} (Pulumi.<stack>.yaml)", file=sys.stderr)
        return 2
    try:
        if args.command == "gates":
            failed = any([not _own_gates(stack) for stack in stacks])
        else:
            failed = not _check(stacks, args.checkov, args.parliament, args.plan_dir)
    except (GateCouldNotRun, SuppressionFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def _own_gates(stack: str) -> bool:
    recording = _evaluate(stack)
    print(f"stack {stack}")
    results = run_gates(recording)
    for result in results:
        _print_result(result)
    return all(result.passed for result in results)


def _check(stacks: Sequence[str], checkov: Path, parliament: Path, plan_dir: Path) -> bool:
    skips = load_checkov_skips()
    ignores = load_parliament_ignores()
    for tool in (checkov, parliament):
        if not tool.is_file():
            raise GateCouldNotRun(f"{tool} does not exist; `make check` installs the tools under .tools/")
    manifests = {stack: manifest_files(plan_dir / stack) for stack in stacks}
    for stack, files in manifests.items():
        if not files:
            raise GateCouldNotRun(
                f"no manifests in {plan_dir / stack / 'manifests'}; run `python -m offline plan --stack {stack}` first"
            )
    passed = True
    all_accepted = []
    # checkov takes seconds to start; it scans in the background while the programs are evaluated.
    with ThreadPoolExecutor(max_workers=1) as background:
        scans: dict[str, Future] = {
            stack: background.submit(run_checkov, checkov, manifests[stack], skips) for stack in stacks
        }
        for stack in stacks:
            recording = _evaluate(stack)
            print(f"stack {stack}")
            try:
                report: CheckovReport = scans[stack].result()
            except CheckovError as error:
                raise GateCouldNotRun(f"checkov on stack {stack}: {error}") from None
            checkov_result = GateResult(
                "checkov",
                f"checkov kubernetes checks on the plan's manifests, skipping {', '.join(s.check for s in skips) or 'none'}",
                f"{len(manifests[stack])} manifests, {report.passed} checks passed",
                tuple(str(failure) for failure in report.failures),
            )
            policies = write_identity_policies(recording, SECURITY_BUILD_DIR / stack / "identity-policies")
            try:
                findings = run_parliament(parliament, policies)
            except ParliamentError as error:
                raise GateCouldNotRun(f"parliament on stack {stack}: {error}") from None
            unaccepted, accepted = apply_ignores(findings, ignores)
            all_accepted += accepted
            parliament_result = GateResult(
                "parliament",
                f"parliament on the identity policies; accepted findings in {PARLIAMENT_IGNORE_FILE.relative_to(PROJECT_DIR)}",
                f"{len(policies)} identity policies, {len(accepted)} findings accepted",
                tuple(str(finding) for finding in unaccepted),
            )
            results = [checkov_result, parliament_result, *run_gates(recording)]
            for result in results:
                _print_result(result)
            passed = passed and all(result.passed for result in results)
    stale = unused_ignores(ignores, all_accepted)
    if stale:
        passed = False
        print(
            f"FAIL  entries of {PARLIAMENT_IGNORE_FILE.relative_to(PROJECT_DIR)} that accept no finding any more (remove them):"
        )
        for entry in stale:
            print(f"        - {entry.describe()}")
    print(
        f"checkov skips: {', '.join(s.check for s in skips) or 'none'} ({CHECKOV_SKIPS_FILE.relative_to(PROJECT_DIR)})"
    )
    return passed


def _evaluate(stack: str):
    try:
        return run_program(stack)
    except ProgramFailed as failure:
        raise GateCouldNotRun(f"the program stopped on stack {stack}: {failure}") from None


def _print_result(result: GateResult) -> None:
    status = "ok  " if result.passed else "FAIL"
    print(f"  {status}  {result.gate:<26} {result.examined}: {result.description}")
    for finding in result.findings:
        print(f"          - {finding}")


if __name__ == "__main__":
    sys.exit(main())
