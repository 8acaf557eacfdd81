"""`python -m sizing`: the command line of the sizing library."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from sizing.errors import SizingInputError

COMMAND_MODULES = (
    "sizing.commands.solve",
    "sizing.commands.plan",
    "sizing.commands.catalog",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sizing",
        description="Bin-packing and Karpenter capacity planning.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except SizingInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
