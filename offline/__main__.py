"""`python -m offline plan --stack dev`: write the offline plan of a stack."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from offline.plan import PlanDirectoryError, check_replaceable, check_writable, write_plan
from offline.program import PROJECT_DIR, ProgramFailed, run_program


def capacity_report_for(stack: str, recording):
    """The planner's report, for the zones the evaluated program gave the VPC."""

    def report() -> str:
        from sizing.planning.report import render_report
        from stackconfig.capacity import plan_for
        from stackconfig.load import load_stack_file

        config = load_stack_file(PROJECT_DIR / f"Pulumi.{stack}.yaml")
        zones = recording.one("awsx:ec2:Vpc").input("availabilityZoneNames")
        return render_report(plan_for(config, zones), 100)

    return report


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
        written = write_plan(recording, directory, capacity_report_for(args.stack, recording))
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
    print(
        f"wrote the plan of stack {args.stack} to {directory} ({len(written)} files, {len(recording.resources)} resources)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
