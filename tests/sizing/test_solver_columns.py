"""Where the solver's columns come from and which ones its integer programs see: the seeds of
column generation, the aggregate LP's ranking of bin types, the shortlist of columns for an
integer program, its start from the best packing, and the deterministic stop of HiGHS."""

import numpy as np
import pytest

from sizing.binpack import work
from sizing.binpack.bounds import aggregate_bound, aggregate_reduced_costs, assignment_bound
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.highs_milp import solve_milp
from sizing.binpack.instance import build_instance, fit_counts
from sizing.binpack.integer_master import pool_milp
from sizing.binpack.master_lp import ColumnPool, MasterLP
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.seeds import SEED_BINS, _sample, seed_pool
from sizing.binpack.solver import MILP_COLUMN_LIMIT, _promising_columns, solve


def _fleet(pods_per_shape=(20, 300), shapes=40, seed=5):
    """Many pod sizes on twelve node types of three families and four sizes (cpu in millicores,
    memory in MiB, pod slots; USD/hour)."""
    rng = np.random.default_rng(seed)
    bins = []
    for family, (memory_per_core, price_per_core) in {
        "c": (1900, 0.0425),
        "m": (3800, 0.048),
        "r": (7700, 0.063),
    }.items():
        for cores in (2, 4, 8, 16):
            bins.append(
                BinType(
                    f"{family}.{cores}",
                    {
                        "cpu": cores * 1000 - 100,
                        "memory": cores * memory_per_core - 500,
                        "pods": 29 if cores == 2 else 58,
                    },
                    round(cores * price_per_core, 4),
                )
            )
    items = [
        ItemType(
            f"pod{i}",
            {"cpu": int(rng.integers(100, 3000)), "memory": int(rng.integers(128, 12000)), "pods": 1},
            int(rng.integers(*pods_per_shape)),
        )
        for i in range(shapes)
    ]
    return Problem(tuple(bins), tuple(items), None, 2000)


def test_types_the_aggregate_lp_uses_have_no_reduced_cost():
    instance = build_instance(_fleet())
    reduced = aggregate_reduced_costs(instance)
    assert reduced is not None and reduced.shape == (instance.type_count,)
    assert (reduced >= 0).all()
    # At least one type carries the LP, and none is priced above its cost.
    assert (reduced <= 1e-9).any() and (reduced <= 1.0 + 1e-9).all()
    bound, _ = aggregate_bound(instance)
    assert bound is not None and bound > 0


def test_seeds_are_bins_of_the_best_ranked_types_that_fit():
    instance = build_instance(_fleet())
    pool = ColumnPool(instance.shape_count)
    with work.using(work.WorkClock(10**9, None)):
        added = seed_pool(pool, instance, float("inf"), type_count=3)
        spent = work.now()
    assert added == len(pool) > 0
    assert spent > 0, "seeding is charged as work"
    reduced = aggregate_reduced_costs(instance)
    best = sorted(range(instance.type_count), key=lambda t: (reduced[t], t))[:3]
    assert {t for t, _ in pool.columns} <= set(best)
    for t, counts in pool.columns:
        load = np.asarray(counts) @ instance.sizes
        assert (load <= instance.capacity[t]).all(), f"a seed overfills a bin of type {t}"
        assert (np.asarray(counts) <= instance.demand).all()


def test_seeding_stops_at_its_deadline():
    instance = build_instance(_fleet())
    pool = ColumnPool(instance.shape_count)
    with work.using(work.WorkClock(10**9, None)):
        assert seed_pool(pool, instance, deadline=-1.0) == 0
    assert len(pool) == 0


def test_types_with_a_max_count_are_not_seeded():
    problem = _fleet()
    limited = tuple(BinType(b.name, b.capacity, b.cost, max_count=3) for b in problem.bin_types)
    instance = build_instance(Problem(limited, problem.items, None, 2000))
    pool = ColumnPool(instance.shape_count)
    with work.using(work.WorkClock(10**9, None)):
        assert seed_pool(pool, instance, float("inf")) == 0


def test_a_seed_sample_keeps_every_fitting_shape_and_about_the_bins_asked_for():
    instance = build_instance(_fleet(pods_per_shape=(2000, 5000)))
    t = int(np.argmin(instance.capacity[:, 0]))
    fits = fit_counts(instance.capacity[t], instance.sizes, instance.demand) > 0
    sample = _sample(instance, t)
    assert ((sample > 0) == fits).all()
    assert (sample <= instance.demand).all()
    totals = sample @ instance.sizes
    bins = max(totals[d] / instance.capacity[t, d] for d in range(len(totals)) if instance.capacity[t, d] > 0)
    # Rounding each shape up adds at most one item per shape.
    assert bins <= SEED_BINS + fits.sum()


def test_an_integer_program_sees_the_columns_of_least_reduced_cost_the_lps_own_among_them():
    instance = build_instance(_fleet())
    pool = ColumnPool(instance.shape_count)
    with work.using(work.WorkClock(10**9, None)):
        seed_pool(pool, instance, float("inf"), type_count=instance.type_count)
        for t in range(instance.type_count):
            for i in range(instance.shape_count):
                counts = np.zeros(instance.shape_count, dtype=np.int64)
                counts[i] = fit_counts(instance.capacity[t], instance.sizes[i : i + 1], instance.demand[i : i + 1])[0]
                pool.add(t, counts.tolist())
        assert len(pool) > MILP_COLUMN_LIMIT
        limits = np.full(instance.type_count, -1, dtype=np.int64)
        master = MasterLP(instance, pool).solve(instance.demand, limits)
    assert master is not None
    chosen = _promising_columns(instance, pool, master)
    assert len(chosen) == MILP_COLUMN_LIMIT
    index = {column: j for j, column in enumerate(pool.columns)}
    positions = [index[c] for c in chosen]
    assert positions == sorted(positions), "pool order is kept"
    used = {pool.columns[j] for j in np.nonzero(master.x[: len(pool)] > 1e-9)[0]}
    assert used <= set(chosen)
    types = pool.types()
    reduced = instance.cost[types] + master.limit_prices[types] - master.prices @ pool.matrix()
    left_out = np.setdiff1d(np.arange(len(pool)), positions)
    assert reduced[left_out].min() >= reduced[positions].max() - 1e-9
    assert _promising_columns(instance, pool, None) == pool.columns


def test_the_integer_program_over_columns_starts_from_the_best_packing_and_never_returns_worse():
    instance = build_instance(_fleet())
    start = first_fit_decreasing(instance)
    assert start is not None
    # Columns that cannot cover the demand alone: the start's bins must join them.
    one_column = [start.bins[0][0]]
    with work.using(work.WorkClock(10**9, None)):
        without = pool_milp(instance, one_column, 500)
        with_start = pool_milp(instance, one_column, 500, start)
    assert without.packing is None
    assert with_start.packing is not None
    assert with_start.packing.cost(instance) <= start.cost(instance) + 1e-9
    assert (with_start.packing.covered(instance.shape_count) >= instance.demand).all()


def _covering_program(instance, columns):
    types = np.array([t for t, _ in columns])
    matrix = np.array([c for _, c in columns]).T
    return (
        instance.cost[types],
        matrix,
        instance.demand.astype(float),
        np.full(instance.shape_count, np.inf),
        np.zeros(len(columns)),
        np.full(len(columns), np.inf),
    )


def test_highs_stops_at_its_interrupt_check_limit_the_same_way_on_every_run():
    instance = build_instance(_fleet(shapes=60))
    pool = ColumnPool(instance.shape_count)
    with work.using(work.WorkClock(10**9, None)):
        seed_pool(pool, instance, float("inf"), type_count=instance.type_count)
        program = _covering_program(instance, pool.columns)
        free = solve_milp(*program, node_limit=5)
        runs = [solve_milp(*program, node_limit=5, callback_limit=3) for _ in range(2)]
    assert free.callbacks > 4, "the instance must be long enough to be cut short"
    assert all(run.callbacks == 4 for run in runs), "stopped at the first check past the limit"
    first, second = runs
    assert (first.nodes, first.iterations) == (second.nodes, second.iterations)
    assert (first.x is None) == (second.x is None)
    if first.x is not None:
        assert np.array_equal(first.x, second.x)
    assert first.work(0.0, 0.0) >= 4 * work.MILP_CALLBACK_UNITS


@pytest.mark.parametrize("workers", [1, 2])
def test_many_bin_types_the_solver_stays_valid_and_no_worse_than_ffd(workers, solution_checker):
    problem = _fleet()
    solution = solve(problem, workers=workers)
    solution_checker(problem, solution)
    instance = build_instance(problem)
    assert solution.cost <= first_fit_decreasing(instance).cost(instance) + 1e-9


def test_many_bin_types_the_answer_is_the_same_with_one_or_two_workers():
    problem = _fleet()
    assert solve(problem, workers=1).bins == solve(problem, workers=2).bins


def test_large_pods_make_the_assignment_bound_stronger_than_the_aggregate_one():
    """Two kinds of pod, each over half a node's cpu: no node holds two of them. The aggregate LP
    pools cpu (and bounds each kind alone), the assignment LP counts one large pod per node."""
    bins = (BinType("node", {"cpu": 16000, "memory": 64000, "pods": 50}, 1.0),)
    items = (
        ItemType("a", {"cpu": 9000, "memory": 1000, "pods": 1}, 10),
        ItemType("b", {"cpu": 8500, "memory": 2000, "pods": 1}, 10),
    )
    problem = Problem(bins, items, None, 2000)
    instance = build_instance(problem)
    aggregate, _ = aggregate_bound(instance)
    with work.using(work.WorkClock(10**9, None)):
        assigned = assignment_bound(instance)
        spent = work.now()
    assert assigned == pytest.approx(20.0, rel=1e-6)
    assert aggregate is not None and aggregate < 12.0
    assert spent > 0
    with work.using(work.WorkClock(10**9, None)):
        assert assignment_bound(instance, pair_limit=1) is None
    solution = solve(problem)
    assert solution.status == "optimal" and solution.cost == pytest.approx(20.0)
