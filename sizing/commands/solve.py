"""`python -m sizing solve`: solve a bin-packing problem given as JSON or `.vbp`.

    python -m sizing solve PROBLEM.json [--work-limit UNITS] [--time-limit SECONDS] [--workers N]
    python -m sizing solve -            (problem on stdin)
    python -m sizing solve --vbp FILE [--work-limit UNITS] [--time-limit SECONDS] [--workers N]

Prints the result as JSON on stdout (see `sizing.binpack.problem_io`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from sizing.commands.native_output import stdout_to_stderr
from sizing.errors import SizingInputError

EXIT_INFEASIBLE = 1

_EPILOG = """\
input: {"binTypes": [{"name", "capacity": {dimension: integer >= 1}, "cost": number > 0,
"max": count or null}], "items": [{"name", "size": {dimension: integer >= 0}, "count"}],
"workLimit": integer >= 1, "timeLimitSeconds": number > 0}. A dimension a bin type leaves out is unlimited for it; one an
item leaves out counts as 0. Unknown fields are errors.

output: {"status": "optimal" | "feasible" | "infeasible", "cost", "binCount",
"lowerBound": {"cost", "bins"}, "bins": [{"type", "count", "items": {name: count}}],
"seconds", "work", "reason" (infeasible only)}. "optimal" means the cost equals the lower bound.

Costs are rounded to 6 decimals. The same input gives the same result, whatever the machine
and the number of workers, unless the time limit cuts the search short. With a time limit
the answer, its bound and status come within about a second of it.

exit status: 0 with a packing; 1 when the problem is infeasible (an item fits no bin type,
or the max counts are too small): the JSON result with status "infeasible" still goes to
stdout and its reason also to stderr; 2 for malformed input (one message on stderr).
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "solve",
        help="solve a vector bin-packing problem (JSON or .vbp) and print the packing as JSON",
        description=(
            "Find the cheapest packing of the items into bins (vector bin packing with several\n"
            "bin types, costs and max counts), with a proven lower bound on the cost."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("problem", nargs="?", metavar="PROBLEM.json", help="problem file, or - for stdin")
    source.add_argument(
        "--vbp",
        type=Path,
        metavar="FILE",
        help="read a .vbp file instead (one bin type 'bin' of cost 1; dimensions d0, d1, ...; items i0, i1, ...)",
    )
    parser.add_argument(
        "--work-limit",
        type=int,
        metavar="UNITS",
        help="solver work budget (overrides workLimit; default 2000): the same answer on any machine",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="wall-clock safety cap in seconds (overrides timeLimitSeconds; default none); "
        "results cut by it depend on the machine",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="threads the search may use (default: the cores available, at most 2); "
        "within the work limit the answer is the same for any number",
    )
    parser.set_defaults(run=run)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SizingInputError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from sizing.binpack.problem_io import problem_from_json, solution_to_json
    from sizing.binpack.solver import solve
    from sizing.binpack.vbp import parse_vbp

    limit = args.time_limit
    if limit is not None and not (math.isfinite(limit) and limit > 0):
        raise SizingInputError(f"--time-limit must be a positive number of seconds, got {limit}")
    if args.vbp is not None:
        problem = parse_vbp(_read(str(args.vbp)), source=str(args.vbp))
    else:
        problem = problem_from_json(_read(args.problem), source="stdin" if args.problem == "-" else args.problem)
    if limit is not None:
        problem = replace(problem, time_limit_seconds=limit)
    if args.work_limit is not None:
        if args.work_limit < 1:
            raise SizingInputError(f"--work-limit must be a positive integer, got {args.work_limit}")
        problem = replace(problem, work_limit=args.work_limit)
    if args.workers is not None and args.workers < 1:
        raise SizingInputError(f"--workers must be a positive integer, got {args.workers}")
    with stdout_to_stderr():
        solution = solve(problem, workers=args.workers)
    json.dump(solution_to_json(solution), sys.stdout, indent=2)
    sys.stdout.write("\n")
    if solution.status == "infeasible":
        print(f"error: infeasible: {solution.reason}", file=sys.stderr)
        return EXIT_INFEASIBLE
    return 0
