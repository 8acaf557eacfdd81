"""Lower bounds from one dimension at a time (`sizing.binpack.projection`)."""

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.binpack import work
from sizing.binpack.bounds import aggregate_bound, bin_count_bound
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.projection import project, projection_bound
from sizing.binpack.solver import solve

DIMENSIONS = ("cpu", "memory")
M5_LARGE = BinType("m5.large", {"cpu": 1655, "memory": 6711, "pods": 24}, 0.096, None)

# 1,262 pods of 40 shapes (millicores, MiB, count) on m5.large: each node's cpu is all but used
# up by a few large pods while its memory has room, as on trace-shaped fleets.
CPU_BOUND_SHAPES = [
    (62, 134, 6), (62, 186, 6), (62, 219, 53), (62, 270, 41), (125, 273, 37), (125, 435, 45),
    (125, 442, 48), (125, 605, 44), (197, 412, 51), (197, 496, 42), (197, 806, 18), (197, 828, 28),
    (250, 464, 52), (250, 566, 43), (375, 1240, 24), (375, 1332, 26), (375, 1425, 49), (500, 908, 23),
    (500, 1449, 34), (500, 1987, 2), (706, 1453, 29), (706, 1739, 52), (706, 2032, 51), (706, 3010, 47),
    (706, 3360, 39), (744, 1412, 44), (744, 1878, 42), (744, 3351, 13), (750, 1746, 6), (750, 2827, 17),
    (750, 3085, 11), (1000, 2012, 29), (1000, 3682, 57), (1169, 2595, 55), (1169, 3038, 18),
    (1169, 3264, 4), (1169, 4331, 13), (1169, 4857, 26), (1169, 5724, 36), (1169, 5736, 1),
]  # fmt: skip


def _pods(shapes):
    return tuple(ItemType(f"pod-{c}m-{m}Mi", {"cpu": c, "memory": m, "pods": 1}, n) for c, m, n in shapes)


def _bound(problem: Problem, deadline: float = 10**9) -> float:
    with work.using(work.WorkClock(10**9)):
        return projection_bound(build_instance(problem), deadline)


def test_a_projection_merges_equal_sizes_and_drops_items_without_size():
    problem = Problem(
        (BinType("b", {"cpu": 10, "memory": 100}, 1.0, 3),),
        (
            ItemType("a", {"cpu": 6, "memory": 10}, 2),
            ItemType("b", {"cpu": 6, "memory": 30}, 1),
            ItemType("c", {"cpu": 0, "memory": 50}, 4),
            ItemType("d", {"cpu": 3, "memory": 50}, 1),
        ),
    )
    instance = build_instance(problem)
    cpu = project(instance, instance.dimensions.index("cpu"))
    assert cpu is not None
    assert cpu.dimensions == ("cpu",)
    assert cpu.sizes[:, 0].tolist() == [3, 6] and cpu.demand.tolist() == [1, 3]
    assert cpu.capacity[:, 0].tolist() == [10] and cpu.max_count == (3,)
    memory = project(instance, instance.dimensions.index("memory"))
    assert memory is not None and memory.sizes[:, 0].tolist() == [10, 30, 50] and memory.demand.tolist() == [2, 1, 5]


def test_no_projection_where_one_size_is_left_or_no_bin_limits_the_dimension():
    one_size = build_instance(
        Problem((BinType("b", {"cpu": 10, "pods": 4}, 1.0, None),), _pods([(3, 0, 2), (4, 0, 2)]))
    )
    assert project(one_size, one_size.dimensions.index("pods")) is None
    unlimited = build_instance(
        Problem(
            (BinType("b", {"cpu": 10}, 1.0, None),),
            (ItemType("x", {"cpu": 3, "memory": 5}, 2), ItemType("y", {"cpu": 4, "memory": 7}, 2)),
        )
    )
    assert project(unlimited, unlimited.dimensions.index("memory")) is None


def test_the_cpu_projection_sees_the_cpu_no_pod_can_use():
    # Two 6-core pods never share a 10-core node, nor a 6 and a 5: five nodes, where the
    # aggregate LP counts 3.3 nodes of cpu and the largest pods alone ask for three. (With two
    # node types, Martello and Toth's bound for one type does not apply either.)
    problem = Problem(
        (BinType("node", {"cpu": 10, "memory": 100}, 1.0, None), BinType("less", {"cpu": 10, "memory": 50}, 1.0, None)),
        (ItemType("six", {"cpu": 6, "memory": 1}, 3), ItemType("five", {"cpu": 5, "memory": 2}, 3)),
    )
    instance = build_instance(problem)
    aggregate, _ = aggregate_bound(instance)
    assert aggregate is not None and math.ceil(aggregate - 1e-6) == 4 and bin_count_bound(instance) == 4
    assert math.ceil(_bound(problem) - 1e-6) == 5
    assert solve(problem).cost == 5.0


def test_an_exhausted_budget_or_one_sized_dimension_gives_no_bound():
    problem = Problem((M5_LARGE,), _pods(CPU_BOUND_SHAPES))
    with work.using(work.WorkClock(10**9)):
        assert projection_bound(build_instance(problem), deadline=0.0) == float("-inf")
    one_dimension = Problem((BinType("b", {"cpu": 10}, 1.0, None),), (ItemType("x", {"cpu": 3}, 5),))
    assert _bound(one_dimension) == float("-inf")


def test_a_projection_that_cannot_beat_the_known_bound_is_not_solved():
    problem = Problem((M5_LARGE,), _pods(CPU_BOUND_SHAPES))
    instance = build_instance(problem)
    with work.using(work.WorkClock(10**9)) as clock:
        assert projection_bound(instance, 10**9, known=10**6) == float("-inf")
        assert clock.spent == 0


def test_the_solver_bounds_a_trace_like_fleet_by_its_cpu_projection():
    problem = Problem((M5_LARGE,), _pods(CPU_BOUND_SHAPES), work_limit=100)
    instance = build_instance(problem)
    aggregate, _ = aggregate_bound(instance)
    assert aggregate is not None
    projected = _bound(problem)
    projected_nodes = math.ceil(projected / 0.096 - 1e-6)
    assert projected_nodes > math.ceil(aggregate / 0.096 - 1e-6) + 5
    solution = solve(problem)
    # Column generation over all three dimensions does not get there within 100 units.
    assert solution.lower_bound.bins >= projected_nodes
    assert solution.bin_count - solution.lower_bound.bins <= 0.01 * solution.bin_count


@st.composite
def small_problems(draw):
    bin_types = []
    for t in range(draw(st.integers(1, 3))):
        capacity = {dim: draw(st.integers(4, 12)) for dim in DIMENSIONS}
        cost = draw(st.sampled_from([1.0, 1.5, 2.0, 3.0]))
        max_count = draw(st.one_of(st.none(), st.integers(1, 4)))
        bin_types.append(BinType(f"b{t}", capacity, cost, max_count))
    items = []
    for i in range(draw(st.integers(1, 3))):
        size = {dim: draw(st.integers(0, 8)) for dim in DIMENSIONS}
        items.append(ItemType(f"i{i}", size, draw(st.integers(1, 2))))
    return Problem(tuple(bin_types), tuple(items))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=small_problems())
def test_a_projection_bound_never_passes_the_optimum(problem, brute_force_optimum):
    best = brute_force_optimum(problem)
    if best is None:
        return
    assert _bound(problem) <= best[0] + 1e-9


def test_projections_are_deterministic():
    problem = Problem((M5_LARGE,), _pods(CPU_BOUND_SHAPES))
    first, second = _bound(problem), _bound(problem)
    assert first == second and np.isfinite(first)
