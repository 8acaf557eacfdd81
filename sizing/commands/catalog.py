"""`python -m sizing catalog`: list instance types with Karpenter's allocatable, or refresh the catalog."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import allocatable, max_pods
from sizing.karpenter.catalog import InstanceType, load_catalog
from sizing.karpenter.pricing import validate_region
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
        help="list instance types with Karpenter's allocatable resources and prices",
        description=(
            "List the instance types of the catalog with max pods, Karpenter's allocatable "
            "(cpu millicores, memory MiB, pods) and the on-demand price in USD/hour, "
            "optionally filtered by NodePool requirements; or refresh the catalog from AWS."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--region", default=DEFAULT_REGION, help=f"region of the prices shown or refreshed (default {DEFAULT_REGION})"
    )
    parser.add_argument(
        "--requirements",
        type=Path,
        metavar="FILE",
        help="YAML or JSON file: a list of NodePool requirements, or a NodePool object",
    )
    parser.add_argument("--catalog", type=Path, metavar="FILE", help="catalog file to read instead of the bundled one")
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="rebuild the catalog from the AWS APIs for --region (needs boto3 and AWS credentials)",
    )
    parser.add_argument("--output", type=Path, metavar="FILE", help="where --refresh writes the catalog")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    region = validate_region(args.region)
    if args.refresh:
        extra = [
            flag
            for flag, used in (
                ("--json", args.json),
                ("--requirements", args.requirements),
                ("--catalog", args.catalog),
            )
            if used
        ]
        if extra:
            raise SizingInputError(f"--refresh takes only --region and --output, not {', '.join(extra)}")
        return _refresh(region, args.output)
    if args.output is not None:
        raise SizingInputError("--output is only used with --refresh")
    instances = load_catalog(args.catalog)
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
        sys.stdout.write(format_table(rows, region, capacity_types))
    return 0


def _refresh(region: str, output: Path | None) -> int:
    if output is None:
        raise SizingInputError("--refresh needs --output FILE, the catalog file to write")
    from sizing.karpenter.catalog_refresh import refresh_catalog, refreshed_catalog_text

    instances = refresh_catalog(region)
    try:
        output.write_text(refreshed_catalog_text(instances, region), encoding="utf-8")
    except OSError as error:
        raise SizingInputError(f"--output {str(output)!r}: cannot be written ({error.strerror})") from error
    priced = sum(1 for instance in instances if instance.price(region) is not None)
    print(f"wrote {output}: {len(instances)} instance types, {priced} with on-demand prices for {region}")
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
    """The JSON form of one type: cpu in millicores, memory in MiB, price in USD/hour or None."""
    return {
        "name": instance.name,
        "arch": instance.arch,
        "vcpu": instance.vcpu,
        "memoryMiB": instance.memory_mib,
        "maxPods": max_pods(instance),
        "allocatable": allocatable(instance).as_dict(),
        "price": instance.price(region),
    }


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


def format_table(rows: list[dict[str, Any]], region: str, capacity_types: Sequence[str]) -> str:
    """A fixed-width table of catalog entries with a closing summary line."""
    header = [title for title, _ in _COLUMNS] + [f"USD/h {region}"]
    body = []
    for row in rows:
        flat = dict(row, **row["allocatable"])
        price = "-" if row["price"] is None else str(row["price"])
        body.append([str(flat[key]) for _, key in _COLUMNS] + [price])
    widths = [max(len(line[i]) for line in [header] + body) for i in range(len(header))]
    lines = []
    for line in [header] + body:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    unpriced = sum(1 for row in rows if row["price"] is None)
    lines.append(
        f"{len(rows)} instance types ({unpriced} without a price for {region}); "
        f"capacity types planned: {', '.join(capacity_types)}"
    )
    return "\n".join(lines) + "\n"
