"""Rounding the master LP (`sizing.binpack.dive.round_master`): down, and with several bin types up."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.binpack.colgen import column_generation
from sizing.binpack.dive import round_down, round_master, round_up
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance, build_instance
from sizing.binpack.master_lp import ColumnPool, MasterLP, MasterSolution
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import Packing, exact_packing, overfilled, respects_limits
from sizing.binpack.pricers import KnapsackPricer


def _master(problem: Problem) -> tuple[Instance, MasterLP, MasterSolution]:
    """The converged master LP of `problem`, started from its first-fit decreasing bins."""
    instance = build_instance(problem)
    pool = ColumnPool(instance.shape_count)
    start = first_fit_decreasing(instance)
    assert start is not None
    for (t, counts), _ in start.bins:
        pool.add(t, counts)
    master_lp = MasterLP(instance, pool)
    limits = instance.count_limits()
    generation = column_generation(
        instance, master_lp, KnapsackPricer(instance, milp_units=1.0), instance.demand, limits, float("inf"), 200
    )
    assert generation.master is not None
    return instance, master_lp, generation.master


def _exact(packing: Packing | None, instance: Instance) -> float:
    return float("inf") if packing is None else exact_packing(packing, instance).cost(instance)


def test_rounding_up_keeps_a_bin_that_rounding_down_leaves_to_first_fit():
    # The LP (3.5) uses half a large bin and two small ones; rounded down, first-fit decreasing
    # packs what the half left on the large type, and the packing costs 5.0. Rounded up, the
    # large bin holds its items and the small ones the rest: 4.0.
    problem = Problem(
        (BinType("large", {"x": 20, "y": 19}, 2.5), BinType("small", {"x": 7, "y": 11}, 1.5)),
        (ItemType("a", {"x": 3, "y": 4}, 4), ItemType("b", {"x": 4, "y": 3}, 3)),
    )
    instance, master_lp, master = _master(problem)
    assert _exact(round_down(instance, master_lp, master), instance) == 5.0
    assert _exact(round_up(instance, master_lp, master), instance) == 4.0
    rounded = round_master(instance, master_lp, master)
    assert rounded is not None and rounded.cost(instance) == 4.0


@st.composite
def multi_type_problems(draw):
    bin_types = tuple(
        BinType(
            f"t{k}",
            {"x": draw(st.integers(6, 20)), "y": draw(st.integers(6, 20))},
            draw(st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0])),
            draw(st.one_of(st.none(), st.integers(1, 6))),
        )
        for k in range(draw(st.integers(1, 3)))
    )
    items = tuple(
        ItemType(f"i{k}", {"x": draw(st.integers(1, 8)), "y": draw(st.integers(1, 8))}, draw(st.integers(1, 5)))
        for k in range(draw(st.integers(1, 4)))
    )
    return Problem(bin_types, items)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problem=multi_type_problems())
def test_the_rounding_kept_is_an_exact_packing_no_dearer_than_either(problem):
    instance = build_instance(problem)
    if first_fit_decreasing(instance) is None:
        return
    instance, master_lp, master = _master(problem)
    rounded = round_master(instance, master_lp, master)
    down = round_down(instance, master_lp, master)
    if rounded is None:
        assert down is None
        return
    assert (rounded.covered(instance.shape_count) == instance.demand).all()
    assert not overfilled(rounded, instance) and respects_limits(rounded, instance)
    cost = rounded.cost(instance)
    assert cost <= _exact(down, instance) + 1e-9
    if instance.type_count > 1:
        assert cost <= _exact(round_up(instance, master_lp, master), instance) + 1e-9
    else:
        assert rounded == down
