"""Items sized in one dimension: exact pricing by table, the arc-flow model, and the solver on them."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sizing.binpack import work
from sizing.binpack.arcflow import ResidualCompletion, arc_count, arcflow_search, build_graph
from sizing.binpack.dive import dive
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import overfilled
from sizing.binpack.pricers import table_pricing_applies
from sizing.binpack.solver import solve
from sizing.binpack.table_knapsack import PRICE_EPSILON, best_patterns
from tests.sizing.packing_instances import converged_root

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

knapsacks = st.integers(1, 5).flatmap(
    lambda shapes: st.tuples(
        st.lists(st.integers(0, 9), min_size=shapes, max_size=shapes),
        st.lists(st.integers(0, 4), min_size=shapes, max_size=shapes),
        st.lists(st.floats(0, 5, allow_nan=False), min_size=shapes, max_size=shapes),
        st.lists(st.integers(0, 25), min_size=1, max_size=3),
    )
)


@SETTINGS
@given(data=knapsacks)
@example(data=([0, 0, 0], [0, 2, 0], [0.0, 1e-12, 0.0], [0]))  # prices at the table's zero
def test_the_table_finds_the_best_pattern_for_every_room(data):
    sizes, limits, prices, rooms = (np.array(x) for x in data)
    found, _ = best_patterns(prices.astype(float), sizes.astype(np.int64), limits.astype(np.int64), rooms.tolist())
    for room, pattern in zip(rooms, found, strict=True):
        best = 0.0
        for counts in itertools.product(*[range(int(n) + 1) for n in limits]):
            counts = np.array(counts)
            if counts @ sizes <= room:
                best = max(best, float(prices @ counts))
        assert pattern.counts @ sizes <= room and (pattern.counts <= limits).all()
        # Prices (and gains) of at most PRICE_EPSILON are zero to the table: dual noise, not value.
        assert pattern.value == pytest.approx(best, abs=2 * PRICE_EPSILON * (int(limits.sum()) + 1))


@st.composite
def bin_packings(draw):
    room = draw(st.integers(5, 20))
    sizes = draw(st.lists(st.integers(1, room), min_size=1, max_size=4, unique=True))
    counts = [draw(st.integers(1, 3)) for _ in sizes]
    return room, np.array(sizes, dtype=np.int64), np.array(counts, dtype=np.int64)


def _problem(
    room: int, sizes: np.ndarray, demand: np.ndarray, bin_cost: float = 1.0, work_limit: int = 2000
) -> Problem:
    """One bin type of `room` in dimension "x" and one item shape per size."""
    return Problem(
        (BinType("bin", {"x": room}, bin_cost),),
        tuple(ItemType(f"s{k}", {"x": int(s)}, int(n)) for k, (s, n) in enumerate(zip(sizes, demand, strict=True))),
        work_limit=work_limit,
    )


@SETTINGS
@given(data=bin_packings())
def test_the_arc_flow_model_finds_the_optimum_and_proves_nothing_smaller(data, brute_force_optimum):
    room, sizes, demand = data
    problem = _problem(room, sizes, demand)
    optimum = int(brute_force_optimum(problem)[1])
    instance = build_instance(problem)
    graph = build_graph(instance.sizes[:, 0], instance.demand, room)
    assert arc_count(instance.sizes[:, 0], instance.demand, room, 10**6) >= graph.arc_count
    found = arcflow_search(graph, 0, instance.shape_count, instance.demand, optimum, 0, 10**6, float("inf"))
    assert found.packing is not None and found.packing.bin_count <= optimum
    assert (found.packing.covered(instance.shape_count) >= instance.demand).all()
    assert not overfilled(found.packing, instance)
    if optimum > 1:
        none = arcflow_search(graph, 0, instance.shape_count, instance.demand, optimum - 1, 0, 10**6, float("inf"))
        assert none.infeasible and none.packing is None and none.bins_bound == optimum


@SETTINGS
@given(data=bin_packings(), slack=st.integers(-1, 1))
def test_a_residual_completion_packs_within_the_allowance_exactly_when_it_can(data, slack, brute_force_optimum):
    room, sizes, demand = data
    problem = _problem(room, sizes, demand, bin_cost=2.5)
    optimum = int(brute_force_optimum(problem)[1])
    instance = build_instance(problem)
    completion = ResidualCompletion(instance.sizes[:, 0], room, 2.5)
    # What is left must cost less than `optimum + slack` bins: it fits in fewer bins only if slack > 0.
    packed = completion.complete(instance.demand, 2.5 * (optimum + slack), 0.0, float("inf"))
    if slack > 0:
        assert packed is not None and packed.bin_count < optimum + slack
        assert (packed.covered(instance.shape_count) >= instance.demand).all()
        assert not overfilled(packed, instance)
    else:
        assert packed is None


def test_a_residual_completion_leaves_large_graphs_and_short_budgets_to_the_dive():
    sizes = np.array([101, 103, 107, 109, 113], dtype=np.int64)
    demand = np.array([30, 30, 30, 30, 30], dtype=np.int64)
    arcs = arc_count(sizes, demand, 1000, 10**6)
    assert arcs is not None and arcs > 50
    assert ResidualCompletion(sizes, 1000, 1.0, arc_limit=50).complete(demand, 100.0, 0.0, float("inf")) is None
    assert ResidualCompletion(sizes, 1000, 1.0).complete(demand, 100.0, 0.0, float("inf")) is not None
    # HiGHS's iterations are charged after it returns: with enough work left for the model's set-up
    # but not for about half a unit per arc, it is not started.
    with work.using(work.WorkClock(work.MILP_CALL_UNITS + arcs / work.MILP_COLUMNS_PER_UNIT + 5)):
        assert ResidualCompletion(sizes, 1000, 1.0).complete(demand, 100.0, 0.0, float("inf")) is None
        assert work.clock().spent == 0


@SETTINGS
@given(data=bin_packings())
def test_the_solver_on_one_dimension_is_optimal_and_never_below(data, brute_force_optimum, solution_checker):
    room, sizes, demand = data
    problem = _problem(room, sizes, demand, work_limit=300)
    assert table_pricing_applies(build_instance(problem))
    solution = solve(problem)
    solution_checker(problem, solution)
    assert solution.status == "optimal" and solution.bin_count == brute_force_optimum(problem)[1]


def test_triplets_that_fill_their_bins_exactly_are_packed_at_the_optimum(solution_checker):
    # Triplets of sizes summing to the room exactly (Falkenauer's T construction, small): the optimum
    # is a third of the items, and first-fit decreasing misses it.
    rng = np.random.default_rng(3)
    room, triplets = 1000, 20
    sizes = []
    for _ in range(triplets):
        first = int(rng.integers(380, 490))
        second = int(rng.integers(250, min(490, room - first - 250)))
        sizes += [first, second, room - first - second]
    counts: dict[int, int] = {}
    for size in sizes:
        counts[size] = counts.get(size, 0) + 1
    problem = Problem(
        (BinType("bin", {"x": room}, 1.0),),
        tuple(ItemType(f"w{s}", {"x": s}, n) for s, n in sorted(counts.items())),
        work_limit=1500,
    )
    solution = solve(problem)
    solution_checker(problem, solution)
    assert solution.lower_bound.bins == triplets
    assert solution.bin_count == triplets


def _triplet_problem(seed: int) -> Problem:
    """15 to 29 triplets of sizes that fill a bin of 1000 exactly (Falkenauer's T construction)."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    for _ in range(int(rng.integers(15, 30))):
        first = int(rng.integers(380, 490))
        second = int(rng.integers(250, min(490, 1000 - first - 250)))
        sizes += [first, second, 1000 - first - second]
    counts: dict[int, int] = {}
    for size in sizes:
        counts[size] = counts.get(size, 0) + 1
    return Problem(
        (BinType("bin", {"x": 1000}, 1.0),), tuple(ItemType(f"w{s}", {"x": s}, n) for s, n in sorted(counts.items()))
    )


def _single_dive(problem: Problem, completion: bool) -> tuple[int, int]:
    """Bins of one dive without discrepancies from the converged root, and the root's bound."""
    instance = build_instance(problem)
    with work.using(work.WorkClock(10**6)):
        start, master_lp, pricer, root = converged_root(instance)
        bound = math.ceil(root.bound - 1e-6)
        residual = ResidualCompletion(instance.sizes[:, 0], 1000, 1.0) if completion else None
        found = dive(instance, master_lp, pricer, start.cost(instance), 10**6, 3, 0, float(bound), residual)
    assert found is not None and not overfilled(found, instance)
    assert (found.covered(instance.shape_count) >= instance.demand).all()
    return found.bin_count, bound


@pytest.mark.parametrize("seed", [4, 24])
def test_a_dive_settles_what_it_leaves_with_the_arc_flow_model(seed):
    # The same dive path, settled exactly once few items are left, meets the bound (one bin per
    # triplet); left to fix its last bins column by column, it ends a bin above.
    problem = _triplet_problem(seed)
    bins, bound = _single_dive(problem, completion=True)
    assert bins == bound
    bins_without, _ = _single_dive(problem, completion=False)
    assert bins_without == bound + 1
