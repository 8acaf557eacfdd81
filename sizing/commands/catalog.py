"""`python -m sizing catalog`: list instance types with Karpenter's allocatable, or refresh a region's catalog.

python -m sizing catalog [--catalog FILE] [--region R] [--requirements FILE] [--json]
python -m sizing catalog refresh [--region R] [--stack NAME] [--profile NAME] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sizing.commands.output import check_output, write_atomically
from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import allocatable, max_pods
from sizing.karpenter.catalog import Catalog, InstanceType, read_catalog
from sizing.karpenter.pricing import check_catalog_region, validate_region
from sizing.karpenter.requirements import (
    Requirement,
    allowed_capacity_types,
    filter_instance_types,
    parse_requirements,
    requirement_objects_from_document,
)
from sizing.kube.safe_yaml import load_documents, read_text

DEFAULT_REGION = "us-east-1"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "catalog",
        help="list instance types with Karpenter's allocatable resources and prices, or refresh a region's catalog",
        description=(
            "List the instance types of the catalog with max pods, Karpenter's allocatable "
            "(cpu millicores, memory MiB, pods), the on-demand price in USD/hour and, where the catalog "
            "has them, spot prices and the zones each type is offered in; optionally filtered by NodePool "
            "requirements. `catalog refresh --region R` writes a catalog of region R from the AWS APIs."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--region",
        help=f"region of the prices shown (default: a refreshed catalog's own region, else {DEFAULT_REGION})",
    )
    parser.add_argument(
        "--requirements",
        type=Path,
        metavar="FILE",
        help="YAML or JSON file: a list of NodePool requirements, or a NodePool object",
    )
    parser.add_argument("--catalog", type=Path, metavar="FILE", help="catalog file to read instead of the bundled one")
    # The former spelling of `catalog refresh`, still accepted.
    parser.add_argument("--refresh", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, metavar="FILE", help=argparse.SUPPRESS)
    parser.set_defaults(run=run)
    actions = parser.add_subparsers(dest="action", metavar="{refresh}")
    refresh = actions.add_parser(
        "refresh",
        help="write a catalog of one region from the AWS APIs (needs boto3 and AWS credentials)",
        description=(
            "Fetch, for one region: the instance types (ec2:DescribeInstanceTypes), on-demand prices "
            "(pricing:GetProducts), the current spot price per type and zone (ec2:DescribeSpotPriceHistory), "
            "the zones each type is offered in (ec2:DescribeInstanceTypeOfferings) and the account's zone names "
            "and IDs (ec2:DescribeAvailabilityZones), and write them to a catalog file, zones keyed by zone ID, "
            "that `plan --catalog` and the stack key capacity.catalog read. A denied call other "
            "than DescribeInstanceTypes leaves its part out, says which permission was missing, and the file "
            "records it."
        ),
    )
    refresh.add_argument(
        "--region", dest="refresh_region", help="the region to refresh (default: the stack's aws:region with --stack)"
    )
    refresh.add_argument(
        "--stack",
        dest="refresh_stack",
        metavar="NAME",
        help=(
            "sign in as stack NAME's AWS provider does: aws:profile, the role of aws:assumeRoles and the files of "
            "aws:sharedConfigFiles / aws:sharedCredentialsFiles from Pulumi.NAME.yaml in the current folder; "
            "its aws:region is the default region"
        ),
    )
    refresh.add_argument(
        "--profile", dest="refresh_profile", metavar="NAME", help="the AWS profile to sign in with (over the stack's)"
    )
    refresh.add_argument(
        "--output", dest="refresh_output", type=Path, metavar="FILE", help="file to write (default catalog-REGION.json)"
    )
    refresh.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) == "refresh":
        extra = [flag for flag, used in _listing_flags(args) if used]
        if extra:
            raise SizingInputError(
                f"catalog refresh takes only --region, --stack, --profile and --output, not {', '.join(extra)}"
            )
        region, sign_in = args.refresh_region, None
        if args.refresh_stack is not None or args.refresh_profile is not None:
            stack_region, sign_in = refresh_sign_in(args.refresh_stack, args.refresh_profile, Path("."))
            region = region or stack_region
        if region is None:
            raise SizingInputError("catalog refresh needs --region R, or --stack NAME whose stack file sets aws:region")
        return _refresh(validate_region(region), args.refresh_output, sign_in)
    if args.refresh:
        extra = [flag for flag, used in _listing_flags(args) if used]
        if extra:
            raise SizingInputError(f"--refresh takes only --region and --output, not {', '.join(extra)}")
        if args.output is None:
            raise SizingInputError("--refresh needs --output FILE, the catalog file to write")
        return _refresh(validate_region(args.region or DEFAULT_REGION), args.output)
    if args.output is not None:
        raise SizingInputError("--output is only used with catalog refresh")
    catalog = read_catalog(args.catalog)
    region = args.region or catalog.info.region or DEFAULT_REGION
    validate_region(region)
    check_catalog_region(catalog.info, region, "--catalog", "--region")
    instances: Sequence[InstanceType] = catalog.instance_types
    requirements: tuple[Requirement, ...] = ()
    if args.requirements is not None:
        requirements = read_requirements_file(args.requirements)
        instances = filter_instance_types(instances, requirements)
    capacity_types = allowed_capacity_types(requirements)
    rows = [catalog_entry(instance, region) for instance in instances]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_table(rows, region, capacity_types, _columns_known(catalog, region)))
    return 0


def _listing_flags(args: argparse.Namespace) -> list[tuple[str, object]]:
    return [("--json", args.json), ("--requirements", args.requirements), ("--catalog", args.catalog)]


# The stack file's keys that say how its AWS provider signs in.
STACK_AWS_KEYS = ("aws:region", "aws:profile", "aws:assumeRoles", "aws:sharedConfigFiles", "aws:sharedCredentialsFiles")


def refresh_sign_in(stack: str | None, profile: str | None, directory: Path) -> tuple[str | None, Any]:
    """(the stack's aws:region or None, AwsSignIn) for `catalog refresh --stack/--profile`: the profile,
    role and files of Pulumi.<stack>.yaml in `directory`, with `profile` over the stack's."""
    from sizing.karpenter.catalog_refresh import AwsSignIn

    settings: dict[str, Any] = {}
    if stack is not None:
        if not stack or len(stack) > 100 or "/" in stack or stack.startswith("."):
            raise SizingInputError(f"--stack {stack[:100]!r} is not a stack name such as dev")
        path = directory / f"Pulumi.{stack}.yaml"
        where = f"--stack {stack}: {path}"
        documents = [d for d in load_documents(read_text(path, where), where) if d is not None]
        config = documents[0].get("config") if len(documents) == 1 and isinstance(documents[0], dict) else None
        if not isinstance(config, dict):
            raise SizingInputError(f"{where}: has no `config:` mapping, so no AWS settings")
        settings = {key: config[key] for key in STACK_AWS_KEYS if key in config}
    roles = settings.get("aws:assumeRoles") or []
    files = {key: settings.get(key) or [] for key in ("aws:sharedConfigFiles", "aws:sharedCredentialsFiles")}
    checked = {"aws:assumeRoles": roles, **files}
    for key, value in checked.items():
        if not isinstance(value, list) or len(value) > 1:
            raise SizingInputError(
                f"--stack {stack}: `{key}` must be a list of at most one entry, as the program accepts"
            )
    role = roles[0].get("roleArn") if roles and isinstance(roles[0], dict) else None
    for key, value in (
        ("aws:region", settings.get("aws:region")),
        ("aws:profile", settings.get("aws:profile")),
        ("aws:assumeRoles[0].roleArn", role),
    ):
        if value is not None and not isinstance(value, str):
            raise SizingInputError(f"--stack {stack}: `{key}` must be text, got {str(value)[:80]!r}")
    config_files, credentials_files = files["aws:sharedConfigFiles"], files["aws:sharedCredentialsFiles"]
    sign_in = AwsSignIn(
        profile=profile or settings.get("aws:profile"),
        role_arn=role,
        config_file=str(config_files[0]) if config_files else None,
        credentials_file=str(credentials_files[0]) if credentials_files else None,
    )
    return settings.get("aws:region"), sign_in


def _refresh(region: str, output: Path | None, sign_in: Any = None) -> int:
    from sizing.karpenter.catalog_refresh import aws_session, refresh_catalog

    path = output if output is not None else Path(f"catalog-{region}.json")
    # Checked before the AWS calls, which take a while; written through a file of its own beside it,
    # so that a FIFO or a folder at `path` is never opened and a failed write leaves the old file.
    check_output(path, "--output")
    if sign_in is None:
        refreshed = refresh_catalog(region)
    else:
        session = aws_session(sign_in)
        print(f"signing in with {sign_in.describe()}", file=sys.stderr)
        refreshed = refresh_catalog(region, session=session)
    write_atomically(path, refreshed.text(), "--output")
    print(f"wrote {path}: {refreshed.summary()}")
    zone_ids = refreshed.info.zone_ids
    if zone_ids:
        whose = f"account {refreshed.info.account}" if refreshed.info.account else "this account"
        shown = ", ".join(f"{name} ({zone_ids[name]})" for name in sorted(zone_ids))
        print(f"zones keyed by zone ID; the names of {whose}: {shown}")
    for gap in refreshed.info.gaps:
        print(f"warning: {gap}", file=sys.stderr)
    return 0


def read_requirements_file(path: Path) -> tuple[Requirement, ...]:
    """Requirements from a YAML/JSON file holding a requirement list or a NodePool object.

    A multi-document YAML file may hold other objects too, but exactly one NodePool.
    """
    where = f"requirements file {str(path)!r}"
    # JSON is YAML: one reader for both, with the checks of every YAML input.
    documents = [document for document in load_documents(read_text(path, where), where) if document is not None]
    if len(documents) > 1:
        documents = [d for d in documents if isinstance(d, dict) and d.get("kind") == "NodePool"]
        if len(documents) != 1:
            raise SizingInputError(
                f"{where}: holds several documents; it needs exactly one NodePool, found {len(documents)}"
            )
    if not documents:
        raise SizingInputError(f"{where}: is empty; expected a list of requirements or a NodePool object")
    return parse_requirements(requirement_objects_from_document(documents[0], where), f"{where}: requirements")


def catalog_entry(instance: InstanceType, region: str) -> dict[str, Any]:
    """The JSON form of one type: cpu in millicores, memory in MiB, price in USD/hour or None,
    spot prices in USD/hour by zone (empty when the catalog has none), offered zones (None when
    the catalog did not record them)."""
    zones = instance.offered_zones(region)
    return {
        "name": instance.name,
        "arch": instance.arch,
        "vcpu": instance.vcpu,
        "memoryMiB": instance.memory_mib,
        "maxPods": max_pods(instance),
        "allocatable": allocatable(instance).as_dict(),
        "price": instance.price(region),
        "spotPrices": dict(sorted(instance.spot_prices.get(region, {}).items())),
        "zones": None if zones is None else list(zones),
    }


def _columns_known(catalog: Catalog, region: str) -> tuple[bool, bool]:
    """Whether the catalog has spot prices and offerings for the region: only then are they columns."""
    info = catalog.info
    return region in info.spot_prices_as_of, region in info.offerings_as_of


_COLUMNS: Sequence[tuple[str, str]] = (
    ("TYPE", "name"),
    ("ARCH", "arch"),
    ("VCPU", "vcpu"),
    ("MEMORY MiB", "memoryMiB"),
    ("MAX PODS", "maxPods"),
    ("ALLOC CPU m", "cpu"),
    ("ALLOC MEM MiB", "memory"),
    ("ALLOC PODS", "pods"),
)


def format_table(
    rows: list[dict[str, Any]], region: str, capacity_types: Sequence[str], known: tuple[bool, bool] = (False, False)
) -> str:
    """A fixed-width table of catalog entries with a closing summary line; known: whether spot
    prices (the cheapest zone's) and offered zones are columns."""
    spot_known, zones_known = known
    header = [title for title, _ in _COLUMNS] + [f"USD/h {region}"]
    header += ["SPOT USD/h"] * spot_known + ["ZONES"] * zones_known
    body = []
    for row in rows:
        flat = dict(row, **row["allocatable"])
        price = "-" if row["price"] is None else str(row["price"])
        extra = [str(min(row["spotPrices"].values())) if row["spotPrices"] else "-"] * spot_known
        extra += [str(len(row["zones"] or ()))] * zones_known
        body.append([str(flat[key]) for _, key in _COLUMNS] + [price] + extra)
    widths = [max(len(line[i]) for line in [header] + body) for i in range(len(header))]
    lines = []
    for line in [header] + body:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    unpriced = sum(1 for row in rows if row["price"] is None)
    offered = f", {sum(1 for row in rows if not row['zones'])} offered in no zone" if zones_known else ""
    lines.append(
        f"{len(rows)} instance types ({unpriced} without a price for {region}{offered}); "
        f"capacity types planned: {', '.join(capacity_types)}"
    )
    return "\n".join(lines) + "\n"
