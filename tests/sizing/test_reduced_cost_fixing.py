"""Arc-flow graphs cut down by reduced costs: the values of arcs, the arcs kept, and the dive's
completions cut from the whole graph."""

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.binpack import work
from sizing.binpack.arcflow import (
    ResidualCompletion,
    arc_values,
    arcflow_search,
    build_graph,
    fixed_by_reduced_cost,
)
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import overfilled
from tests.sizing.packing_instances import converged_root

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def graphs_and_prices(draw):
    """A room, distinct sizes (some too large), demands (some 0) and a price per shape."""
    room = draw(st.integers(4, 30))
    shapes = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(1, room + 2), min_size=shapes, max_size=shapes, unique=True))
    demand = draw(st.lists(st.integers(0, 5), min_size=shapes, max_size=shapes))
    prices = draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=shapes, max_size=shapes))
    return room, np.array(sizes, dtype=np.int64), np.array(demand, dtype=np.int64), np.array(prices)


def _canonical_bins(room: int, sizes: np.ndarray, demand: np.ndarray):
    """Every bin whose items fit and take each shape at most its demand, as (counts, its path in
    the graph's order: larger items first, then the arc to the end)."""
    shapes = sorted((i for i in range(len(sizes)) if demand[i] > 0 and sizes[i] <= room), key=lambda i: (-sizes[i], i))
    for counts in itertools.product(*[range(int(demand[i]) + 1) for i in shapes]):
        load, path = 0, []
        for i, c in zip(shapes, counts, strict=True):
            for _ in range(c):
                path.append((load, load + int(sizes[i]), i))
                load += int(sizes[i])
        if load <= room:
            full = np.zeros(len(sizes), dtype=np.int64)
            full[shapes] = counts
            yield full, path + [(load, room + 1, -1)]


@SETTINGS
@given(data=graphs_and_prices())
def test_an_arc_is_worth_the_best_bin_whose_path_takes_it(data):
    room, sizes, demand, prices = data
    graph = build_graph(sizes, demand, room)
    index = {
        (int(u), int(v), int(i)): k
        for k, (u, v, i) in enumerate(zip(graph.tails, graph.heads, graph.shapes, strict=True))
    }
    expected = np.full(graph.arc_count, -np.inf)
    for counts, path in _canonical_bins(room, sizes, demand):
        for arc in path:
            k = index[arc]  # every such bin is a path of the graph
            expected[k] = max(expected[k], float(prices @ counts))
    assert np.allclose(arc_values(graph, sizes, demand, prices), expected, rtol=0, atol=1e-9, equal_nan=False)


@st.composite
def packings_and_prices(draw):
    room = draw(st.integers(5, 20))
    sizes = draw(st.lists(st.integers(1, room), min_size=1, max_size=4, unique=True))
    counts = [draw(st.integers(1, 3)) for _ in sizes]
    prices = draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(sizes), max_size=len(sizes)))
    return room, np.array(sizes, dtype=np.int64), np.array(counts, dtype=np.int64), np.array(prices)


def _problem(room: int, sizes: np.ndarray, demand: np.ndarray) -> Problem:
    return Problem(
        (BinType("bin", {"x": room}, 1.0),),
        tuple(ItemType(f"s{k}", {"x": int(s)}, int(n)) for k, (s, n) in enumerate(zip(sizes, demand, strict=True))),
    )


@SETTINGS
@given(data=packings_and_prices(), slack=st.integers(0, 1))
def test_the_arcs_kept_hold_a_packing_of_every_count_they_allow_and_none_below(data, slack, brute_force_optimum):
    # Any prices >= 0 will do: scaled to be feasible, they bound the bins (Farley), and a packing
    # within the target never needs an arc they rule out.
    room, sizes, demand, prices = data
    problem = _problem(room, sizes, demand)
    optimum = int(brute_force_optimum(problem)[1])
    instance = build_instance(problem)
    item_sizes = instance.sizes[:, 0]
    graph = build_graph(item_sizes, instance.demand, room)
    fixed = fixed_by_reduced_cost(graph, item_sizes, instance.demand, prices[: instance.shape_count], optimum + slack)
    assert fixed.bound <= optimum + 1e-9
    assert fixed.graph.arc_count <= graph.arc_count
    found = arcflow_search(fixed.graph, 0, instance.shape_count, instance.demand, optimum, 0, 10**6, float("inf"))
    assert found.packing is not None and found.packing.bin_count <= optimum
    assert (found.packing.covered(instance.shape_count) >= instance.demand).all()
    assert not overfilled(found.packing, instance)
    if optimum > 1:
        below = fixed_by_reduced_cost(graph, item_sizes, instance.demand, prices[: instance.shape_count], optimum - 1)
        none = arcflow_search(
            below.graph, 0, instance.shape_count, instance.demand, optimum - 1, 0, 10**6, float("inf")
        )
        assert none.packing is None and none.infeasible


def _triplets(seed: int) -> tuple[Problem, list[list[int]]]:
    """25 triplets of sizes that fill a bin of 1000 exactly (Falkenauer's T construction), and the triplets."""
    rng = np.random.default_rng(seed)
    triplets = []
    for _ in range(25):
        first = int(rng.integers(380, 490))
        second = int(rng.integers(250, min(490, 1000 - first - 250)))
        triplets.append([first, second, 1000 - first - second])
    counts: dict[int, int] = {}
    for size in itertools.chain.from_iterable(triplets):
        counts[size] = counts.get(size, 0) + 1
    problem = Problem(
        (BinType("bin", {"x": 1000}, 1.0),), tuple(ItemType(f"w{s}", {"x": s}, n) for s, n in sorted(counts.items()))
    )
    return problem, triplets


def _root_prices(problem: Problem) -> tuple[np.ndarray, float]:
    """The converged root LP's prices per shape and its value."""
    with work.using(work.WorkClock(10**6)):
        _, _, _, root = converged_root(build_instance(problem))
    assert root.master is not None
    return root.master.prices, root.master.value


def test_at_the_root_prices_a_tight_lp_leaves_few_arcs_and_the_optimum_among_them():
    # The LP's value is the optimum, 25 bins. Of the graph's arcs, those only on bins worth less
    # than a whole bin at the LP's prices go.
    problem, _ = _triplets(5)
    instance = build_instance(problem)
    sizes = instance.sizes[:, 0]
    graph = build_graph(sizes, instance.demand, 1000)
    prices, value = _root_prices(problem)
    assert abs(value - 25) < 1e-6
    fixed = fixed_by_reduced_cost(graph, sizes, instance.demand, prices, 25)
    assert abs(fixed.bound - 25) < 1e-6
    assert fixed.graph.arc_count < graph.arc_count / 4
    found = arcflow_search(fixed.graph, 0, instance.shape_count, instance.demand, 25, 25, 10**6, float("inf"))
    assert found.packing is not None and found.packing.bin_count == 25
    # One bin fewer than the LP's value: the prices alone prove it impossible, and no arc is left.
    assert fixed_by_reduced_cost(graph, sizes, instance.demand, prices, 24).graph.arc_count == 0


def test_a_completion_cuts_its_graph_from_the_whole_one_and_settles_what_is_left():
    problem, triplets = _triplets(6)
    instance = build_instance(problem)
    sizes = instance.sizes[:, 0]
    prices, _ = _root_prices(problem)
    whole = fixed_by_reduced_cost(build_graph(sizes, instance.demand, 1000), sizes, instance.demand, prices, 25).graph
    # Ten triplets packed, one per bin: the other 15 are left, for fewer than 16 bins.
    shape_of = {int(size): i for i, size in enumerate(sizes)}
    left = instance.demand.copy()
    for size in itertools.chain.from_iterable(triplets[:10]):
        left[shape_of[size]] -= 1
    completion = ResidualCompletion(sizes, 1000, 1.0, whole=whole)
    graph = completion.graph(left, 16.0, prices, 15.0)
    assert graph is not None and graph.arc_count < whole.arc_count
    assert graph.arc_count < build_graph(sizes, left, 1000).arc_count / 2
    packed = completion.complete(left, 16.0, 15.0, float("inf"), graph)
    assert packed is not None and packed.bin_count == 15
    assert (packed.covered(instance.shape_count) >= left).all() and not overfilled(packed, instance)
    # Fewer than 15 bins is ruled out by the prices: no arc is left.
    none = completion.graph(left, 15.0, prices, 15.0)
    assert none is not None and none.arc_count == 0
    assert completion.complete(left, 15.0, 0.0, float("inf"), none) is None
    # With bins to spare, few arcs would go: the graph of what is left is built whole, and left
    # to the dive when it is over the limit.
    assert completion.graph(left, 30.0, prices, 15.0) is None
    roomy = ResidualCompletion(sizes, 1000, 1.0, arc_limit=10**6, whole=whole)
    spare = roomy.graph(left, 30.0, prices, 15.0)
    assert spare is not None and spare.arc_count == build_graph(sizes, left, 1000).arc_count > 3000


def test_a_room_too_large_for_the_tables_leaves_the_graph_whole():
    # Two shapes in a room of three million: the tables would hold 9 million cells, past the limit.
    sizes = np.array([400_000, 700_000], dtype=np.int64)
    demand = np.array([2, 2], dtype=np.int64)
    graph = build_graph(sizes, demand, 3_000_000)
    with work.using(work.WorkClock(10**6)):
        fixed = fixed_by_reduced_cost(graph, sizes, demand, np.array([0.4, 0.6]), 1)
        assert work.clock().spent == 0
    assert fixed.graph is graph and fixed.bound == 0.0
