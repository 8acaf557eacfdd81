"""Test support for the bin-packing solver: an independent checker and a brute-force optimum.

Both work on the public data classes only (sizing.binpack.model), so they share no code
with the solver they check. Tests get them as fixtures: `solution_checker`,
`brute_force_optimum`, and `bench_dir` for the benchmark instances.
"""

import math
from pathlib import Path

import pytest

from sizing.binpack.model import Problem, Solution

BENCH_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "vector"


def _load(sizes, counts):
    total = {}
    for name, count in counts.items():
        for dim, value in sizes[name].items():
            total[dim] = total.get(dim, 0) + value * count
    return total


def check_solution(problem: Problem, solution: Solution) -> None:
    """Assert that the solution is a complete, feasible packing consistent with its own figures."""
    assert solution.status in ("optimal", "feasible", "infeasible")
    if solution.status == "infeasible":
        assert solution.reason
        assert solution.bins == ()
        return
    bin_types = {b.name: b for b in problem.bin_types}
    sizes = {i.name: dict(i.size) for i in problem.items}
    placed = {i.name: 0 for i in problem.items}
    used = {name: 0 for name in bin_types}
    cost = 0.0
    for group in solution.bins:
        assert group.bin_type in bin_types, group.bin_type
        assert group.count >= 1
        assert all(count >= 1 for count in group.items.values())
        bin_type = bin_types[group.bin_type]
        for dim, value in _load(sizes, group.items).items():
            if dim in bin_type.capacity:
                assert value <= bin_type.capacity[dim], (group, dim, value)
        for name, count in group.items.items():
            placed[name] += count * group.count
        used[group.bin_type] += group.count
        cost += bin_type.cost * group.count
    assert placed == {i.name: i.count for i in problem.items}
    for name, count in used.items():
        limit = bin_types[name].max_count
        assert limit is None or count <= limit, (name, count, limit)
    assert math.isclose(solution.cost, cost, rel_tol=1e-9, abs_tol=1e-9)
    assert solution.bin_count == sum(used.values())
    assert solution.lower_bound.cost <= solution.cost * (1 + 1e-9) + 1e-9
    assert solution.lower_bound.bins <= solution.bin_count
    if solution.status == "optimal":
        assert solution.cost <= solution.lower_bound.cost * (1 + 1e-9) + 1e-9


def brute_force(problem: Problem):
    """(minimal cost, fewest bins at that cost), or None when no packing exists; tiny problems only.

    Items are placed one at a time into an open bin or a new bin of any type;
    open bins with the same type and contents are interchangeable, so only the
    first of them is tried.
    """
    items = [i for i in problem.items for _ in range(i.count)]
    types = list(problem.bin_types)

    def fits(bin_type, contents):
        load = _load({i.name: i.size for i in problem.items}, contents)
        return all(load.get(dim, 0) <= cap for dim, cap in bin_type.capacity.items())

    best = [None]

    def place(k, bins, cost):
        key = (cost, len(bins))
        if best[0] is not None and (cost > best[0][0] + 1e-9):
            return
        if k == len(items):
            if best[0] is None or key < best[0]:
                best[0] = key
            return
        item = items[k]
        tried = set()
        for index, (type_index, contents) in enumerate(bins):
            signature = (type_index, tuple(sorted(contents.items())))
            if signature in tried:
                continue
            tried.add(signature)
            grown = dict(contents)
            grown[item.name] = grown.get(item.name, 0) + 1
            if fits(types[type_index], grown):
                place(k + 1, bins[:index] + [(type_index, grown)] + bins[index + 1 :], cost)
        for type_index, bin_type in enumerate(types):
            opened = sum(1 for t, _ in bins if t == type_index)
            if bin_type.max_count is not None and opened >= bin_type.max_count:
                continue
            contents = {item.name: 1}
            if fits(bin_type, contents):
                place(k + 1, bins + [(type_index, contents)], cost + bin_type.cost)

    place(0, [], 0.0)
    return best[0]


@pytest.fixture(scope="session")
def solution_checker():
    return check_solution


@pytest.fixture(scope="session")
def brute_force_optimum():
    return brute_force


@pytest.fixture
def bench_dir() -> Path:
    if not (BENCH_DIR / "optima.csv").exists():
        pytest.skip(f"the benchmark instances are not available at {BENCH_DIR}")
    return BENCH_DIR
