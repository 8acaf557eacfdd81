"""The wall-clock cap holds in every phase, and the work budget gives the same answer on any
number of workers."""

import json
import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sizing.binpack.bin_elimination import ITEM_LIMIT
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.problem_io import solution_to_json
from sizing.binpack.solver import solve
from sizing.binpack.vbp import parse_vbp
from tests.sizing.packing_instances import triplets

ROOT = Path(__file__).resolve().parents[2]
HUGE_WORK = 100_000_000


def random_vector_text(seed: int, items: int, low: int = 50, high: int = 300) -> str:
    """Three dimensions of 1000, items of random sizes in [low, high]: a handful per bin."""
    rng = random.Random(seed)
    lines = ["3", "1000 1000 1000", str(items)]
    lines += [" ".join(str(rng.randint(low, high)) for _ in range(3)) + " 1" for _ in range(items)]
    return "\n".join(lines) + "\n"


def one_dimension(seed: int, items: int, room: int, low: int, high: int) -> Problem:
    rng = random.Random(seed)
    counts: dict[int, int] = {}
    for _ in range(items):
        size = rng.randint(low, high)
        counts[size] = counts.get(size, 0) + 1
    return Problem(
        (BinType("bin", {"x": room}, 1.0),),
        tuple(ItemType(f"w{size}", {"x": size}, count) for size, count in sorted(counts.items())),
    )


def test_the_command_returns_by_the_cap_on_an_instance_that_runs_long(tmp_path):
    # 1,600 items in 3 dimensions, more than the local search that takes bins away handles (it
    # packs 300 such items in the optimum within a second): the bound stays some 25 bins below
    # the packing, so under this work limit only the cap ends the search.
    path = tmp_path / "long.vbp"
    path.write_text(random_vector_text(1, ITEM_LIMIT + 100))
    cap = 2.0
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "sizing", "solve", "--vbp", str(path), "--time-limit", str(cap)]
        + ["--work-limit", str(HUGE_WORK)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    wall = time.monotonic() - started
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    # The cap, not the work, ended the search: a packing, a bound below it, and the time taken.
    assert result["status"] == "feasible"
    assert result["lowerBound"]["bins"] < result["binCount"]
    assert result["work"] < HUGE_WORK
    # How closely the cap holds on an idle machine is a benchmark's figure (docs/benchmarks.md: 10.0
    # to 10.1 s under a 10 s cap); with test workers sharing the cores, a phase between two checks
    # of the clock runs slower, so the test allows some seconds more.
    assert result["seconds"] <= cap + 3.0
    # Start-up (imports) on a loaded machine is generous; a search that ignored the cap is not.
    assert wall < cap + 60


@pytest.mark.parametrize(
    "problem",
    [
        # Many items per bin in three dimensions: knapsack pricing, integer program over columns.
        pytest.param(parse_vbp(random_vector_text(2, 400, 20, 120)), id="knapsack-pricing"),
        # A handful per bin: complete pattern lists, dives, the exact search.
        pytest.param(parse_vbp(random_vector_text(3, 200)), id="pattern-lists"),
        # One dimension: exact pricing by table, discrepancy dives, the arc-flow model.
        pytest.param(one_dimension(4, 400, 1000, 100, 450), id="one-dimension"),
        # 1,500 items in exactly full bins: the local search that takes bins away, at its item limit.
        pytest.param(triplets(ITEM_LIMIT // 3, 8), id="bin-elimination"),
    ],
)
def test_a_cap_with_a_huge_work_budget_returns_within_a_second_of_it(problem, solution_checker):
    cap = 1.0
    capped = replace(problem, time_limit_seconds=cap, work_limit=HUGE_WORK)
    started = time.perf_counter()
    solution = solve(capped)
    assert time.perf_counter() - started <= cap + 1.0
    solution_checker(capped, solution)
    assert solution.status in ("optimal", "feasible")


def _answer(problem: Problem, workers: int) -> dict:
    document = solution_to_json(solve(problem, workers=workers))
    document.pop("seconds")
    return document


@pytest.mark.parametrize(
    "problem",
    [
        # Room 150: the dive and the arc-flow model run side by side.
        pytest.param(replace(one_dimension(7, 200, 150, 20, 100), work_limit=200), id="one-dimension"),
        pytest.param(replace(parse_vbp(random_vector_text(6, 40)), work_limit=200), id="vector"),
        pytest.param(
            Problem(
                (
                    BinType("m5.large", {"cpu": 1930, "memory": 6903, "pods": 27}, 0.096),
                    BinType("c5.xlarge", {"cpu": 3920, "memory": 6093, "pods": 56}, 0.17),
                    BinType("r5.large", {"cpu": 1930, "memory": 14372, "pods": 27}, 0.126),
                ),
                tuple(
                    ItemType(f"w{k}", {"cpu": 100 + 150 * (k % 7), "memory": 128 + 300 * (k % 5), "pods": 1}, 7 + k)
                    for k in range(12)
                ),
                work_limit=200,
            ),
            id="fleet",
        ),
    ],
)
def test_the_answer_under_the_work_budget_is_the_same_on_one_worker_and_two(problem):
    assert _answer(problem, 1) == _answer(problem, 2)
