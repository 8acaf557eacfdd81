"""Bin-packing solver benchmarks: quality against proven optima, and Kubernetes-shaped fleets.

1. Vector instances (../shared/bench/vector, 3 dimensions, proven optima in
   optima.csv): per instance the solver (default work limit, 10 s cap) and first-fit
   decreasing; share solved to the optimum, excess over it in bins, seconds.
   Every packing is checked independently (complete, no bin overfilled); a
   packing below a proven optimum or worse than FFD is a bug and fails the run.
   Files the solver rejects as malformed input are listed and left out.
2. Kubernetes-shaped: pods drawn uniformly (seed 42) from Karpenter's benchmark
   shapes (cpu {100, 250, 500, 1000, 1500} m x memory {100, 256, 512, 1024,
   2048, 4096} MiB, 1 pod slot) onto the bundled catalog's c, m and r types of
   generations 5-7, amd64, sizes large to 4xlarge, with a us-east-1 price;
   room = Karpenter's allocatable minus a DaemonSet overhead of 200 m cpu,
   300 MiB and 2 pod slots. 1,000, 5,000 and 20,000 pods, default work limit, 5 s cap:
   cost against the lower bound and against FFD, seconds, and the peak resident
   memory of the process (ru_maxrss) after each size.

Options: --quick (a subset of the vector instances, 1,000 and 5,000 pods only:
under a minute), --vector or --kubernetes (one part only).
"""

from __future__ import annotations

import csv
import random
import resource
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem, Solution
from sizing.binpack.solver import solve
from sizing.binpack.vbp import parse_vbp
from sizing.commands.native_output import stdout_to_stderr
from sizing.errors import SizingInputError


def quiet_solve(problem: Problem) -> Solution:
    """`solve`, with what HiGHS prints on file descriptor 1 sent to stderr: the tables printed
    on stdout stay whole."""
    with stdout_to_stderr():
        return solve(problem)


VECTOR_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "vector"
VECTOR_SECONDS = 10.0
KUBERNETES_SECONDS = 5.0
SEED = 42
CPU_SHAPES = (100, 250, 500, 1000, 1500)
MEMORY_SHAPES = (100, 256, 512, 1024, 2048, 4096)
DAEMONSET_OVERHEAD = {"cpu": 200, "memory": 300, "pods": 2}
FAMILIES = ("c", "m", "r")
GENERATIONS = (5, 6, 7)
SIZES = ("large", "xlarge", "2xlarge", "4xlarge")
REGION = "us-east-1"
QUICK_ITEM_COUNTS = ("20", "40", "60")


class BenchmarkFailure(AssertionError):
    """A result that can only come from a bug."""


def verify(problem: Problem, solution: Solution) -> None:
    """Check a packing without the solver's code: every item placed once, no bin overfilled."""
    if solution.status == "infeasible":
        raise BenchmarkFailure(f"infeasible: {solution.reason}")
    capacity = {b.name: b.capacity for b in problem.bin_types}
    sizes = {i.name: i.size for i in problem.items}
    placed = {i.name: 0 for i in problem.items}
    bins = 0
    for group in solution.bins:
        load: dict[str, int] = {}
        for name, count in group.items.items():
            placed[name] += count * group.count
            for dim, value in sizes[name].items():
                load[dim] = load.get(dim, 0) + value * count
        for dim, value in load.items():
            if dim in capacity[group.bin_type] and value > capacity[group.bin_type][dim]:
                raise BenchmarkFailure(f"bin of type {group.bin_type} overfilled in {dim}: {value}")
        bins += group.count
    if placed != {i.name: i.count for i in problem.items}:
        raise BenchmarkFailure("items missing or placed twice")
    if bins != solution.bin_count:
        raise BenchmarkFailure(f"bin count {solution.bin_count} but {bins} bins listed")


def _vector_files(quick: bool) -> list[tuple[str, int]]:
    with open(VECTOR_DIR / "optima.csv", newline="") as handle:
        rows = [(row["file"], int(row["optimum"]), row["items"]) for row in csv.DictReader(handle)]
    if quick:
        rows = [row for row in rows if row[2] in QUICK_ITEM_COUNTS and row[0].endswith("_0.vbp")]
    return [(name, optimum) for name, optimum, _ in rows]


def vector_benchmark(quick: bool) -> int:
    files = _vector_files(quick)
    print(
        f"-- vector instances: {len(files)} files from {VECTOR_DIR}, default work limit, {VECTOR_SECONDS:g} s cap",
        flush=True,
    )
    results = []
    rejected = []
    for name, optimum in files:
        try:
            problem = parse_vbp((VECTOR_DIR / name).read_text(), VECTOR_SECONDS, name)
        except SizingInputError as error:
            rejected.append(str(error))
            continue
        started = time.perf_counter()
        ffd = first_fit_decreasing(build_instance(problem))
        ffd_seconds = time.perf_counter() - started
        if ffd is None:
            raise BenchmarkFailure(f"{name}: first-fit decreasing found no packing")
        solution = quiet_solve(problem)
        verify(problem, solution)
        if solution.bin_count < optimum:
            raise BenchmarkFailure(f"{name}: {solution.bin_count} bins, below the proven optimum {optimum}")
        if solution.lower_bound.bins > optimum:
            raise BenchmarkFailure(f"{name}: lower bound {solution.lower_bound.bins} above the optimum {optimum}")
        if solution.bin_count > ffd.bin_count:
            raise BenchmarkFailure(f"{name}: {solution.bin_count} bins, worse than FFD's {ffd.bin_count}")
        results.append((name, optimum, solution, ffd.bin_count, ffd_seconds))
        print(
            f"{name:34} opt {optimum:4d}  solver {solution.bin_count:4d} {solution.status:8} "
            f"bound {solution.lower_bound.bins:4d} {solution.seconds:6.2f} s  ffd {ffd.bin_count:4d}",
            flush=True,
        )
    for line in rejected:
        print(f"left out (malformed input): {line}")
    _vector_summary(results)
    return 0


def _vector_summary(results) -> None:
    count = len(results)
    solver_excess = [s.bin_count - opt for _, opt, s, _, _ in results]
    ffd_excess = [f - opt for _, opt, _, f, _ in results]
    solver_seconds = [s.seconds for _, _, s, _, _ in results]
    ffd_seconds = [t for _, _, _, _, t in results]
    proven = sum(1 for _, _, s, _, _ in results if s.status == "optimal")
    print()
    print(f"| {count} instances | at the optimum | mean excess (bins) | max excess | mean s | max s |")
    print("|---|---|---|---|---|---|")
    for label, excess, seconds in (("solver", solver_excess, solver_seconds), ("FFD", ffd_excess, ffd_seconds)):
        hits = sum(1 for e in excess if e == 0)
        print(
            f"| {label} | {hits} ({100 * hits / count:.1f} %) | {statistics.mean(excess):.3f} | {max(excess)} "
            f"| {statistics.mean(seconds):.3f} | {max(seconds):.3f} |"
        )
    print(f"solver proved optimality (status optimal) on {proven} of {count}")


def kubernetes_bin_types() -> tuple[BinType, ...]:
    from sizing.karpenter.allocatable import allocatable
    from sizing.karpenter.catalog import load_catalog

    bin_types = []
    for instance in load_catalog():
        price = instance.price(REGION)
        if (
            instance.category in FAMILIES
            and instance.generation in GENERATIONS
            and instance.arch == "amd64"
            and instance.size in SIZES
            and price is not None
        ):
            room = allocatable(instance)
            capacity = {
                "cpu": room.cpu - DAEMONSET_OVERHEAD["cpu"],
                "memory": room.memory - DAEMONSET_OVERHEAD["memory"],
                "pods": room.pods - DAEMONSET_OVERHEAD["pods"],
            }
            if min(capacity.values()) > 0:
                bin_types.append(BinType(instance.name, capacity, price))
    return tuple(sorted(bin_types, key=lambda b: b.name))


def kubernetes_items(pods: int, seed: int = SEED) -> tuple[ItemType, ...]:
    rng = random.Random(seed)
    counts: dict[tuple[int, int], int] = {}
    for _ in range(pods):
        shape = (rng.choice(CPU_SHAPES), rng.choice(MEMORY_SHAPES))
        counts[shape] = counts.get(shape, 0) + 1
    return tuple(
        ItemType(f"cpu{cpu}-mem{memory}", {"cpu": cpu, "memory": memory, "pods": 1}, count)
        for (cpu, memory), count in sorted(counts.items())
    )


def kubernetes_benchmark(quick: bool) -> int:
    bin_types = kubernetes_bin_types()
    sizes = (1000, 5000) if quick else (1000, 5000, 20000)
    print(
        f"-- Kubernetes-shaped: {len(bin_types)} instance types ({'/'.join(FAMILIES)}, generations "
        f"{GENERATIONS[0]}-{GENERATIONS[-1]}, amd64, {SIZES[0]}-{SIZES[-1]}, {REGION} on-demand), "
        f"DaemonSet overhead {DAEMONSET_OVERHEAD}, default work limit, {KUBERNETES_SECONDS:g} s cap",
        flush=True,
    )
    print(
        "| pods | solver $/h | lower bound $/h | over bound | FFD $/h | solver vs FFD | nodes | status | s | FFD s | peak RSS MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for pods in sizes:
        problem = Problem(bin_types, kubernetes_items(pods), KUBERNETES_SECONDS)
        instance = build_instance(problem)
        started = time.perf_counter()
        ffd = first_fit_decreasing(instance)
        ffd_seconds = time.perf_counter() - started
        if ffd is None:
            raise BenchmarkFailure(f"{pods} pods: first-fit decreasing found no packing")
        solution = quiet_solve(problem)
        # Peak resident memory of this process so far; sizes run in increasing order.
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        verify(problem, solution)
        ffd_cost = ffd.cost(instance)
        if solution.cost > ffd_cost * (1 + 1e-9):
            raise BenchmarkFailure(f"{pods} pods: solver {solution.cost} worse than FFD {ffd_cost}")
        gap = solution.cost / solution.lower_bound.cost - 1
        print(
            f"| {pods:,} | {solution.cost:.4f} | {solution.lower_bound.cost:.4f} | {100 * gap:.2f} % "
            f"| {ffd_cost:.4f} | {100 * (solution.cost / ffd_cost - 1):+.2f} % | {solution.bin_count} "
            f"| {solution.status} | {solution.seconds:.2f} | {ffd_seconds:.2f} | {peak:.0f} |",
            flush=True,
        )
    return 0


def run(options: Sequence[str]) -> int:
    quick = "--quick" in options
    parts = [p for p in ("--vector", "--kubernetes") if p in options] or ["--vector", "--kubernetes"]
    status = 0
    try:
        if "--vector" in parts:
            if (VECTOR_DIR / "optima.csv").exists():
                status |= vector_benchmark(quick)
            else:
                print(f"-- vector instances: skipped, {VECTOR_DIR} not found")
        if "--kubernetes" in parts:
            status |= kubernetes_benchmark(quick)
    except BenchmarkFailure as failure:
        print(f"FAILED: {failure}")
        return 1
    return status
