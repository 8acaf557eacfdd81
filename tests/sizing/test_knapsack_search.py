"""The compiled knapsack search (`sizing.binpack.knapsack_search`) against its plain-Python
statement (`knapsack_reference`): the same nodes, in the same order, to the same pattern; and
how knapsack pricing sizes its searches and is charged for them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.binpack import pricers, work
from sizing.binpack.instance import build_instance
from sizing.binpack.knapsack import PRICE_EPSILON, best_pattern
from sizing.binpack.knapsack_search import search
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.pricers import EXACT_NODES, EXACT_SEARCH_SHARE, MAX_EXACT_NODES, KnapsackPricer
from tests.sizing.knapsack_reference import reference_search


def _ranked(prices, sizes, multipliers):
    """Shapes in the search's order: by price per unit of surrogate size, best first."""
    weight = sizes @ multipliers
    order = np.lexsort((np.arange(len(prices)), -prices / weight))
    return (
        np.ascontiguousarray(prices[order]),
        np.ascontiguousarray(weight[order]),
        np.ascontiguousarray(sizes[order]),
        order,
    )


instances = st.integers(1, 3).flatmap(
    lambda dimensions: st.integers(1, 14).flatmap(
        lambda shapes: st.tuples(
            st.lists(st.integers(5, 60), min_size=dimensions, max_size=dimensions),
            st.lists(
                st.lists(st.integers(0, 20), min_size=dimensions, max_size=dimensions).filter(any),
                min_size=shapes,
                max_size=shapes,
            ),
            st.lists(st.integers(1, 5), min_size=shapes, max_size=shapes),
            st.lists(st.floats(0.01, 10, allow_nan=False), min_size=shapes, max_size=shapes),
            st.lists(st.floats(0.001, 1, allow_nan=False), min_size=dimensions, max_size=dimensions),
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(data=instances, node_limit=st.sampled_from([0, 1, 3, 20, 10_000]))
def test_the_compiled_search_visits_the_same_nodes_as_its_plain_statement(data, node_limit):
    room, sizes, limit, prices, multipliers = data
    room = np.array(room, dtype=np.int64)
    multipliers = np.array(multipliers)
    price, weight, ranked_sizes, order = _ranked(np.array(prices), np.array(sizes, dtype=np.int64), multipliers)
    limit = np.ascontiguousarray(np.array(limit, dtype=np.int64)[order])
    best = np.zeros(len(price), dtype=np.int64)
    nodes, value, root_bound = search(
        price, weight, ranked_sizes, limit, room, multipliers, PRICE_EPSILON, node_limit, best, 0.0
    )
    expected = reference_search(
        price, weight, ranked_sizes, limit, room, multipliers, PRICE_EPSILON, node_limit, [0] * len(price), 0.0
    )
    assert (nodes, value, root_bound, best.tolist()) == expected
    assert (best @ ranked_sizes <= room).all() and (best <= limit).all()
    assert value == float(price @ best) or abs(value - float(price @ best)) <= 1e-9 * max(1.0, value)
    if nodes <= node_limit:
        assert value <= root_bound * (1 + 1e-9) + 1e-9


def test_a_search_deeper_than_python_recursion_finishes_and_fills_the_bin():
    """Three thousand shapes that all fit at once: one node per shape, one level each."""
    shapes = 3000
    sizes = np.ones((shapes, 1), dtype=np.int64)
    prices = np.linspace(2.0, 1.0, shapes)
    result = best_pattern(prices, sizes, np.array([shapes]), np.ones(shapes, dtype=np.int64), node_limit=10**6)
    assert result.counts.tolist() == [1] * shapes
    assert result.value == result.upper_bound


def test_the_search_stops_past_its_node_limit_with_the_best_pattern_it_has():
    rng = np.random.default_rng(7)
    shapes = 60
    sizes = rng.integers(1, 40, (shapes, 3))
    prices = sizes.sum(axis=1) * rng.uniform(0.9, 1.1, shapes)
    limit = np.full(shapes, 3)
    result = best_pattern(prices, sizes, np.array([100, 100, 100]), limit, node_limit=25, fallback_units=0)
    assert result.nodes == 26
    assert result.upper_bound > result.value
    assert (result.counts @ sizes <= 100).all()


def _pricer_instance(shapes: int = 40):
    rng = np.random.default_rng(3)
    items = tuple(
        ItemType(f"i{k}", {"x": int(x), "y": int(y), "z": int(z)}, 2)
        for k, (x, y, z) in enumerate(rng.integers(50, 300, (shapes, 3)))
    )
    return build_instance(Problem((BinType("bin", {"x": 1000, "y": 1000, "z": 1000}, 1.0),), items))


def test_an_exact_search_gets_the_nodes_the_work_left_affords_within_its_floor_and_ceiling():
    instance = _pricer_instance()
    pricer = KnapsackPricer(instance, milp_units=0.0)
    one_type, two_types = np.array([True]), np.array([True, True])
    per_unit = EXACT_SEARCH_SHARE * work.KNAPSACK_SCANS_PER_UNIT / instance.shape_count
    with work.using(work.WorkClock(10**9)):
        # Little work left: the floor.
        assert pricer._exact_node_limit(EXACT_NODES, one_type, 1.0) == EXACT_NODES
        # More: the share of it, split over the types searched.
        assert pricer._exact_node_limit(EXACT_NODES, one_type, 100.0) == int(100 * per_unit)
        assert pricer._exact_node_limit(EXACT_NODES, two_types, 100.0) == int(50 * per_unit)
        # Much more: the ceiling.
        assert pricer._exact_node_limit(EXACT_NODES, one_type, 10.0**8) == MAX_EXACT_NODES
        # A quick pass keeps its own small limit.
        assert pricer._exact_node_limit(50, one_type, 10.0**8) == 50


def test_under_a_cap_an_exact_search_gets_no_more_nodes_than_the_seconds_left_afford():
    instance = _pricer_instance()
    pricer = KnapsackPricer(instance, milp_units=0.0)
    with work.using(work.WorkClock(10**12, seconds=0.05)) as clock:
        limit = pricer._exact_node_limit(EXACT_NODES, np.array([True]), clock.end)
    seconds_worth = 0.05 * work.UNITS_PER_SECOND * work.KNAPSACK_SCANS_PER_UNIT / instance.shape_count
    assert EXACT_NODES <= limit <= max(EXACT_NODES, EXACT_SEARCH_SHARE * seconds_worth)
    assert limit < MAX_EXACT_NODES


def test_knapsack_pricing_is_charged_the_shapes_its_searches_looked_at(monkeypatch):
    instance = _pricer_instance()
    searches = []

    def recorded(*args, **kwargs):
        result = best_pattern(*args, **kwargs)
        searches.append(result)
        return result

    monkeypatch.setattr(pricers, "best_pattern", recorded)
    prices = np.full(instance.shape_count, 0.2)
    with work.using(work.WorkClock(10**9)) as clock:
        pricers.KnapsackPricer(instance, milp_units=0.0).price(
            prices, np.zeros(1), instance.demand, np.array([True]), 10.0**9
        )
    assert searches and any(result.scans for result in searches)
    for result in searches:
        # Each node is charged every shape the search may add: those with a price left.
        assert result.scans % max(1, result.nodes) == 0
        assert result.nodes <= result.scans <= result.nodes * instance.shape_count
    expected = work.KNAPSACK_CALL_UNITS + sum(
        work.KNAPSACK_CALL_UNITS + result.scans / work.KNAPSACK_SCANS_PER_UNIT for result in searches
    )
    assert clock.spent == pytest.approx(expected)


def test_without_a_writable_cache_the_search_is_compiled_in_memory(monkeypatch):
    """A read-only install with no home directory: numba finds nowhere to cache, and the search
    must still compile and run rather than fail at import."""
    from numba.core import caching

    from sizing.binpack.knapsack_search import compiled

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])
    monkeypatch.delenv("NUMBA_CACHE_LOCATOR_CLASSES", raising=False)

    def doubled(x):
        return 2 * x

    function = compiled("int64(int64)")(doubled)
    assert function(21) == 42
    assert isinstance(function._cache, caching.NullCache)
