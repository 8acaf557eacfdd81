"""The solver's parts: pattern lists, the pricing knapsack, the master LP, bounds and packings."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.binpack import master_lp
from sizing.binpack.bounds import rounded_cost_bound
from sizing.binpack.colgen import GenerationResult, column_generation, dual_bound
from sizing.binpack.ffd import first_fit_decreasing, pack, single_type
from sizing.binpack.instance import Instance, build_instance, restrict_types, undominated_types
from sizing.binpack.knapsack import best_pattern, surrogate_bounds
from sizing.binpack.master_lp import ColumnPool, MasterLP, MasterSolution
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import Packing, exact_packing, overfilled
from sizing.binpack.patterns import enumerate_patterns
from sizing.binpack.pricers import KnapsackPricer, PatternPricer
from sizing.binpack.solver import _nearly_converged


def all_fitting_multisets(room, sizes, demand):
    """Brute force: every non-empty count vector within demand that fits."""
    ranges = [range(int(n) + 1) for n in demand]
    found = set()
    for counts in itertools.product(*ranges):
        counts = np.array(counts)
        if counts.any() and (counts @ sizes <= room).all():
            found.add(tuple(counts))
    return found


small_arrays = st.integers(1, 4).flatmap(
    lambda shapes: st.tuples(
        st.lists(st.integers(2, 12), min_size=2, max_size=2),
        st.lists(st.lists(st.integers(0, 6), min_size=2, max_size=2), min_size=shapes, max_size=shapes),
        st.lists(st.integers(0, 3), min_size=shapes, max_size=shapes),
        st.lists(st.floats(0, 5, allow_nan=False), min_size=shapes, max_size=shapes),
    )
)


@settings(max_examples=80, deadline=None)
@given(data=small_arrays)
def test_pattern_enumeration_lists_every_fitting_multiset_once(data):
    room, sizes, demand, _ = (np.array(x) for x in data)
    sizes = sizes.astype(np.int64)
    patterns = enumerate_patterns(room, sizes, demand.astype(np.int64), limit=10_000)
    listed = [tuple(patterns.counts(p)) for p in range(len(patterns))]
    assert len(listed) == len(set(listed))
    assert set(listed) == all_fitting_multisets(room, sizes, demand)


def test_pattern_enumeration_gives_up_past_its_limit():
    sizes = np.ones((6, 1), dtype=np.int64)
    assert enumerate_patterns(np.array([6]), sizes, np.full(6, 6), limit=100) is None
    assert len(enumerate_patterns(np.array([1]), sizes, np.full(6, 6), limit=100)) == 6


@settings(max_examples=80, deadline=None)
@given(data=small_arrays, nodes=st.sampled_from([1, 5, 4000]))
def test_knapsack_value_and_bound_bracket_the_brute_force_optimum(data, nodes):
    room, sizes, demand, prices = (np.array(x) for x in data)
    sizes, demand = sizes.astype(np.int64), demand.astype(np.int64)
    result = best_pattern(
        prices.astype(float), sizes, room.astype(np.int64), demand, node_limit=nodes, fallback_units=0
    )
    best = max([float(prices @ np.array(c)) for c in all_fitting_multisets(room, sizes, demand)], default=0.0)
    assert (result.counts <= demand).all() and (result.counts @ sizes <= room).all()
    assert result.value == pytest.approx(float(prices @ result.counts))
    assert result.value <= best + 1e-9
    assert result.upper_bound >= best - 1e-9
    if nodes == 4000:
        assert result.value == pytest.approx(best)


def _instance(bin_types, items):
    return build_instance(Problem(tuple(bin_types), tuple(items), 5.0))


def test_highspy_is_installed_for_the_warm_master_lp():
    # Pinned in requirements.txt; without it every solve silently falls back to linprog.
    assert master_lp.Highs is not None


def test_warm_and_cold_master_lp_agree():
    instance = _instance(
        [BinType("a", {"x": 10, "y": 10}, 1.0), BinType("b", {"x": 20, "y": 8}, 1.7, max_count=2)],
        [ItemType("p", {"x": 6, "y": 3}, 5), ItemType("q", {"x": 3, "y": 5}, 4), ItemType("r", {"x": 2, "y": 2}, 7)],
    )
    values = []
    for warm in (True, False):
        pool = ColumnPool(instance.shape_count)
        for (t, counts), _ in first_fit_decreasing(instance).bins:
            pool.add(t, counts)
        limits = np.array([-1, 2])
        result = column_generation(
            instance,
            MasterLP(instance, pool, warm=warm),
            KnapsackPricer(instance, milp_units=1.0),
            instance.demand,
            limits,
            deadline=float("inf"),
            max_iterations=200,
        )
        assert result.converged
        values.append((result.master.value, result.bound))
    assert values[0][0] == pytest.approx(values[1][0], rel=1e-7)
    for value, bound in values:
        assert bound <= value + 1e-7


def test_column_generation_stops_once_its_master_lp_is_down_to_the_floor():
    # First-fit decreasing packs these in 7 bins; the LP over all patterns needs 5.5.
    instance = _instance(
        [BinType("a", {"x": 10, "y": 10}, 1.0)],
        [
            ItemType("p", {"x": 6, "y": 1}, 3),
            ItemType("q", {"x": 5, "y": 2}, 3),
            ItemType("r", {"x": 4, "y": 4}, 3),
            ItemType("s", {"x": 3, "y": 5}, 2),
        ],
    )

    def generate(floor: float):
        pool = ColumnPool(instance.shape_count)
        start = first_fit_decreasing(instance)
        assert start is not None
        for (t, counts), _ in start.bins:
            pool.add(t, counts)
        return column_generation(
            instance,
            MasterLP(instance, pool),
            KnapsackPricer(instance, milp_units=1.0),
            instance.demand,
            np.array([-1]),
            deadline=float("inf"),
            max_iterations=200,
            floor=floor,
        )

    free = generate(float("-inf"))
    assert free.converged and free.iterations > 1 and free.master.value == pytest.approx(5.5)
    # The first master LP (over the first-fit bins, 7.0) is already down to this floor: no pricing.
    stopped = generate(7.0)
    assert stopped.iterations == 1 and not stopped.converged and stopped.bound == float("-inf")
    # Above the LP's optimum, the floor stops it on the way down, before it converges.
    early = generate(6.0)
    assert 1 < early.iterations <= free.iterations and early.master.value <= 6.0 and not early.converged


def test_column_generation_goes_on_past_its_share_only_in_one_dimension_priced_exactly_and_less_than_a_bin_short():
    instance = _instance(
        [BinType("a", {"x": 10}, 2.0)],
        [ItemType("p", {"x": 6}, 3), ItemType("q", {"x": 4}, 3)],
    )

    def result(value: float, bound: float, converged: bool = False, uncovered: float = 0.0) -> GenerationResult:
        master = MasterSolution(np.ones(2), value, np.ones(2), np.zeros(1), uncovered)
        return GenerationResult(master, bound, converged, 10)

    def goes_on(generation: GenerationResult, exact_pricing: bool = True, one_dimension: bool = True) -> bool:
        return _nearly_converged(instance, generation, exact_pricing, one_dimension)

    # A bin costs 2: a bound 1.9 below the LP is less than a bin short, 2.0 is not.
    assert goes_on(result(10.0, 8.1))
    assert not goes_on(result(10.0, 8.0))
    assert not goes_on(result(10.0, 8.1), exact_pricing=False)
    # In several dimensions the LP tails off over many rounds: no extension.
    assert not goes_on(result(10.0, 8.1), one_dimension=False)
    assert not goes_on(result(10.0, 10.0, converged=True))
    # An LP that still leans on its artificial columns has prices that mean nothing yet.
    assert not goes_on(result(10.0, 9.5, uncovered=0.5))
    assert not goes_on(GenerationResult(None, 9.5, False, 1))


def test_farley_bound_is_valid_for_any_prices():
    # Items of 4 in bins of 10: two per bin, 3 bins for 5 items.
    instance = _instance([BinType("b", {"x": 10}, 1.0)], [ItemType("a", {"x": 4}, 5)])
    patterns = [enumerate_patterns(instance.capacity[0], instance.sizes, instance.demand, 100)]
    limits = np.array([-1])
    for price in (0.1, 0.5, 0.9, 3.0):
        prices = np.array([price])
        best = PatternPricer(instance, patterns).price(prices, np.zeros(1), instance.demand, np.array([True]), 0.0)
        assert dual_bound(instance, instance.demand, limits, prices, best.best_values) <= 2.5 + 1e-12
    assert dual_bound(instance, instance.demand, limits, np.array([0.5]), np.array([1.0])) == pytest.approx(2.5)


def test_exact_packing_removes_surplus_and_moves_bins_to_cheaper_types():
    instance = _instance(
        [BinType("big", {"x": 10}, 2.0), BinType("small", {"x": 5}, 1.0)],
        [ItemType("a", {"x": 5}, 3)],
    )
    covering = Packing.of([((0, (2,)), 2)])  # 4 items where 3 are needed
    exact = exact_packing(covering, instance)
    assert exact.covered(1).tolist() == [3]
    assert not overfilled(exact, instance)
    # The bin left with one item moves to the cheaper type that still holds it.
    assert sorted(exact.bins) == [((0, (2,)), 1), ((1, (1,)), 1)]
    assert exact.cost(instance) == pytest.approx(3.0)


def _exact_bin_by_bin(packing: Packing, instance: Instance) -> Packing:
    """exact_packing's rule taken one bin at a time: surplus out of the last bins first, then
    the fullest bins first each onto the cheapest type that holds it, within the max counts."""
    types = [t for (t, _), m in packing.bins for _ in range(m)]
    contents = [np.array(c, dtype=np.int64) for (_, c), m in packing.bins for _ in range(m)]
    surplus = packing.covered(instance.shape_count) - instance.demand
    for b in reversed(range(len(contents))):
        removed = np.minimum(contents[b], np.maximum(surplus, 0))
        contents[b] = contents[b] - removed
        surplus -= removed
    kept = [b for b in range(len(contents)) if contents[b].any()]
    used = np.zeros(instance.type_count, dtype=np.int64)
    for b in kept:
        used[types[b]] += 1
    by_price = sorted(range(instance.type_count), key=lambda t: (instance.cost[t], t))
    for b in sorted(kept, key=lambda b: -int(contents[b].sum())):
        load = contents[b] @ instance.sizes
        for h in by_price:
            limit = instance.max_count[h]
            cheaper = instance.cost[h] < instance.cost[types[b]] and (instance.capacity[h] >= load).all()
            if cheaper and (limit is None or used[h] < limit):
                used[h] += 1
                used[types[b]] -= 1
                types[b] = h
                break
    return Packing.of(((types[b], tuple(int(c) for c in contents[b])), 1) for b in kept)


def test_exact_packing_keeps_trimmed_bins_in_their_place_among_the_groups():
    # Surplus is taken from the later groups' last copies while earlier copies stay whole; the
    # trimmed bins must keep their place in the bins' order, which decides, among bins of equal
    # fill, which of them gets the last room of the limited cheap types.
    instance = _instance(
        [
            BinType("t0", {"x": 15, "y": 10}, 2.5, 2),
            BinType("t1", {"x": 15, "y": 15}, 1.5, 3),
            BinType("t2", {"x": 14, "y": 8}, 1.0, 1),
            BinType("t3", {"x": 10, "y": 10}, 1.0, 3),
        ],
        [
            ItemType("i0", {"x": 1, "y": 2}, 5),
            ItemType("i1", {"x": 1, "y": 3}, 5),
            ItemType("i2", {"x": 2, "y": 5}, 6),
            ItemType("i3", {"x": 3, "y": 0}, 1),
        ],
    )
    covering = Packing.of(
        [
            ((0, (0, 1, 0, 0)), 1),
            ((0, (0, 1, 1, 2)), 2),
            ((0, (1, 0, 1, 1)), 1),
            ((1, (0, 1, 1, 0)), 3),
            ((1, (1, 0, 0, 0)), 3),
            ((1, (1, 0, 2, 0)), 2),
            ((1, (2, 0, 1, 1)), 3),
            ((2, (0, 0, 0, 3)), 1),
        ]
    )
    exact = exact_packing(covering, instance)
    assert exact == _exact_bin_by_bin(covering, instance)
    assert exact.bins == (
        ((0, (0, 1, 0, 0)), 1),
        ((1, (0, 0, 1, 0)), 1),
        ((1, (0, 1, 1, 0)), 1),
        ((1, (1, 0, 0, 0)), 4),
        ((2, (0, 1, 1, 1)), 1),
        ((3, (0, 1, 1, 0)), 2),
        ((3, (1, 0, 1, 0)), 1),
    )


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_exact_packing_on_groups_of_bins_decides_as_bin_by_bin(data):
    bin_types = [
        BinType(f"t{k}", {"x": data.draw(st.integers(5, 12)), "y": data.draw(st.integers(5, 12))},
                data.draw(st.sampled_from([1.0, 1.5, 2.0])), data.draw(st.sampled_from([None, 1, 2, 4])))
        for k in range(data.draw(st.integers(1, 3)))
    ]  # fmt: skip
    items = [
        ItemType(
            f"i{k}",
            {"x": data.draw(st.integers(0, 5)), "y": data.draw(st.integers(0, 5))},
            data.draw(st.integers(1, 6)),
        )
        for k in range(data.draw(st.integers(1, 4)))
    ]
    instance = _instance(bin_types, items)
    bins = []
    for _ in range(data.draw(st.integers(1, 12))):
        t = data.draw(st.integers(0, instance.type_count - 1))
        counts = [data.draw(st.integers(0, 3)) for _ in range(instance.shape_count)]
        if any(counts) and (np.array(counts) @ instance.sizes <= instance.capacity[t]).all():
            bins.append(((t, tuple(counts)), data.draw(st.integers(1, 4))))
    covering = Packing.of(bins)
    if (covering.covered(instance.shape_count) < instance.demand).any():
        return
    assert exact_packing(covering, instance) == _exact_bin_by_bin(covering, instance)


def test_dominated_bin_types_are_dropped_but_limited_ones_never_dominate():
    instance = _instance(
        [
            BinType("c5.xlarge", {"cpu": 4, "memory": 8}, 0.17),
            BinType("c6a.xlarge", {"cpu": 4, "memory": 8}, 0.153),
            BinType("c5.large", {"cpu": 2, "memory": 4}, 0.085),
            BinType("reserved", {"cpu": 8, "memory": 16}, 0.01, max_count=1),
            BinType("unusable", {"cpu": 64, "memory": 64}, 0.01, max_count=0),
        ],
        [ItemType("pod", {"cpu": 1, "memory": 1}, 3)],
    )
    kept = undominated_types(instance)
    assert [instance.bin_names[t] for t in kept] == ["c6a.xlarge", "c5.large", "reserved"]
    assert restrict_types(instance, kept).bin_names == ("c6a.xlarge", "c5.large", "reserved")


def test_bounds_round_up_to_the_next_possible_cost():
    unit = _instance([BinType("b", {"x": 10}, 0.5)], [ItemType("a", {"x": 1}, 1)])
    assert rounded_cost_bound(unit, 1.2) == (1.5, 3)
    priced = _instance([BinType("a", {"x": 10}, 0.096), BinType("b", {"x": 20}, 0.192)], [ItemType("i", {"x": 1}, 1)])
    assert priced.cost_step() == pytest.approx(0.096)
    cost, bins = rounded_cost_bound(priced, 0.2)
    assert cost == pytest.approx(0.288) and bins is None
    odd = _instance([BinType("a", {"x": 10}, 1 / 3), BinType("b", {"x": 20}, 0.5)], [ItemType("i", {"x": 1}, 1)])
    assert odd.cost_step() is None and rounded_cost_bound(odd, 0.7) == (0.7, None)


def test_first_fit_places_identical_items_in_bulk_like_one_at_a_time():
    instance = _instance(
        [BinType("b", {"x": 10, "y": 10}, 1.0)],
        [ItemType("big", {"x": 6, "y": 2}, 3), ItemType("small", {"x": 3, "y": 3}, 5)],
    )
    packing = pack(instance, single_type(0))
    # Shapes are (3, 3) then (6, 2). One at a time: each 6 opens a bin; each of those bins then has room
    # for one 3; the last two 3s open a fourth bin.
    assert sorted(packing.bins) == [((0, (1, 1)), 3), ((0, (2, 0)), 1)]


@st.composite
def _ffd_instances(draw):
    types = [
        BinType(
            f"t{t}",
            {"x": draw(st.integers(4, 30)), "y": draw(st.integers(4, 30))},
            draw(st.sampled_from([1.0, 1.5, 2.0, 3.7])),
            max_count=draw(st.sampled_from([None, None, 3])),
        )
        for t in range(draw(st.integers(1, 8)))
    ]
    items = [
        ItemType(f"i{i}", {"x": draw(st.integers(1, 6)), "y": draw(st.integers(0, 6))}, draw(st.integers(1, 40)))
        for i in range(draw(st.integers(1, 6)))
    ]
    return _instance(types, items)


@settings(max_examples=80, deadline=None)
@given(_ffd_instances())
def test_ffd_skipping_types_that_cannot_win_keeps_the_answer(instance):
    """first_fit_decreasing skips single-type variants whose cost floor is above the best so far;
    its answer must be the best of every variant tried in order, none skipped, bins identical."""
    from sizing.binpack.ffd import _distinct_types, cheapest_per_item
    from sizing.binpack.packing import better

    best = None
    for choose in [single_type(t) for t in _distinct_types(instance)] + [cheapest_per_item]:
        packing = pack(instance, choose)
        if better(packing, best, instance):
            best = packing
    assert first_fit_decreasing(instance) == best
    if best is not None:
        # Bins merged as Packing.of merges them.
        assert best == Packing.of(best.bins)


@settings(max_examples=120, deadline=None)
@given(data=small_arrays, second_room=st.lists(st.integers(0, 12), min_size=2, max_size=2), weights=st.data())
def test_surrogate_bounds_never_fall_below_the_best_pattern(data, second_room, weights):
    """A pricing round bounds the types it leaves unpriced by their surrogate knapsack; a bound
    below the best pattern would make the Farley bound, and so the solver's, invalid."""
    room, sizes, demand, prices = (np.array(x) for x in data)
    rooms = np.array([room, second_room], dtype=np.int64)
    chosen = weights.draw(st.lists(st.floats(0, 3, allow_nan=False), min_size=4, max_size=4), label="weights")
    bounds = surrogate_bounds(
        prices.astype(float), sizes.astype(np.int64), rooms, demand.astype(np.int64), np.array(chosen).reshape(2, 2)
    )
    for bound, type_room in zip(bounds, rooms, strict=True):
        best = max([float(prices @ np.array(c)) for c in all_fitting_multisets(type_room, sizes, demand)], default=0.0)
        assert bound >= best - 1e-9


def test_surrogate_bounds_hold_with_weights_near_the_smallest_double():
    # Both shapes' value per surrogate load overflows to infinity; ranked by it, the room went to
    # the lesser shape and the bound (1.0) fell below the best pattern (one of each, 1.5).
    prices = np.array([0.5, 0.0, 0.0, 1.0])
    sizes = np.array([[0, 1], [0, 0], [0, 0], [0, 1]], dtype=np.int64)
    demand = np.array([2, 0, 0, 1], dtype=np.int64)
    rooms = np.array([[2, 2]], dtype=np.int64)
    bounds = surrogate_bounds(prices, sizes, rooms, demand, np.array([[0.0, 5e-324]]))
    assert bounds[0] >= 1.5


def test_surrogate_bounds_meet_the_fractional_optimum_of_one_dimension():
    # One dimension, weight 1: the bound is the fractional knapsack, 3 of the first and a third of the second.
    prices = np.array([3.0, 2.0])
    sizes = np.array([[2], [3]], dtype=np.int64)
    bound = surrogate_bounds(prices, sizes, np.array([[7]]), np.array([3, 5]), np.array([[1.0]]))
    assert bound[0] == pytest.approx(3 * 3.0 + (7 - 6) / 3 * 2.0)


@settings(max_examples=150, deadline=None)
@given(
    data=small_arrays,
    second_room=st.lists(st.integers(1, 12), min_size=2, max_size=2),
    costs=st.lists(st.floats(0.5, 6, allow_nan=False), min_size=2, max_size=2),
    all_prices=st.lists(st.floats(0, 5, allow_nan=False), min_size=4, max_size=4),
)
def test_knapsack_pricing_leaves_out_only_types_without_an_improving_pattern(data, second_room, costs, all_prices):
    """Types whose surrogate knapsack is worth no more than their cost are bounded, not searched: a
    round that finds no column must still mean that no type has a pattern worth more than its cost."""
    room, sizes, demand, _ = data
    if not any(demand):
        return
    problem = Problem(
        (
            BinType("a", {"x": room[0], "y": room[1]}, costs[0]),
            BinType("b", {"x": second_room[0], "y": second_room[1]}, costs[1]),
        ),
        tuple(
            ItemType(f"i{k}", {"x": s[0], "y": s[1]}, n)
            for k, (s, n) in enumerate(zip(sizes, demand, strict=True))
            if n
        ),
    )
    instance = build_instance(problem)
    prices = np.array(all_prices[: instance.shape_count])
    usable = np.ones(instance.type_count, dtype=bool)
    pricing = KnapsackPricer(instance, milp_units=1000.0).price(
        prices, np.zeros(instance.type_count), instance.demand, usable, float("inf")
    )
    improving = False
    for t in range(instance.type_count):
        multisets = all_fitting_multisets(instance.capacity[t], instance.sizes, instance.demand)
        best = max([float(prices @ np.array(c)) for c in multisets], default=0.0)
        assert pricing.best_values[t] >= best - 1e-9
        improving = improving or best > float(instance.cost[t]) * (1 + 1e-6)
    if improving:
        assert pricing.columns
