"""The local search that takes bins away from a packing of one unlimited bin type
(`sizing.binpack.bin_elimination`), on its own and inside the solver."""

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.binpack import work
from sizing.binpack.bin_elimination import ITEM_LIMIT, MIN_SLACK, applies, eliminate_bins, item_weights
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance, build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import Packing, overfilled
from sizing.binpack.solver import solve
from tests.sizing.packing_instances import triplets


def _eliminate(instance: Instance, packing: Packing, lower: int, units: float) -> tuple[Packing | None, float]:
    with work.using(work.WorkClock(units)) as clock:
        result = eliminate_bins(instance, packing, lower, units)
    return result, clock.spent


def _eliminate_measured(instance: Instance, lower: int, units: float) -> tuple[Packing | None, float, int]:
    """The search from first-fit decreasing: its packing, the work it charged and its peak of
    traced memory in bytes."""
    start = first_fit_decreasing(instance)
    assert start is not None
    tracemalloc.start()
    try:
        result, spent = _eliminate(instance, start, lower, units)
        return result, spent, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _valid(instance: Instance, packing: Packing) -> bool:
    return not overfilled(packing, instance) and bool((packing.covered(instance.shape_count) == instance.demand).all())


def test_triplets_reach_the_optimum_first_fit_decreasing_misses():
    instance = build_instance(triplets(20, seed=0))
    start = first_fit_decreasing(instance)
    assert start.bin_count > 20
    result, spent = _eliminate(instance, start, 20, 3000)
    assert result is not None and result.bin_count == 20
    assert _valid(instance, result)
    assert spent < 3000


def test_the_search_stops_at_the_lower_bound_it_is_given():
    instance = build_instance(triplets(20, seed=0))
    start = first_fit_decreasing(instance)
    result, _ = _eliminate(instance, start, start.bin_count - 1, 3000)
    assert result is not None and result.bin_count == start.bin_count - 1
    assert _eliminate(instance, start, start.bin_count, 3000)[0] is None


def test_the_same_input_gives_the_same_packing():
    instance = build_instance(triplets(30, seed=2))
    start = first_fit_decreasing(instance)
    first, spent_first = _eliminate(instance, start, 30, 800)
    second, spent_second = _eliminate(instance, start, 30, 800)
    assert first == second and spent_first == spent_second
    assert first is not None and first.bin_count < start.bin_count


def test_the_search_ends_near_its_deadline():
    instance = build_instance(triplets(30, seed=3))
    start = first_fit_decreasing(instance)
    result, spent = _eliminate(instance, start, 30, 5)
    # One step past the deadline at most: a step weighs a few units on this instance.
    assert spent < 5 + 5
    assert result is None or result.bin_count < start.bin_count


def test_vector_items_lose_bins_too():
    rng = np.random.default_rng(7)
    items = tuple(
        ItemType(f"p{k}", {"cpu": int(rng.integers(150, 600)), "memory": int(rng.integers(150, 600))}, 1)
        for k in range(60)
    )
    instance = build_instance(Problem((BinType("node", {"cpu": 1000, "memory": 1000}, 1.0),), items))
    start = first_fit_decreasing(instance)
    result, _ = _eliminate(instance, start, 1, 2000)
    assert result is not None and result.bin_count < start.bin_count
    assert _valid(instance, result)


def _full_in_cpu(bins: int, seed: int) -> Instance:
    """Three items per bin that fill `bins` bins exactly in cpu, each light in memory and pods:
    an optimum of `bins` bins whose every bin is full in one dimension only."""
    rng = np.random.default_rng(seed)
    items = []
    for b in range(bins):
        low, high = sorted(int(c) for c in rng.choice(np.arange(5, 96), size=2, replace=False))
        for k, cpu in enumerate((low, high - low, 100 - high)):
            resources = {"cpu": cpu, "memory": int(rng.integers(5, 30)), "pods": int(rng.integers(5, 30))}
            items.append(ItemType(f"b{b}-{k}", resources, 1))
    node = BinType("node", {"cpu": 100, "memory": 100, "pods": 100}, 1.0)
    return build_instance(Problem((node,), tuple(items)))


def test_a_dimension_every_bin_must_fill_weighs_most():
    # Weighing cpu, memory and pods alike, the search found none of these optima in 3,000 units.
    for seed in (0, 1, 3):
        instance = _full_in_cpu(30, seed)
        start = first_fit_decreasing(instance)
        assert start is not None and start.bin_count > 30
        result, spent = _eliminate(instance, start, 30, 3000)
        assert result is not None and result.bin_count == 30, seed
        assert _valid(instance, result)
        assert spent < 3000


def test_item_weights_scale_each_dimension_by_its_scarcity():
    shares = np.array([[0.5, 0.2], [0.45, 0.1], [0.05, 0.1]])
    # Towards one bin: cpu leaves nothing unused (MIN_SLACK counts), memory 0.6 of a bin.
    weights = item_weights(shares, 1)
    np.testing.assert_allclose(weights, shares @ np.array([1.0, MIN_SLACK / 0.6]))
    # Towards two bins: 1 and 1.6 bins unused.
    np.testing.assert_allclose(item_weights(shares, 2), shares @ np.array([1.0, 1 / 1.6]))
    # One dimension: the plain share, whatever the target.
    np.testing.assert_allclose(item_weights(shares[:, :1], 5), shares[:, 0])
    # No dimension named: nothing weighs.
    np.testing.assert_array_equal(item_weights(shares[:, :0], 2), np.zeros(3))


def test_it_applies_to_one_unlimited_bin_type_and_few_items_only():
    one = Problem((BinType("bin", {"cpu": 10}, 1.0),), (ItemType("a", {"cpu": 3}, 5),))
    assert applies(build_instance(one))
    two_types = Problem(one.bin_types + (BinType("big", {"cpu": 20}, 1.5),), one.items)
    limited = Problem((BinType("bin", {"cpu": 10}, 1.0, max_count=4),), one.items)
    many = Problem(one.bin_types, (ItemType("a", {"cpu": 3}, ITEM_LIMIT + 1),))
    for problem in (two_types, limited, many):
        instance = build_instance(problem)
        assert not applies(instance)
        assert _eliminate(instance, first_fit_decreasing(instance), 0, 100)[0] is None


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(
        st.tuples(st.integers(1, 10), st.integers(0, 10)),
        min_size=4,
        max_size=24,
    ),
    two_dimensions=st.booleans(),
)
def test_any_packing_it_returns_holds_every_item_in_fewer_bins(sizes, two_dimensions):
    items = tuple(
        ItemType(f"i{k}", {"cpu": a, "memory": b} if two_dimensions else {"cpu": a}, 1)
        for k, (a, b) in enumerate(sizes)
    )
    room = {"cpu": 10, "memory": 10} if two_dimensions else {"cpu": 10}
    instance = build_instance(Problem((BinType("bin", room, 1.0),), items))
    # One item per bin.
    start = Packing.of(
        ((0, tuple(int(k == i) for k in range(instance.shape_count))), int(instance.demand[i]))
        for i in range(instance.shape_count)
    )
    lower = int(np.ceil((instance.sizes * instance.demand[:, None]).sum(axis=0).max() / 10))
    result, _ = _eliminate(instance, start, lower, 200)
    if result is not None:
        assert _valid(instance, result)
        assert lower <= result.bin_count < start.bin_count


def test_the_solver_packs_triplets_in_the_optimum_under_the_default_budget():
    problem = triplets(40, seed=1)
    solution = solve(problem)
    assert solution.bin_count == 40
    assert solution.status == "optimal"


def test_the_solver_result_does_not_depend_on_its_workers():
    problem = triplets(30, seed=5)
    assert solve(problem, workers=1).bins == solve(problem, workers=2).bins


def test_a_step_too_large_to_weigh_ends_the_search_without_eating_memory():
    # 100 bins of one large item and ten small ones: the items set aside from three bins and the
    # pairs of every kept bin make more move pairs than one step may weigh.
    problem = Problem(
        (BinType("bin", {"cpu": 100}, 1.0),),
        (ItemType("large", {"cpu": 90}, 100), ItemType("small", {"cpu": 1}, 1000)),
    )
    instance = build_instance(problem)
    assert applies(instance)
    result, spent, peak = _eliminate_measured(instance, 1, 10_000)
    assert result is None
    assert spent < 10
    assert peak < 50 * 2**20


def test_a_huge_room_in_one_dimension_is_not_a_huge_subset_sum():
    # Room 10**12 (bytes, say): bitsets over the room would take terabytes; the search packs
    # these items without them.
    unit = 10**12 // 1000
    problem = triplets(10, seed=4)
    problem = Problem(
        (BinType("bin", {"cpu": 10**12}, 1.0),),
        tuple(ItemType(item.name, {"cpu": item.size["cpu"] * unit}, item.count) for item in problem.items),
    )
    instance = build_instance(problem)
    result, _, peak = _eliminate_measured(instance, 10, 1000)
    assert peak < 50 * 2**20
    assert result is not None and _valid(instance, result)
    assert result.bin_count < first_fit_decreasing(instance).bin_count
