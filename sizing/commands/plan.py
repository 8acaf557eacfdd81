"""`python -m sizing plan`: size a NodePool for workloads at peak.

    python -m sizing plan OBJECTS.yaml [MORE.yaml ...] [-] [--zones Z ...] [--region R] [--accept-unmodelled]
    python -m sizing plan DESCRIPTION.yaml [OBJECTS.yaml ...] [--manifests OBJECTS.yaml ...] [--accept-unmodelled]
    python -m sizing plan --stack NAME [--project-dir DIR]
    ... [--catalog FILE] [--spot-discount PERCENT] [--workers N] [--json] [--output FILE] [--html FILE]

Each FILE is read whole and told apart by what it holds: one YAML map without `kind` is a
workload description (docs/sizing-input.md); anything else is Kubernetes objects. `-` reads
stdin, once, told apart the same way. `--stack` reads the Pulumi stack configuration through
the `stackconfig` and `stackplan` packages, with the checks the stack program runs. `--catalog`
plans with a catalog file (such as one `catalog refresh` wrote) and `--spot-discount` prices spot
that many percent below on-demand, by every door; both win over the stack's capacity.catalog and
capacity.spotDiscountPercent. `--output FILE` writes the report (or the JSON) to FILE whole,
through a scratch file renamed over it, instead of to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing.commands.native_output import stdout_to_stderr
from sizing.commands.output import check_output, for_encoding, write_atomically
from sizing.errors import SizingInputError, echo
from sizing.karpenter.catalog import MAX_INSTANCE_TYPES, Catalog, catalog_from_text, read_catalog
from sizing.karpenter.pricing import MAX_DISCOUNT_PERCENT, SpotDiscount, check_catalog_region, validate_price_overrides
from sizing.kube.safe_yaml import MAX_ALIAS_REPEATS, MAX_INPUT_BYTES, decode_text, read_stream_bytes
from sizing.kube.workloads import (
    MAX_EXISTING_NODES,
    MAX_NODE_PER_POD_PODS,
    MAX_PEAK_PODS,
    MAX_REPLICAS,
    MAX_WORKLOADS,
)
from sizing.planning.ceilings import MAX_NODE_POOL_LABELS, MAX_NODE_POOL_REQUIREMENTS, MAX_TOPOLOGY_POD_DOMAINS
from sizing.planning.side_by_side import MAX_WORKERS, available_workers

STACK_SUPPORT_MISSING = "stack configuration support is not available"
# Exit status of a plan made with --fail-on-pending when some pod never runs (2 is an input error).
PENDING_EXIT_CODE = 3
DEFAULT_REGION = "us-east-1"

DESCRIPTION = f"""\
Simulate the fleet Karpenter launches for the workloads at peak (HPA maxReplicas plus the rollout
surge), compare it with the optimal fleet, derive NodePool limits and recommend an instance-type
restriction. cpu in millicores, memory in MiB, costs per hour.

What each door accepts:

  Kubernetes objects (FILE ... and --manifests FILE ...): YAML files of objects, several documents
    and `kind: List` (kubectl get -o yaml) or `DeploymentList`, ... (kubectl get --raw) included. Planned: NodePool (karpenter.sh/v1; the
    heaviest is planned, the others take overflow; requirements and labels, custom keys too),
    EC2NodeClass (kubelet, AMI family; AL2023 without one), Deployment, StatefulSet, Job,
    HorizontalPodAutoscaler (maxReplicas at peak), DaemonSet, Node, NodeClaim. Requests come from
    the containers or the pod-level `resources`; a pod without a request asks 0 of it, and the
    report warns of it. Listed in the report as not planned, because they place no pods: Service,
    Ingress, ConfigMap, Namespace, PodDisruptionBudget and the like, and Pods or ReplicaSets that
    an owner creates. An object given again identically is planned once and listed; one given
    again with other content is refused, naming the first field that differs. Any other kind, and fields that change where pods go but are not modelled,
    stop the plan naming the object, unless --accept-unmodelled (then listed as ignored, may
    under-plan). --region (default: a refreshed --catalog's region, else {DEFAULT_REGION}) and
    --zones apply to this door only.

  A workload description (one FILE holding one YAML map without `kind`; docs/sizing-input.md):
    region, zones, nodePool (requirements, labels, kubelet, amiFamily, limits), workloads,
    daemonSets, existingNodes and planning settings. Further FILEs, --manifests and its own
    `manifests` key add Kubernetes objects whose workloads and DaemonSets join it; a NodePool,
    EC2NodeClass, Node or NodeClaim there is refused (the description's nodePool and
    existingNodes say those). --region and --zones are refused: the description's `region` and
    `zones` keys set them.

  A stack (--stack NAME): Pulumi.NAME.yaml in --project-dir, checked as the stack program checks
    it (eks-autoscaling:* and aws:* keys, the VPC's room for the peak). Takes no FILE, --manifests,
    --region, --zones or --accept-unmodelled: the stack sets them.
    --way-down also plans the way down after the peak: the HPA scales in under the stack's
    behavior.scaleDown (to minReplicas, or --way-down-level PERCENT of the peak), then Karpenter
    empties and consolidates under the NodePool's disruption settings (docs/sizing.md).

  stdin: '-' as a FILE reads stdin, once, told apart like a file. Every input is UTF-8 YAML text
  of at most {MAX_INPUT_BYTES // (1024 * 1024)} MiB; a key given twice in one map is refused, and aliases may repeat at most
  {MAX_ALIAS_REPEATS:,} values per document.

  Prices, by every door: --catalog FILE plans with a catalog file (JSON, format 1 or 2, a regular
    UTF-8 file of at most {MAX_INPUT_BYTES // (1024 * 1024)} MiB, or stdin for "-"; python -m sizing catalog refresh writes one per region). A refreshed
    catalog must be of the region planned. --spot-discount PERCENT (0 to {MAX_DISCOUNT_PERCENT:g}) prices spot
    that many percent below on-demand. --price TYPE=USD (once per type) gives an on-demand price,
    for a region the catalog has no prices for. With --stack, they win over the stack's
    capacity.catalog, capacity.spotDiscountPercent and capacity.priceOverrides.

A workload whose pods can never run (a NodePool taint it does not tolerate, a node selector
nothing satisfies, a host port a DaemonSet binds on every node it may use, pods larger than any
allowed instance type) is left out of the plan and listed first in the report and in the JSON's
`neverRunning`, with its pods and the reason; Karpenter leaves such pods pending. Input whose every
workload can never run is refused. Exit status: 0 planned, 2 input refused, {PENDING_EXIT_CODE} planned with
--fail-on-pending while some pod never runs.

Ceilings, checked before any simulation: {MAX_REPLICAS:,} replicas per workload, {MAX_PEAK_PODS:,} pods at
peak in all, {MAX_WORKLOADS:,} workloads, {MAX_EXISTING_NODES:,} existing nodes, {MAX_NODE_PER_POD_PODS:,} pods that need a node each
(required hostname anti-affinity on their own labels, or a host port), {MAX_TOPOLOGY_POD_DOMAINS:,} pods times
the domains of the topology keys other than hostname they count by, {MAX_NODE_POOL_REQUIREMENTS} requirements and
{MAX_NODE_POOL_LABELS} template labels per NodePool, {MAX_INSTANCE_TYPES:,} instance types in a catalog file.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="plan a NodePool: simulated Karpenter fleet, optimal fleet, limits and a recommendation",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file",
        nargs="*",
        default=[],
        metavar="FILE",
        help="Kubernetes object files, or one workload description and object files; '-' reads stdin once",
    )
    parser.add_argument(
        "--stack", metavar="NAME", help="plan for a Pulumi stack (reads Pulumi.NAME.yaml); takes no FILE"
    )
    parser.add_argument(
        "--manifests",
        nargs="+",
        default=[],
        metavar="FILE",
        help="more Kubernetes object files, as if given as FILE (their workloads add to a description's)",
    )
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="Pulumi project directory for --stack (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the report (or the JSON) to FILE instead of stdout, whole: through a scratch file beside it "
        "renamed over it, so a reader or a second run never sees a mix; a symbolic link is written through",
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the plan as one self-contained HTML page (charts and tables, no network needed) to FILE",
    )
    parser.add_argument(
        "--accept-unmodelled",
        action="store_true",
        help="plan Kubernetes objects even where they use kinds or fields the planner does not model "
        "(listed as ignored)",
    )
    parser.add_argument(
        "--zones",
        nargs="+",
        default=None,
        metavar="ZONE",
        help="zones of --region, for Kubernetes object input only: the region's name and a letter (us-east-1a), "
        "or a Local Zone's (us-west-2-lax-1a)",
    )
    parser.add_argument(
        "--region",
        default=None,
        help=f"region, for Kubernetes object input only (default: a refreshed --catalog's region, else "
        f"{DEFAULT_REGION})",
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        metavar="FILE",
        help="catalog file to plan with, by every door (python -m sizing catalog refresh writes one per region; "
        "'-' reads it from stdin); overrides the stack's capacity.catalog",
    )
    parser.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="TYPE=USD",
        help="on-demand USD/hour of an instance type, such as m5.large=0.096 (repeat it per type), by every door: "
        "for a region the catalog has no prices for; wins over a stack's or description's priceOverrides",
    )
    parser.add_argument(
        "--spot-discount",
        type=float,
        metavar="PERCENT",
        help=f"price spot this many percent below on-demand (0 to {MAX_DISCOUNT_PERCENT:g}), by every door, instead "
        "of market data or the on-demand upper bound; overrides the stack's capacity.spotDiscountPercent",
    )
    parser.add_argument(
        "--fail-on-pending",
        action="store_true",
        help=f"exit with status {PENDING_EXIT_CODE} (after the report) when any pod never runs: a workload no node "
        "may take, or pods a scenario leaves pending even without limits",
    )
    parser.add_argument(
        "--way-down",
        action="store_true",
        help="with --stack: also plan the way down after the peak (the HPA's scale-in, then Karpenter's emptiness "
        "and consolidation under the stack's NodePool disruption settings)",
    )
    parser.add_argument(
        "--way-down-level",
        type=float,
        metavar="PERCENT",
        help="with --way-down: the load left after the peak, in percent of the peak (default: the HPA's minReplicas)",
    )
    parser.add_argument(
        "--max-rows", type=int, default=50, metavar="N", help="nodes listed one per row in the text report"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help=f"processes that may simulate side by side, on Linux (1 to {MAX_WORKERS}; default: the cores available, "
        "at most 2); the plan is the same for any number",
    )
    parser.set_defaults(run=run)


def _stack_input(stack_name: str, project_dir: Path, way_down: bool = False, level: float | None = None) -> Any:
    try:
        from stackconfig.errors import StackConfigError
        from stackplan.capacity import plan_input_for_stack
        from stackplan.way_down import plan_input_with_way_down
    except ModuleNotFoundError as error:
        if error.name in ("stackconfig", "stackconfig.errors", "stackplan", "stackplan.capacity", "stackplan.way_down"):
            raise SizingInputError(
                f"{STACK_SUPPORT_MISSING}: the stackplan.capacity module is missing; plan from a description FILE"
            ) from error
        raise
    try:
        if way_down:
            return plan_input_with_way_down(stack_name, project_dir, level)
        return plan_input_for_stack(stack_name, project_dir)
    except StackConfigError as error:
        raise SizingInputError(str(error)) from None


def _refuse(flags: Sequence[tuple[str, object]], reason: str) -> None:
    given = [flag for flag, value in flags if value not in (None, False, [], ())]
    if given:
        raise SizingInputError(f"{', '.join(given)} cannot be used {reason}")


def _catalog(args: argparse.Namespace, stdin: Any) -> Catalog:
    """The catalog of --catalog: a file, or stdin for '-' (when no input file is '-' too)."""
    if str(args.catalog) != "-":
        return read_catalog(args.catalog)
    if "-" in [str(item) for item in [*args.file, *args.manifests]]:
        raise SizingInputError("'-' (stdin) is given both as --catalog and as an input; stdin can be read once")
    if stdin is None:
        raise SizingInputError("--catalog -: stdin is not available here; give the catalog's file")
    where = "catalog on stdin (--catalog -)"
    text = decode_text(read_stream_bytes(stdin, where), where, kind="a catalog (JSON)")
    return catalog_from_text(text, where, "stdin")


def plan_input_for(args: argparse.Namespace, stdin: Any = None) -> Any:
    """The planner's input for the parsed command line, with --catalog and --spot-discount applied."""
    discount = SpotDiscount(args.spot_discount, "--spot-discount") if args.spot_discount is not None else None
    catalog = _catalog(args, stdin) if args.catalog is not None else None
    plan_input, region_given = _door_input(args, stdin, catalog)
    if catalog is not None:
        check_catalog_region(catalog.info, plan_input.region, "--catalog", region_given)
        plan_input = replace(plan_input, catalog=catalog.instance_types, catalog_info=catalog.info)
    if discount is not None:
        plan_input = replace(plan_input, spot_discount=discount)
    if args.price:
        prices = _prices(args.price, catalog)
        plan_input = replace(
            plan_input, price_overrides={**plan_input.price_overrides, **prices}, price_overrides_key="--price"
        )
    return plan_input


def _prices(given: Sequence[str], catalog: Catalog | None) -> Mapping[str, float]:
    """`--price TYPE=USD` flags as instance type -> USD/hour, each type known to the catalog planned with."""
    if len(given) > MAX_INSTANCE_TYPES:
        raise SizingInputError(
            f"--price is given {len(given):,} times, more than {MAX_INSTANCE_TYPES:,} (one per type)"
        )
    prices: dict[str, object] = {}
    for value in given:
        name, equals, price = value.partition("=")
        name, price = name.strip(), price.strip()
        if not equals or not name or not price:
            raise SizingInputError(f"--price {echo(value)}: give TYPE=USD_PER_HOUR, such as --price m5.large=0.096")
        if name in prices:
            raise SizingInputError(f"--price gives {echo(name)} twice; give each instance type once")
        try:
            prices[name] = float(price)
        except ValueError:
            raise SizingInputError(
                f"--price {echo(value)}: {echo(price)} is not a number of USD/hour (such as m5.large=0.096)"
            ) from None
    known = [instance.name for instance in (catalog or read_catalog()).instance_types]
    return validate_price_overrides(prices, known, "--price")


def _door_input(args: argparse.Namespace, stdin: Any, catalog: Catalog | None) -> tuple[Any, str]:
    """The planner's input of the door the command line uses, and what set its region (for a
    refusal of a catalog of another region)."""
    from sizing.kube.objects import ObjectCounter
    from sizing.planning.description import plan_input_from_input
    from sizing.planning.objects import STDIN, objects_of, plan_input_from_objects, read_inputs

    if args.stack is not None:
        _refuse(
            [
                ("FILE", args.file),
                ("--manifests", args.manifests),
                ("--region", args.region),
                ("--zones", args.zones),
                ("--accept-unmodelled", args.accept_unmodelled),
            ],
            "with --stack: the stack file sets what the plan reads",
        )
        if args.way_down_level is not None and not args.way_down:
            raise SizingInputError("--way-down-level needs --way-down")
        stack_input = _stack_input(args.stack, args.project_dir or Path("."), args.way_down, args.way_down_level)
        return stack_input, f"aws:region of stack {args.stack}"
    _refuse(
        [("--project-dir", args.project_dir), ("--way-down", args.way_down), ("--way-down-level", args.way_down_level)],
        "without --stack",
    )
    if not args.file and not args.manifests:
        raise SizingInputError("give a description FILE, Kubernetes object files, or --stack")
    if [*args.file, *args.manifests].count(STDIN) > 1:
        raise SizingInputError("'-' (stdin) is given more than once; stdin can be read once")
    counter = ObjectCounter()
    inputs = read_inputs(args.file, stdin, counter=counter) + read_inputs(
        args.manifests, stdin, what="manifest", counter=counter
    )
    descriptions = [item for item in inputs if item.is_description]
    if len(descriptions) > 1:
        raise SizingInputError(
            f"{descriptions[0].where} and {descriptions[1].where} are both workload descriptions; "
            "plan one at a time (Kubernetes object files may join it)"
        )
    if descriptions:
        (description,) = descriptions
        _refuse(
            [("--region", args.region), ("--zones", args.zones)],
            f"with a workload description: {description.where} sets them with its `region` and `zones` keys",
        )
        others = [item for item in inputs if item is not description]
        return (
            plan_input_from_input(description, others, args.accept_unmodelled),
            f"the `region` of {description.where}",
        )
    # Without --region, a refreshed catalog's region is the one planned: its prices and offerings are that region's.
    region = args.region or (catalog.info.region if catalog is not None else None) or DEFAULT_REGION
    plan_input = plan_input_from_objects(objects_of(inputs), args.accept_unmodelled, args.zones or (), region)
    # Kubernetes objects carry no prices: a region without them takes --price.
    plan_input = replace(plan_input, price_overrides_key="--price")
    return plan_input, "--region" if args.region is not None else "the default region"


def run(args: argparse.Namespace) -> int:
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import plan_data, render_report

    if args.max_rows < 0:
        raise SizingInputError(f"--max-rows must be >= 0, got {args.max_rows}")
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise SizingInputError(f"--workers must be an integer from 1 to {MAX_WORKERS}, got {args.workers}")
    workers = available_workers() if args.workers is None else args.workers
    if args.output is not None:
        check_output(args.output, "--output")
    if args.html is not None:
        check_output(args.html, "--html")
    plan_input = plan_input_for(args, sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None)
    with stdout_to_stderr():
        plan = plan_capacity(plan_input, workers=workers)
    if args.html is not None:
        from sizing.planning.report_html import render_html

        write_atomically(args.html, render_html(plan_data(plan)), "--html")
    text = json.dumps(plan_data(plan), indent=2) + "\n" if args.json else render_report(plan, args.max_rows)
    if args.output is None:
        sys.stdout.write(for_encoding(text, getattr(sys.stdout, "encoding", None)))
    else:
        write_atomically(args.output, text, "--output")
    if args.fail_on_pending and plan.pods_never_running:
        print(
            f"sizing: {plan.pods_never_running:,} pods never run (--fail-on-pending): exit status {PENDING_EXIT_CODE}",
            file=sys.stderr,
        )
        return PENDING_EXIT_CODE
    return 0
