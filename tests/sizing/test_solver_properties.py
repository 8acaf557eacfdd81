"""Properties of the solver on random small problems, against an exhaustive search.

Every packing must be complete and feasible, cost no less than the optimum
found by brute force and no more than first-fit decreasing, report a lower
bound that never exceeds the optimum, and say "optimal" only when it is.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.solver import solve

DIMENSIONS = ("cpu", "memory")


@st.composite
def small_problems(draw, max_items=6):
    type_count = draw(st.integers(1, 3))
    bin_types = []
    for t in range(type_count):
        capacity = {dim: draw(st.integers(4, 12)) for dim in DIMENSIONS if draw(st.booleans()) or dim == "cpu"}
        cost = draw(st.sampled_from([1.0, 1.5, 2.0, 3.0]))
        max_count = draw(st.one_of(st.none(), st.integers(0, 3)))
        bin_types.append(BinType(f"b{t}", capacity, cost, max_count))
    items = []
    total = 0
    for i in range(draw(st.integers(1, 3))):
        count = draw(st.integers(0, max(0, min(3, max_items - total))))
        total += count
        size = {dim: draw(st.integers(0, 8)) for dim in DIMENSIONS}
        items.append(ItemType(f"i{i}", size, count))
    return Problem(tuple(bin_types), tuple(items), 2.0)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(p=small_problems())
def test_packings_are_feasible_and_optimal_against_brute_force(p, solution_checker, brute_force_optimum):
    solution = solve(p)
    solution_checker(p, solution)
    best = brute_force_optimum(p)
    if best is None:
        assert solution.status == "infeasible"
        return
    best_cost, best_bins = best
    assert solution.status != "infeasible"
    assert solution.cost >= best_cost - 1e-9
    assert solution.lower_bound.cost <= best_cost + 1e-9
    assert solution.lower_bound.bins <= best_bins
    if solution.status == "optimal":
        assert abs(solution.cost - best_cost) <= 1e-9
    # These problems are small enough that the optimiser always proves its answer.
    assert solution.status == "optimal" and solution.bin_count == best_bins


@SETTINGS
@given(p=small_problems(max_items=12))
def test_never_worse_than_first_fit_decreasing_and_deterministic(p, solution_checker):
    solution = solve(p)
    solution_checker(p, solution)
    ffd = first_fit_decreasing(build_instance(p)) if solution.status != "infeasible" else None
    if ffd is not None:
        assert solution.cost <= ffd.cost(build_instance(p)) + 1e-9
    again = solve(p)
    assert (again.status, again.cost, again.bin_count, again.lower_bound, again.bins, again.reason) == (
        solution.status,
        solution.cost,
        solution.bin_count,
        solution.lower_bound,
        solution.bins,
        solution.reason,
    )


@SETTINGS
@given(p=small_problems(max_items=8))
def test_the_assignment_lp_bounds_the_optimum_and_the_aggregate_lp_from_above(p, brute_force_optimum):
    """The assignment LP is a relaxation of every packing (never above the optimum) and holds
    every row of the aggregate LP in disaggregated form (never below it)."""
    from sizing.binpack import work
    from sizing.binpack.bounds import aggregate_bound, assignment_bound

    best = brute_force_optimum(p)
    instance = build_instance(p)
    with work.using(work.WorkClock(10**9, None)):
        assigned = assignment_bound(instance)
    if best is None or assigned is None:
        return
    aggregate, _ = aggregate_bound(instance)
    assert assigned <= best[0] + 1e-9
    assert aggregate is not None and assigned >= aggregate - 1e-6
