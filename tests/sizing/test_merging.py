"""Merging two bins onto one cheaper bin type (`sizing.binpack.merging`)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.binpack import work
from sizing.binpack.instance import build_instance
from sizing.binpack.merging import MERGE_GROUP_LIMIT, merge_bins
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import Packing, respects_limits


def _instance(bin_types, items):
    return build_instance(Problem(tuple(bin_types), tuple(items)))


SMALL = BinType("small", {"cpu": 4, "mem": 16}, 1.0)
LARGE = BinType("large", {"cpu": 8, "mem": 32}, 1.6)


def _merged(instance, packing, deadline=float("inf")):
    with work.using(work.WorkClock()):
        return merge_bins(instance, packing, deadline)


def test_two_half_empty_bins_move_onto_one_cheaper_larger_bin():
    instance = _instance(
        [SMALL, LARGE], [ItemType("a", {"cpu": 3, "mem": 12}, 1), ItemType("b", {"cpu": 4, "mem": 8}, 1)]
    )
    packing = Packing.of([((0, (1, 0)), 1), ((0, (0, 1)), 1)])
    merged = _merged(instance, packing)
    assert merged.bins == (((1, (1, 1)), 1),)
    assert merged.cost(instance) == 1.6


def test_two_copies_of_one_bin_merge_with_each_other():
    instance = _instance([SMALL, LARGE], [ItemType("a", {"cpu": 3, "mem": 12}, 3)])
    packing = Packing.of([((0, (1,)), 3)])
    merged = _merged(instance, packing)
    assert merged.bins == (((0, (1,)), 1), ((1, (2,)), 1))


def test_a_limited_type_takes_no_merged_bin_beyond_its_count():
    limited = BinType("large", {"cpu": 8, "mem": 32}, 1.6, max_count=1)
    instance = _instance([SMALL, limited], [ItemType("a", {"cpu": 3, "mem": 12}, 4)])
    packing = Packing.of([((0, (1,)), 4)])
    merged = _merged(instance, packing)
    assert merged.type_counts(2).tolist() == [2, 1]
    assert respects_limits(merged, instance)


def test_nothing_merges_where_no_pair_saves():
    # Together the two items fit only the large type, which costs more than two small bins.
    dear = BinType("large", {"cpu": 8, "mem": 32}, 2.5)
    instance = _instance(
        [SMALL, dear], [ItemType("a", {"cpu": 3, "mem": 12}, 1), ItemType("b", {"cpu": 4, "mem": 8}, 1)]
    )
    packing = Packing.of([((0, (1, 0)), 1), ((0, (0, 1)), 1)])
    assert _merged(instance, packing) == packing


def test_a_packing_of_too_many_distinct_bins_or_past_its_deadline_is_left_as_it_is():
    roomy = BinType("roomy", {"cpu": 1000, "mem": 100_000}, 1.0)
    instance = _instance(
        [roomy, LARGE], [ItemType(f"i{k}", {"cpu": 1, "mem": 1 + k}, 1) for k in range(MERGE_GROUP_LIMIT + 1)]
    )
    shapes = instance.shape_count
    assert shapes == MERGE_GROUP_LIMIT + 1

    def alone(j):
        return (0, tuple(int(k == j) for k in range(shapes)))

    # One item a bin: any two would share one bin, but there are too many distinct bins to pair.
    one_each = Packing.of((alone(j), 1) for j in range(shapes))
    assert _merged(instance, one_each) == one_each
    few = Packing.of([(alone(0), 1), (alone(1), 1)])
    assert _merged(instance, few, deadline=0.0) == few
    assert _merged(instance, few).bin_count == 1


packings = st.lists(
    st.tuples(st.integers(0, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)), min_size=1, max_size=12
)


@settings(max_examples=100, deadline=None)
@given(bins=packings, costs=st.lists(st.floats(0.5, 3.0), min_size=3, max_size=3), limit=st.integers(0, 3))
def test_merging_keeps_every_item_fits_every_bin_respects_limits_and_never_costs_more(bins, costs, limit):
    bin_types = [
        BinType("s", {"cpu": 4, "mem": 4}, costs[0]),
        BinType("m", {"cpu": 8, "mem": 8}, costs[1], max_count=limit),
        BinType("l", {"cpu": 16, "mem": 16}, costs[2]),
    ]
    items = [ItemType("x", {"cpu": 1, "mem": 2}, 1), ItemType("y", {"cpu": 2, "mem": 1}, 1)]
    instance = _instance(bin_types, items)
    groups = []
    for t, x, y, copies in bins:
        t = 0 if t == 1 and limit == 0 else t
        # Every bin starts on a type that holds it.
        while (np.array([x + 2 * y, 2 * x + y]) > instance.capacity[t]).any():
            t += 1
        groups.append(((t, (x, y)), copies))
    packing = Packing.of(groups)
    if not respects_limits(packing, instance):
        return
    merged = _merged(instance, packing)
    assert (merged.covered(2) == packing.covered(2)).all()
    for (t, counts), _ in merged.bins:
        assert (np.array(counts) @ instance.sizes <= instance.capacity[t]).all()
    assert respects_limits(merged, instance)
    assert merged.cost(instance) <= packing.cost(instance) + 1e-9


def test_a_round_at_the_distinct_bin_limit_on_a_thousand_types_stays_small_in_memory():
    """Pairs x types would be some 45,000 x 1,000 entries; the round keeps to pairs x dimensions."""
    import tracemalloc

    types = [BinType(f"t{k}", {"cpu": 8 + k, "mem": 32 + k}, 1.0 + k / 1000) for k in range(1000)]
    instance = _instance(types, [ItemType(f"i{k}", {"cpu": 1, "mem": 1 + k}, 1) for k in range(MERGE_GROUP_LIMIT)])
    shapes = instance.shape_count
    one_each = Packing.of(((0, tuple(int(k == j) for k in range(shapes))), 1) for j in range(shapes))
    tracemalloc.start()
    try:
        merged = _merged(instance, one_each, deadline=1e-9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert merged.cost(instance) < one_each.cost(instance)
    assert peak < 40 * 2**20
