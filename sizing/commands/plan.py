"""`python -m sizing plan`: size a NodePool for workloads at peak.

    python -m sizing plan FILE [--manifests A.yaml B.yaml ...] [--json]
    python -m sizing plan --stack dev [--project-dir DIR] [--json]

FILE is a workload description (docs/sizing-input.md). `--stack` reads the
Pulumi stack configuration through the `stackconfig` package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sizing.errors import SizingInputError
from sizing.commands.native_output import stdout_to_stderr

STACK_SUPPORT_MISSING = "stack configuration support is not available"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="plan a NodePool: simulated Karpenter fleet, optimal fleet, limits and a recommendation",
        description=(
            "Simulate the fleet Karpenter launches for the workloads at peak (HPA maxReplicas plus the "
            "rollout surge), compare it with the optimal fleet, derive NodePool limits and recommend an "
            "instance-type restriction. cpu in millicores, memory in MiB, costs per hour."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", type=Path, metavar="FILE", help="workload description (YAML)")
    source.add_argument("--stack", metavar="NAME", help="plan for a Pulumi stack (reads Pulumi.NAME.yaml)")
    parser.add_argument(
        "--manifests", nargs="+", type=Path, default=[], metavar="FILE",
        help="Kubernetes manifests (Deployments, HPAs, DaemonSets) whose workloads add to FILE's",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), metavar="DIR",
        help="Pulumi project directory for --stack (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument(
        "--max-rows", type=int, default=50, metavar="N", help="nodes listed one per row in the text report"
    )
    parser.set_defaults(run=run)


def _stack_input(stack_name: str, project_dir: Path) -> Any:
    try:
        from stackconfig.capacity import plan_input_for_stack
        from stackconfig.errors import StackConfigError
    except ModuleNotFoundError as error:
        if error.name in ("stackconfig", "stackconfig.capacity", "stackconfig.errors"):
            raise SizingInputError(
                f"{STACK_SUPPORT_MISSING}: the stackconfig.capacity module is missing; plan from a description FILE"
            ) from error
        raise
    try:
        return plan_input_for_stack(stack_name, project_dir)
    except StackConfigError as error:
        raise SizingInputError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    from sizing.planning.description import read_description
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import plan_data, render_report

    if args.max_rows < 0:
        raise SizingInputError(f"--max-rows must be >= 0, got {args.max_rows}")
    if args.stack is not None:
        if args.manifests:
            raise SizingInputError("--manifests goes with a description FILE, not with --stack")
        plan_input = _stack_input(args.stack, args.project_dir)
    else:
        plan_input = read_description(args.file, args.manifests)
    with stdout_to_stderr():
        plan = plan_capacity(plan_input)
    if args.json:
        json.dump(plan_data(plan), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_report(plan, args.max_rows))
    return 0
