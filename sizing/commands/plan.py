"""`python -m sizing plan`: size a NodePool for workloads at peak.

    python -m sizing plan FILE [--manifests A.yaml B.yaml ...] [--json]
    python -m sizing plan OBJECTS.yaml [MORE.yaml ...|-] [--accept-unmodelled] [--zones a b c] [--json]
    python -m sizing plan --stack dev [--project-dir DIR] [--json]
    ... [--catalog FILE] [--spot-discount PERCENT]

FILE is a workload description (docs/sizing-input.md). Files holding
Kubernetes objects (NodePools, EC2NodeClass, Deployments, StatefulSets, Jobs,
DaemonSets, HPAs, Nodes, NodeClaims; `kubectl get -o yaml` Lists too; `-` for
stdin) are read as such. `--stack` reads the Pulumi stack configuration
through the `stackconfig` package. `--catalog` plans with a catalog file (such
as one `catalog refresh` wrote) and `--spot-discount` prices spot that many
percent below on-demand; both win over the stack's capacity.catalog and
capacity.spotDiscountPercent.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing.commands.native_output import stdout_to_stderr
from sizing.errors import SizingInputError
from sizing.karpenter.catalog import read_catalog
from sizing.karpenter.pricing import SpotDiscount, check_catalog_region

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
    source.add_argument(
        "file",
        nargs="*",
        default=[],
        metavar="FILE",
        help="workload description (YAML), or Kubernetes object files ('-' for stdin)",
    )
    source.add_argument("--stack", metavar="NAME", help="plan for a Pulumi stack (reads Pulumi.NAME.yaml)")
    parser.add_argument(
        "--manifests",
        nargs="+",
        type=Path,
        default=[],
        metavar="FILE",
        help="Kubernetes manifests (Deployments, HPAs, DaemonSets) whose workloads add to FILE's",
    )
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="Pulumi project directory for --stack (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument(
        "--accept-unmodelled",
        action="store_true",
        help="plan Kubernetes objects even where they use fields the planner does not model (listed as ignored)",
    )
    parser.add_argument("--zones", nargs="+", default=[], metavar="ZONE", help="zones for Kubernetes object input")
    parser.add_argument(
        "--region",
        help="region for Kubernetes object input (default: a refreshed --catalog's region, else us-east-1)",
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        metavar="FILE",
        help="catalog file to plan with (python -m sizing catalog refresh writes one per region); "
        "overrides the stack's capacity.catalog",
    )
    parser.add_argument(
        "--spot-discount",
        type=float,
        metavar="PERCENT",
        help="price spot this many percent below on-demand (0 to 99), instead of market data or the "
        "on-demand upper bound; overrides the stack's capacity.spotDiscountPercent",
    )
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


def _objects_input(files: Sequence[str]) -> bool:
    from sizing.planning.objects import is_object_document

    if any(str(f) == "-" for f in files) or len(files) > 1:
        return True
    try:
        return is_object_document(Path(files[0]).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        # The description reader names the file and the problem.
        return False


def run(args: argparse.Namespace) -> int:
    from sizing.planning.description import read_description
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import plan_data, render_report

    if args.max_rows < 0:
        raise SizingInputError(f"--max-rows must be >= 0, got {args.max_rows}")
    discount = SpotDiscount(args.spot_discount, "--spot-discount") if args.spot_discount is not None else None
    catalog = read_catalog(args.catalog) if args.catalog is not None else None
    # Where the plan's region comes from, for a refusal of a catalog of another region.
    region_given = "--region"
    if args.region is None:
        args.region = (catalog.info.region if catalog is not None else None) or "us-east-1"
    if args.stack is not None:
        if args.manifests or args.file:
            raise SizingInputError("--manifests and FILE go without --stack")
        plan_input = _stack_input(args.stack, args.project_dir)
    elif not args.file:
        raise SizingInputError("give a description FILE, Kubernetes object files, or --stack")
    elif _objects_input(args.file):
        from sizing.planning.objects import plan_input_from_objects, read_object_files

        plan_input = plan_input_from_objects(
            read_object_files(args.file), args.accept_unmodelled, args.zones, args.region
        )
    elif len(args.file) > 1:
        raise SizingInputError("a workload description is one FILE; pass further manifests with --manifests")
    else:
        plan_input = read_description(Path(args.file[0]), args.manifests)
        region_given = f"the region of {args.file[0]}"
    if args.stack is not None:
        region_given = f"aws:region of stack {args.stack}"
    if catalog is not None:
        check_catalog_region(catalog.info, plan_input.region, "--catalog", region_given)
        plan_input = replace(plan_input, catalog=catalog.instance_types, catalog_info=catalog.info)
    if discount is not None:
        plan_input = replace(plan_input, spot_discount=discount)
    with stdout_to_stderr():
        plan = plan_capacity(plan_input)
    if args.json:
        json.dump(plan_data(plan), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_report(plan, args.max_rows))
    return 0
