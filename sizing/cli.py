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


def build_parser(prog: str = "python -m sizing") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Bin-packing and Karpenter capacity planning.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m sizing") -> int:
    """Run one sub-command; `prog` is the name usage and help lines give the command."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except SizingInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
