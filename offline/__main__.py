"""`python -m offline plan --stack dev`: write the offline plan of a stack."""

# ruff: noqa: E402 (the imports below come after the handling of signals is installed)
from __future__ import annotations

from sizing.interrupts import stop_cleanly_on_signals

if __name__ == "__main__":
    # Before Pulumi's modules load: Ctrl-C at any moment is one line and status 130.
    stop_cleanly_on_signals()

import argparse
import sys
from pathlib import Path

from offline.plan import PlanDirectoryError, check_replaceable, check_writable, real_directory, write_plan
from offline.program import PROJECT_DIR, ProgramFailed, run_program


def capacity_reports_for(stack: str, recording):
    """The planner's report as text and as an HTML page, for the zones the evaluated program gave
    the VPC: two callables that share one plan, made when the first is called."""
    plans: list = []

    def plan():
        if not plans:
            from stackconfig.load import load_stack_file
            from stackplan.capacity import plan_for

            config = load_stack_file(PROJECT_DIR / f"Pulumi.{stack}.yaml")
            zones = recording.one("awsx:ec2:Vpc").input("availabilityZoneNames")
            plans.append(plan_for(config, zones))
        return plans[0]

    def report() -> str:
        from sizing.planning.report import render_report

        return render_report(plan(), 100)

    def page() -> str:
        from sizing.planning.report import plan_data
        from sizing.planning.report_html import render_html

        return render_html(plan_data(plan()))

    return report, page


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m offline", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    plan = subparsers.add_parser("plan", help="evaluate a stack offline and write its plan")
    plan.add_argument(
        "--stack", default="dev", help="the stack, whose settings are in Pulumi.<stack>.yaml (default: dev)"
    )
    plan.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write (default: build/plan/<stack>); a folder that is not empty must hold a previous plan",
    )
    args = parser.parse_args(argv)

    from stackconfig.errors import StackConfigError
    from stackconfig.load import stack_file

    try:
        stack_file(args.stack, PROJECT_DIR)
    except StackConfigError as error:
        print(f"error: {'; '.join(error.problems)}", file=sys.stderr)
        return 2
    directory = args.output or PROJECT_DIR / "build" / "plan" / args.stack
    try:
        # Before the evaluation: a folder the plan may not replace is refused at once.
        check_replaceable(directory)
        check_writable(directory)
        recording = run_program(args.stack)
        report, page = capacity_reports_for(args.stack, recording)
        written = write_plan(recording, directory, report, capacity_html=page)
    except ProgramFailed as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    except PlanDirectoryError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for warning in recording.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for placeholder in sorted(set(recording.stood_in.values())):
        print(
            f"note: Pulumi.{args.stack}.yaml leaves {placeholder} to its operator; the plan stands in for it, "
            "and `make up` refuses until it is set",
            file=sys.stderr,
        )
    through = f", through the link to {real_directory(directory)}" if directory.is_symlink() else ""
    print(
        f"wrote the plan of stack {args.stack} to {directory}{through} "
        f"({len(written)} files, {len(recording.resources)} resources)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
