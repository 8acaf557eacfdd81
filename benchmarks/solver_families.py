"""Solver quality per family of instances with proven optima, under the default work budget and
under a 10 s wall-clock cap, and on Kubernetes fleets with many distinct pod sizes.

Families:

* BPPLIB's one-dimensional sets (Delorme, Iori, Martello): Falkenauer U and T, Scholl 1, 2
  and 3, Schwerin 1 and 2, Wäscher, Hard28. Their licence forbids redistribution, so they are
  read from a folder outside the project: `BPPLIB_DIR` (default ../shared/bench/bpplib), laid out
  as the archives of mdelorme2/BPPLIB's Instances/Benchmarks extract (`Falkenauer/Falkenauer U`,
  `Scholl/Scholl_1`, ..., `Hard28`, `Wäscher`), with the optima table `Bounds.txt` of
  rafaelmartinelli/BPPLib.jl (name, lower bound, upper bound; closed when equal). Every k-th
  file of a family is taken (all of the small families), so that a run stays within minutes.
* The vector sets of ../shared/bench/vector (Panigrahy-style, New, Triplet; 3 dimensions).
* Fleets: pods of many distinct sizes (see `fleet_groups`) on the getting-started NodePool
  (c, m, r; generation > 2; amd64; on-demand; 714 types) and on m5.large alone, built as the
  planner builds its optimal fleet (`sizing.planning.fleet.build_problem`); the gap is to the
  solver's own lower bound, since the optimum is not known.

Per family and mode: share of instances at the optimum (and proven so), worst excess over the
optimum in bins, worst seconds. Every packing is checked independently; a packing below a proven
optimum or a bound above it fails the run.

Options: --quick (fewer files per family), --bpplib, --vector, --fleets (one part only).
"""

from __future__ import annotations

import csv
import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from benchmarks.solver import VECTOR_DIR, BenchmarkFailure, quiet_solve, verify
from sizing.binpack.model import DEFAULT_WORK_LIMIT, BinType, ItemType, Problem, Solution
from sizing.binpack.vbp import parse_vbp
from sizing.errors import SizingInputError

BPPLIB_DIR = Path(os.environ.get("BPPLIB_DIR", Path(__file__).resolve().parents[1].parent / "shared/bench/bpplib"))
CAP_SECONDS = 10.0
# With the cap, the work budget is out of the way: the cap alone ends the search.
CAP_WORK_LIMIT = 10**9
# family -> (folder under BPPLIB_DIR, every k-th file, every k-th with --quick)
BPPLIB_FAMILIES = {
    "Falkenauer U": ("Falkenauer/Falkenauer U", 8, 16),
    "Falkenauer T": ("Falkenauer/Falkenauer_T", 8, 16),
    "Scholl 1": ("Scholl/Scholl_1", 24, 72),
    "Scholl 2": ("Scholl/Scholl_2", 16, 48),
    "Scholl 3": ("Scholl/Scholl_3", 1, 5),
    "Schwerin 1": ("Schwerin/Schwerin_1", 10, 25),
    "Schwerin 2": ("Schwerin/Schwerin_2", 10, 25),
    "Wäscher": ("Wäscher", 1, 4),
    "Hard28": ("Hard28", 1, 4),
}
MODES: dict[str, Callable[[Problem], Problem]] = {
    f"default budget ({DEFAULT_WORK_LIMIT} units)": lambda p: replace(
        p, work_limit=DEFAULT_WORK_LIMIT, time_limit_seconds=None
    ),
    f"{CAP_SECONDS:g} s cap": lambda p: replace(p, work_limit=CAP_WORK_LIMIT, time_limit_seconds=CAP_SECONDS),
}


def bpplib_problem(path: Path) -> Problem:
    """A BPPLIB file (n, capacity, n weights) as one bin type of cost 1, read in memory only."""
    numbers = [int(token) for token in path.read_text().split()]
    count, capacity, weights = numbers[0], numbers[1], numbers[2 : 2 + numbers[0]]
    if len(weights) != count:
        raise BenchmarkFailure(f"{path}: {count} items announced, {len(weights)} read")
    sizes = Counter(weights)
    items = tuple(ItemType(f"w{w}", {"x": w}, k) for w, k in sorted(sizes.items()))
    return Problem((BinType("bin", {"x": capacity}, 1.0),), items)


def bpplib_instances(quick: bool) -> dict[str, list[tuple[str, Problem, int]]]:
    optima = {}
    for line in (BPPLIB_DIR / "Bounds.txt").read_text().splitlines():
        name, lower, upper = line.strip().split("\t")
        if lower == upper:
            optima[name] = int(upper)
    families = {}
    for family, (folder, step, quick_step) in BPPLIB_FAMILIES.items():
        files = sorted((BPPLIB_DIR / folder).glob("*.txt"))[:: quick_step if quick else step]
        families[family] = [(f.stem, bpplib_problem(f), optima[f.stem]) for f in files if f.stem in optima]
    return families


def vector_instances(quick: bool) -> dict[str, list[tuple[str, Problem, int]]]:
    families: dict[str, list[tuple[str, Problem, int]]] = {}
    with open(VECTOR_DIR / "optima.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if quick and not row["file"].endswith("_0.vbp"):
            continue
        try:
            problem = parse_vbp((VECTOR_DIR / row["file"]).read_text(), source=row["file"])
        except SizingInputError:
            continue  # three Triplet files carry a negative size (see benchmarks.solver)
        families.setdefault(f"vector {row['set']}", []).append((row["file"], problem, int(row["optimum"])))
    return families


def _check(name: str, problem: Problem, solution: Solution, optimum: int) -> None:
    verify(problem, solution)
    if solution.bin_count < optimum:
        raise BenchmarkFailure(f"{name}: {solution.bin_count} bins, below the proven optimum {optimum}")
    if solution.lower_bound.bins > optimum:
        raise BenchmarkFailure(f"{name}: lower bound {solution.lower_bound.bins} above the optimum {optimum}")


def family_table(families: dict[str, list[tuple[str, Problem, int]]]) -> None:
    print("| family | instances | mode | at the optimum | proven | worst excess (bins) | mean s | worst s |")
    print("|---|---|---|---|---|---|---|---|")
    for family, instances in families.items():
        for mode, adapt in MODES.items():
            hits = proven = worst = 0
            seconds = []
            misses = []
            for name, base, optimum in instances:
                problem = adapt(base)
                started = time.perf_counter()
                solution = quiet_solve(problem)
                seconds.append(time.perf_counter() - started)
                _check(name, problem, solution, optimum)
                excess = solution.bin_count - optimum
                hits += excess == 0
                proven += solution.status == "optimal"
                worst = max(worst, excess)
                if excess:
                    misses.append(f"{name} +{excess}")
            count = len(instances)
            print(
                f"| {family} | {count} | {mode} | {hits} ({100 * hits / count:.0f} %) | {proven} | {worst} "
                f"| {sum(seconds) / count:.2f} | {max(seconds):.2f} |",
                flush=True,
            )
            if misses:
                print(f"<!-- {family}, {mode}: {', '.join(misses)} -->", flush=True)


FLEET_SEED = 7
FLEET_SHAPES = 150
FLEET_PODS = (1000, 20000)
SMALL_SHAPES = {"largest_cpu": 1500, "largest_memory": 6000}


def fleet_groups(pods: int, largest_cpu: int = 8000, largest_memory: int = 65536, seed: int = FLEET_SEED) -> list:
    """`pods` pods over FLEET_SHAPES distinct sizes: cpu log-uniform from 50 m to `largest_cpu`,
    memory 0.5 to 8 GiB per core (64 MiB to `largest_memory`), shapes weighted by a Zipf law (a
    few common, many rare)."""
    from sizing.karpenter.simulation import PodGroup
    from sizing.kube.resources import Resources

    rng = random.Random(seed)
    shapes: list[tuple[int, int]] = []
    while len(shapes) < FLEET_SHAPES:
        cpu = round(math.exp(rng.uniform(math.log(50), math.log(largest_cpu))) / 10) * 10
        memory = max(64, round(cpu / 1000 * 1024 * math.exp(rng.uniform(math.log(0.5), math.log(8)))))
        memory = min(memory, largest_memory)
        if (cpu, memory) not in shapes:
            shapes.append((cpu, memory))
    weights = [1 / (rank + 1) for rank in range(len(shapes))]
    counts = Counter(rng.choices(range(len(shapes)), weights, k=pods))
    return [
        PodGroup(f"shape-{cpu}m-{memory}Mi", Resources(cpu, memory, 1), counts[k])
        for k, (cpu, memory) in enumerate(shapes)
        if counts[k]
    ]


def fleet_table(quick: bool) -> None:
    from benchmarks.planner import _catalog_options
    from sizing.planning.fleet import build_problem

    wide = _catalog_options()
    small = [o for o in wide if o.name == "m5.large"]
    # Small shapes for the single-type pool: what fits an m5.large (see SMALL_SHAPES).
    pools = {
        f"getting-started, {len(wide)} types": (wide, {}),
        "m5.large only": (small, SMALL_SHAPES),
    }
    print("| pods | shapes | NodePool | mode | cost $/h | lower bound $/h | over bound | nodes | status | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for pods in FLEET_PODS[:1] if quick else FLEET_PODS:
        for pool, (options, limits) in pools.items():
            groups = fleet_groups(pods, **limits)
            base, _ = build_problem(options, groups, None, ("on-demand",), DEFAULT_WORK_LIMIT)
            for mode, adapt in MODES.items():
                problem = adapt(base)
                started = time.perf_counter()
                solution = quiet_solve(problem)
                seconds = time.perf_counter() - started
                verify(problem, solution)
                gap = solution.cost / solution.lower_bound.cost - 1
                print(
                    f"| {pods:,} | {len(groups)} | {pool} | {mode} | {solution.cost:.3f} | "
                    f"{solution.lower_bound.cost:.3f} | {100 * gap:.2f} % | {solution.bin_count} | "
                    f"{solution.status} | {seconds:.1f} |",
                    flush=True,
                )


def run(options: Sequence[str]) -> int:
    quick = "--quick" in options
    parts = {
        "--bpplib": ("BPPLIB families", BPPLIB_DIR / "Bounds.txt", lambda: family_table(bpplib_instances(quick))),
        "--vector": ("vector families", VECTOR_DIR / "optima.csv", lambda: family_table(vector_instances(quick))),
        "--fleets": ("fleets of many distinct pod sizes", None, lambda: fleet_table(quick)),
    }
    chosen = [p for p in parts if p in options] or list(parts)
    try:
        for part in chosen:
            title, needed, action = parts[part]
            if needed is not None and not needed.exists():
                print(f"-- {title}: skipped, {needed} not found (BPPLIB: set BPPLIB_DIR)")
                continue
            print(f"-- {title}", flush=True)
            action()
    except BenchmarkFailure as failure:
        print(f"FAILED: {failure}")
        return 1
    return 0
