"""`solve(problem)`: the cheapest packing found within the work limit, with a lower bound.

Steps, each skipped once the packing is proven optimal (its cost reaches the bound):

1. First-fit decreasing (`sizing.binpack.ffd`): the first packing and the yardstick.
2. Cheap bounds (`sizing.binpack.bounds`): aggregate LP, bin counts, Martello-Toth L2.
   Bounds are rounded up to the next cost a packing can have (whole bins when
   all bins cost the same).
3. Bin types another unlimited type dominates are set aside (`sizing.binpack.instance`), and
   where there are few (shape, type) pairs the assignment LP bounds the cost too.
4. Column generation (`sizing.binpack.colgen`) on the pattern formulation, with smoothed
   prices (but for knapsack pricing over several bin types, which prices a shortlist of
   them per round), up to 40 % of the budget (55 % when bins hold many items); with items
   sized in one dimension, where it ends that share less than a bin short of its LP's value
   it goes on into EXTENSION_SHARE of the work left (`_nearly_converged`). Pricing, by the
   first rule that applies: complete pattern lists when bins hold few items and the lists
   stay short (`sizing.binpack.patterns`); a table over the room when items are sized in one
   dimension only (`sizing.binpack.table_knapsack`); otherwise a knapsack per bin type
   (`sizing.binpack.knapsack`; with many bin types a round prices a shortlist and bounds the
   others by their surrogate knapsack). Its Farley bound is valid at every iteration. With
   several bin types and knapsack pricing, the pool starts with the bins of each best-ranked
   type's FFD packing (`sizing.binpack.seeds`), within SEED_SHARE of the budget. Where it
   does not converge, each sized dimension's own cutting-stock LP then bounds the cost, where
   a table over the room prices it exactly (`sizing.binpack.projection`), within
   PROJECTION_SHARE of the budget (converged, the pattern LP bounds at least as well).
5. The master LP rounded down and completed by FFD (with several bin types, also rounded up,
   the cheaper kept once both hold exactly the demand, `sizing.binpack.dive.round_master`).
   Where the next step's integer program would be the one over the columns and rounding came
   within MIN_INTEGER_PROGRAM_GAIN of the master LP's value (no packing of those columns costs
   less), column generation goes on with the work that program would have taken, and the new
   master LP is rounded again: new columns can still improve the packing, that program barely
   could (and HiGHS's root work is not bounded by a node limit).
6. Side by side (`sizing.binpack.portfolio`), each on 80 % of the work left: the dive with
   limited discrepancies (`sizing.binpack.dive`; skipped when bins hold many items and there
   are many bins, where rounding loses little; with one unlimited bin type and items sized in
   one dimension, a node whose items left make an arc-flow graph of at most
   `arcflow.RESIDUAL_ARC_LIMIT` arcs, once cut from the whole graph by the reduced costs at
   the node's LP prices, is settled by that model when diving on from it fails,
   `arcflow.ResidualCompletion`);
   with one unlimited bin type and at most
   `bin_elimination.ITEM_LIMIT` items, the local search that takes bins away from the best
   packing one at a time (`sizing.binpack.bin_elimination`), which settles instances whose
   bins hold a few large items that no rounding of the LP finds; then an integer program,
   chosen by this rule:
   the arc-flow model (`sizing.binpack.arcflow`) for one unlimited bin type and items sized in
   one dimension, on the graph (built up to `arcflow.REDUCIBLE_ARC_LIMIT` arcs) less the arcs
   that no packing of one bin fewer than the best known uses at the master LP's prices
   (`arcflow.fixed_by_reduced_cost`; where the LP is tight, a few hundred to a few thousand
   arcs are left of tens of thousands), if the whole graph has at most ARC_LIMIT arcs or
   what is left at most FIXED_ARC_LIMIT; else, with complete pattern lists and a
   converged LP, the exact search over the patterns whose reduced cost allows them in a
   better packing (`sizing.binpack.integer_master.enumeration_search`); else, unless items
   are sized in one dimension or the master LP leaves it no more than MIN_INTEGER_PROGRAM_GAIN
   to gain, an integer program over the columns generated so far. A
   result that proves the optimum stops the other task.
7. What is left of the budget: the integer program over every column, the dives' included
   (not for items sized in one dimension, where HiGHS spends long on it for little).

Integer programs over columns see at most MILP_COLUMN_LIMIT of them (least reduced cost at
the master LP's prices), start from the best packing known, run without strong branching
and sub-MIP heuristics, and stop after a number of HiGHS's interrupt checks set by their work:
its root is not bounded by a node limit.

The result never costs more than first-fit decreasing. Packings are covers
while optimising; the surplus is removed at the end (`sizing.binpack.packing`).

The search is bounded by work, not time (`sizing.binpack.work`): the result depends only
on the input, on any machine, under any load and with any number of workers, unless the
optional wall-clock cap (`Problem.time_limit_seconds`, off by default) cuts a step short.
Under the cap every step keeps its share of the time (the clock maps the cap onto the work
scale), so a cap with a large work limit behaves like a time limit, the integer programs
included, and the answer comes within about a second of the cap.
HiGHS may write to file descriptor 1; callers that print machine-readable
output on stdout should redirect it around `solve` (the command line does).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sizing.binpack import bin_elimination, work
from sizing.binpack.arcflow import (
    REDUCIBLE_ARC_LIMIT,
    RESIDUAL_ARC_LIMIT,
    ArcGraph,
    ResidualCompletion,
    arc_count,
    arcflow_search,
    build_graph,
    fixed_by_reduced_cost,
)
from sizing.binpack.bounds import aggregate_bound, assignment_bound, bin_count_bound, rounded_cost_bound
from sizing.binpack.colgen import SMOOTHING, GenerationResult, Pricer, column_generation, dual_bound
from sizing.binpack.dive import dive, round_master
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance, build_instance, describe_unfit, restrict_types, undominated_types
from sizing.binpack.integer_master import enumeration_search, pool_milp
from sizing.binpack.master_lp import Column, ColumnPool, MasterLP, MasterSolution
from sizing.binpack.merging import merge_bins
from sizing.binpack.model import LowerBound, Problem, Solution
from sizing.binpack.packing import Packing, better, bin_groups, exact_packing, overfilled, respects_limits
from sizing.binpack.patterns import PatternSet, enumerate_patterns
from sizing.binpack.portfolio import run_tasks
from sizing.binpack.pricers import KnapsackPricer, PatternPricer, TablePricer, sized_dimension, table_pricing_applies
from sizing.binpack.projection import projection_bound
from sizing.binpack.seeds import seed_pool
from sizing.cores import available_cores

PATTERN_LIMIT = 1_500_000
COLUMN_GENERATION_SHARE = 0.4
MANY_ITEMS_GENERATION_SHARE = 0.55
# Share of what is left that column generation, nearly converged, may go on into.
EXTENSION_SHARE = 0.35
MANY_ITEMS_PER_BIN = 12
FEW_BINS = 50
# Of the work left after column generation: the integer program and the dive, side by side.
IMPROVEMENT_SHARE = 0.8
MAX_GENERATION_ROUNDS = 5000
# With several bin types and knapsack pricing, each type's FFD packing seeds the pool, within this share.
SEED_SHARE = 0.1
MILP_PRICING_SHARE = 0.15
# Where column generation does not converge, each dimension's own cutting-stock LP, within this share.
PROJECTION_SHARE = 0.1
# Added to every bin's cost, as a share of the cheapest bin, to rank packings of equal cost by
# their bin count: small against any real difference in cost, large against float rounding.
TIE_BREAK_COST_FRACTION = 1e-6
# Exact pricing is cheap, so dives can afford to re-price more per step.
EXACT_ROUNDS_PER_STEP = 25
KNAPSACK_ROUNDS_PER_STEP = 5
DIVE_DISCREPANCIES = 2
MAX_DIVE_DISCREPANCIES = 16
# The arc-flow model is built for one bin type and items sized in one dimension, up to this many arcs.
ARC_LIMIT = 20_000
# Or, once cut down by reduced costs, as many as the dive's completions take: HiGHS settled such
# graphs of Hard28 (500 to 1,200 arcs) in one or two seconds, but found no packing on one of
# 4,819 arcs in 20 s, where the dive's smaller residuals did.
FIXED_ARC_LIMIT = RESIDUAL_ARC_LIMIT
# An integer program over columns is run only if the master LP leaves it room to improve the
# packing by more than this share; else its work goes to more columns (and rounding again).
MIN_INTEGER_PROGRAM_GAIN = 0.005
# Columns an integer program over the pool chooses from, at most (those of least reduced cost).
MILP_COLUMN_LIMIT = 400
# Work for merging bins after the search, past its budget (a share of it): a round is cheap.
MERGE_SHARE = 0.02


@dataclass
class _Search:
    """The state of one solve: best packing and best bound so far, and the workers it may use."""

    instance: Instance
    start: float
    work_limit: float
    incumbent: Packing | None
    bound: float
    workers: int = 1

    def deadline(self, share: float) -> float:
        return self.start + share * self.work_limit

    @property
    def incumbent_cost(self) -> float:
        return float("inf") if self.incumbent is None else self.incumbent.cost(self.instance)

    def offer(self, packing: Packing | None) -> None:
        if (
            packing is not None
            and respects_limits(packing, self.instance)
            and better(packing, self.incumbent, self.instance)
        ):
            self.incumbent = packing

    def raise_bound(self, bound: float) -> None:
        self.bound = max(self.bound, rounded_cost_bound(self.instance, bound)[0])

    @property
    def proven(self) -> bool:
        return self.incumbent is not None and self.incumbent_cost <= self.bound * (1 + 1e-9) + 1e-12


def default_workers() -> int:
    """The cores this process may run on, at most 2 (the search has two tasks side by side)."""
    return available_cores(2)


def solve(problem: Problem, workers: int | None = None) -> Solution:
    """Pack every item into bins of minimal total cost (see the module docstring).

    workers: threads the search may use (default: the cores available, at most 2); within the
    work limit the result is the same whatever their number.
    Raises SizingInputError for malformed problems. An item that fits no bin type,
    or max counts too small for the items, give status "infeasible" with a reason.
    """
    start = time.perf_counter()
    instance = build_instance(problem)
    # The search's clock, for this call only: what runs after it on this thread has no cap.
    with work.using(work.WorkClock(float(problem.work_limit), problem.time_limit_seconds)) as clock:
        return _solve(problem, instance, clock, start, workers)


def _solve(problem: Problem, instance: Instance, clock: work.WorkClock, start: float, workers: int | None) -> Solution:
    if instance.shape_count == 0:
        return Solution("optimal", 0.0, 0, LowerBound(0.0, 0), (), _elapsed(start))
    fits = np.array([instance.fit_counts(t) > 0 for t in range(instance.type_count)]).reshape(
        instance.type_count, instance.shape_count
    )
    for i in range(instance.shape_count):
        if not fits[:, i].any():
            return _infeasible(describe_unfit(instance, i), start)
    cheap_bound, impossible = aggregate_bound(instance)
    if impossible is not None:
        return _infeasible(impossible, start)
    assert cheap_bound is not None  # aggregate_bound gives a bound whenever packing is possible
    search = _Search(
        instance,
        clock.origin,
        float(problem.work_limit),
        first_fit_decreasing(instance),
        0.0,
        default_workers() if workers is None else max(1, workers),
    )
    bins_bound = bin_count_bound(instance)
    search.raise_bound(max(cheap_bound, bins_bound * float(instance.cost.min())))
    if not search.proven:
        _optimise(search)
        _merge_bins(search)
    _fewer_bins_at_the_same_cost(search, bins_bound)
    if search.incumbent is None:
        return _infeasible(
            "the max counts of the bin types may be too small: no packing of every item was found in the work limit",
            start,
        )
    return _solution(search, bins_bound, start, clock)


@dataclass(frozen=True)
class _TaskResult:
    packing: Packing | None
    bound: float


def _optimise(search: _Search) -> None:
    types = undominated_types(search.instance)
    instance = restrict_types(search.instance, types)
    # Dominated types never make a packing cheaper, so a bound without them holds for all.
    assigned = assignment_bound(instance)
    if assigned is not None:
        search.raise_bound(assigned)
        if search.proven:
            return

    def restored(packing: Packing | None) -> Packing | None:
        return None if packing is None else Packing.of(((types[t], counts), m) for (t, counts), m in packing.bins)

    def offer(packing: Packing | None) -> None:
        search.offer(restored(packing))

    position = {t: k for k, t in enumerate(types)}

    def best_known() -> Packing | None:
        """The incumbent in this instance's type indices; None when it uses a type set aside."""
        incumbent = search.incumbent
        if incumbent is None or any(t not in position for (t, _), _ in incumbent.bins):
            return None
        return Packing.of(((position[t], counts), m) for (t, counts), m in incumbent.bins)

    many_items = instance.typical_items_per_bin() > MANY_ITEMS_PER_BIN
    generation_share = MANY_ITEMS_GENERATION_SHARE if many_items else COLUMN_GENERATION_SHARE
    # Items sized in one dimension: exact pricing by a table, the arc-flow model where it is small,
    # and no integer program over the columns (HiGHS spends long on it and rarely improves).
    one_dimension = table_pricing_applies(instance)
    # Listing may take column generation's whole share: where the lists complete, pricing by them
    # is exact and fast, and column generation gets further in what is left than a knapsack
    # pricer in all of it. Under the default budget the pattern limit ends a listing first.
    pattern_sets = None if many_items else _all_patterns(instance, search.deadline(generation_share))
    pricer: Pricer
    if pattern_sets is not None:
        pricer = PatternPricer(instance, pattern_sets)
    elif one_dimension:
        pricer = TablePricer(instance)
    else:
        pricer = KnapsackPricer(instance, milp_units=MILP_PRICING_SHARE * search.work_limit)
    exact_pricing = not isinstance(pricer, KnapsackPricer)
    pool = ColumnPool(instance.shape_count)
    if search.incumbent is not None:
        for (t, counts), _ in search.incumbent.bins:
            if t in position:
                pool.add(position[t], counts)
    if instance.type_count > 1 and not exact_pricing:
        seed_pool(pool, instance, search.deadline(SEED_SHARE))
    limits = instance.count_limits()
    master_lp = MasterLP(instance, pool)

    def generate(share: float) -> GenerationResult:
        """Columns until `share` of the budget, then the master LP rounded down."""
        found = column_generation(
            instance,
            master_lp,
            pricer,
            instance.demand,
            limits,
            search.deadline(share),
            MAX_GENERATION_ROUNDS,
            target=search.incumbent_cost,
            # Smoothing needs pricing that rarely misses: exact, or a knapsack per round for the one type.
            smoothing=SMOOTHING if exact_pricing or instance.type_count == 1 else 0.0,
        )
        search.raise_bound(found.bound)
        if found.master is not None:
            offer(round_master(instance, master_lp, found.master))
        return found

    generation = generate(generation_share)
    if search.proven:
        return
    if _nearly_converged(instance, generation, exact_pricing, one_dimension):
        generation = generate(generation_share + EXTENSION_SHARE * (1 - generation_share))
        if search.proven:
            return
    if not generation.converged:
        # Its bound falls short of the pattern LP's value, which no dimension's own LP passes;
        # those LPs, priced exactly by a table, converge where it did not.
        projection_end = work.now() + PROJECTION_SHARE * search.work_limit
        search.raise_bound(projection_bound(instance, projection_end, search.bound, search.incumbent_cost))
        if search.proven:
            return
    # The arc-flow graph is the integer program where it is small; the dive's completions cut theirs from it.
    found_graph = _arc_graph(search, instance, generation.master)
    if search.proven:
        return
    whole_graph, graph = None, None
    if found_graph is not None:
        whole_graph, whole_arcs = found_graph
        if whole_graph.arc_count <= FIXED_ARC_LIMIT or whole_arcs <= ARC_LIMIT:
            graph = whole_graph
    if (
        graph is None
        and pattern_sets is None
        and not one_dimension
        and not generation.converged
        and not _integer_program_pays(search, generation.master)
    ):
        # The integer program over these columns could gain little: more columns can gain more.
        generation = generate(generation_share + IMPROVEMENT_SHARE * (1 - generation_share))
        if search.proven:
            return

    # The dive and the integer program, side by side on equal budgets. Each sees the packing
    # and bound known now; a result that proves the optimum ends the search.
    known_cost, known_bound = search.incumbent_cost, search.bound
    known_packing = best_known()
    root_columns = _promising_columns(instance, pool, generation.master)

    def proves(result: _TaskResult) -> bool:
        cost = known_cost
        if result.packing is not None:
            cost = min(cost, result.packing.cost(instance))
        return cost <= max(known_bound, result.bound) * (1 + 1e-9) + 1e-12

    def integer_program() -> _TaskResult:
        deadline = work.clock().end
        if graph is not None:
            return _arcflow_task(instance, graph, known_cost, known_bound, deadline)
        if pattern_sets is not None and generation.converged and generation.master is not None:
            return _enumeration_task(instance, pattern_sets, pricer, generation.master.prices, known_cost, deadline)
        if one_dimension or not _integer_program_pays(search, generation.master):
            return _TaskResult(None, float("-inf"))
        outcome = pool_milp(instance, root_columns, work.clock().left(deadline), known_packing)
        return _TaskResult(outcome.packing, float("-inf"))

    # The dives' own LP, without exchange columns: its solutions hold the items bins really take,
    # which is what fixing columns needs.
    dive_lp = MasterLP(instance, pool, exchanges=False)

    def dive_task() -> _TaskResult:
        rounds = EXACT_ROUNDS_PER_STEP if exact_pricing else KNAPSACK_ROUNDS_PER_STEP
        completion = _residual_completion(instance, whole_graph)
        best, best_cost = None, known_cost
        # A search that ends before its budget starts again with twice the discrepancies.
        discrepancies = DIVE_DISCREPANCIES
        while work.now() < work.clock().end and best_cost > known_bound * (1 + 1e-9) + 1e-12:
            found = dive(
                instance, dive_lp, pricer, best_cost, work.clock().end, rounds, discrepancies, known_bound, completion
            )
            if found is not None:
                best, best_cost = found, found.cost(instance)
            elif discrepancies >= MAX_DIVE_DISCREPANCIES:
                break
            discrepancies = min(2 * discrepancies, MAX_DIVE_DISCREPANCIES)
        return _TaskResult(best, float("-inf"))

    def elimination_task() -> _TaskResult:
        assert known_packing is not None  # the task is only set when a packing is known
        lower = round(rounded_cost_bound(instance, known_bound)[0] / float(instance.cost[0]))
        return _TaskResult(
            bin_elimination.eliminate_bins(instance, known_packing, lower, work.clock().end), float("-inf")
        )

    # The dive first: when it meets the bound (the common case) the integer program is stopped.
    tasks: list[Callable[[], _TaskResult]] = []
    few_bins = generation.master is None or float(generation.master.x.sum()) < FEW_BINS
    if not many_items or few_bins:
        tasks.append(dive_task)
    if known_packing is not None and bin_elimination.applies(instance):
        tasks.append(elimination_task)
    if graph is not None or pattern_sets is not None or not one_dimension:
        tasks.append(integer_program)
    left = search.deadline(1.0) - work.now()
    # With items sized in one dimension no integer program follows: the tasks take all that is left.
    share = 1.0 if one_dimension else IMPROVEMENT_SHARE
    if left > 0:
        improvement_end = work.now() + share * left
        for result in run_tasks(
            tasks,
            share * left,
            work.seconds_until(improvement_end),
            search.workers,
            proves,
        ):
            offer(result.packing)
            search.raise_bound(result.bound)
    if search.proven:
        return
    # What is left goes to the integer program over every column found, the dive's included.
    units = search.deadline(1.0) - work.now()
    if units <= 0 or one_dimension:
        return
    final_columns = _promising_columns(instance, pool, generation.master)
    if final_columns != root_columns:
        offer(pool_milp(instance, final_columns, units, best_known()).packing)


def _promising_columns(instance: Instance, pool: ColumnPool, master: MasterSolution | None) -> list[Column]:
    """The columns an integer program chooses from: the whole pool when it is small, else the
    MILP_COLUMN_LIMIT columns of least reduced cost at the master LP's prices (the columns the
    LP uses have none), in pool order. HiGHS's root work grows with the columns and is not
    bounded by its node limit; columns far from the LP's prices rarely make a better packing."""
    if master is None or len(pool) <= MILP_COLUMN_LIMIT:
        return list(pool.columns)
    types = pool.types()
    reduced = instance.cost[types] + master.limit_prices[types] - master.prices @ pool.matrix()
    order = np.lexsort((np.arange(len(pool)), np.round(reduced, 9)))
    chosen = np.sort(order[:MILP_COLUMN_LIMIT])
    return [pool.columns[j] for j in chosen.tolist()]


def _integer_program_pays(search: _Search, master: MasterSolution | None) -> bool:
    """Whether an integer program over the master's columns could improve the packing by more
    than MIN_INTEGER_PROGRAM_GAIN: none of its packings costs less than the master LP's value."""
    if master is None or master.uncovered > 1e-9:
        return True
    return search.incumbent_cost > master.value * (1 + MIN_INTEGER_PROGRAM_GAIN) + 1e-12


def _one_dimension_bin(instance: Instance) -> tuple[np.ndarray, int] | None:
    """The items' sizes and the bin's room in the one sized dimension, where the arc-flow model
    applies: one unlimited bin type (whole bins as the cost step), items sized in one dimension,
    and a room small enough for a table over it (the graph's arrays are as long)."""
    dimension = sized_dimension(instance)
    if (
        instance.type_count != 1
        or dimension is None
        or instance.max_count[0] is not None
        or not table_pricing_applies(instance)
    ):
        return None
    return instance.sizes[:, dimension], int(instance.capacity[0, dimension])


def _arc_graph(search: _Search, instance: Instance, master: MasterSolution | None) -> tuple[ArcGraph, int] | None:
    """The arc-flow graph of the whole instance where the model applies and it has at most
    REDUCIBLE_ARC_LIMIT arcs, less the arcs that no packing of one bin fewer than the best known
    uses at the master LP's prices (`arcflow.fixed_by_reduced_cost`, whose Farley bound raises
    the search's), with the arcs of the whole graph (as `arc_count` counts them); None where
    the model does not apply, or the graph is larger."""
    found = _one_dimension_bin(instance)
    if found is None:
        return None
    sizes, room = found
    whole_arcs = arc_count(sizes, instance.demand, room, REDUCIBLE_ARC_LIMIT)
    if whole_arcs is None:
        return None
    graph = build_graph(sizes, instance.demand, room)
    if master is None or master.uncovered > 1e-9 or search.incumbent is None:
        return graph, whole_arcs
    unit = float(instance.cost[0])
    target = search.incumbent.bin_count - 1
    fixed = fixed_by_reduced_cost(graph, sizes, instance.demand, master.prices / unit, target)
    search.raise_bound(fixed.bound * unit)
    return fixed.graph, whole_arcs


def _nearly_converged(
    instance: Instance, generation: GenerationResult, exact_pricing: bool, one_dimension: bool
) -> bool:
    """Whether column generation, priced exactly on items sized in one dimension, stopped at its
    share with its bound less than a bin below the LP's value. The rounds left to converge
    are then few (on Hard28, a few more than the default budget's share allows), and a
    converged LP's prices are what the arc-flow cut and the dive's completions need. In several
    dimensions the LP tails off over many more rounds (vector Triplet instances spent the cap's
    time on them and ended bins above), so the solver extends only one-dimensional ones."""
    master = generation.master
    return (
        exact_pricing
        and one_dimension
        and not generation.converged
        and master is not None
        and master.uncovered <= 1e-9
        and master.value - generation.bound < float(instance.cost.min())
    )


def _residual_completion(instance: Instance, graph: ArcGraph | None) -> ResidualCompletion | None:
    """The dive's exact completion, where the arc-flow model applies; `graph`: the whole
    instance's, whose arcs every residual graph is cut from."""
    found = _one_dimension_bin(instance)
    return None if found is None else ResidualCompletion(*found, float(instance.cost[0]), whole=graph)


def _arcflow_task(
    instance: Instance, graph: ArcGraph, known_cost: float, known_bound: float, deadline: float
) -> _TaskResult:
    """Packings of one bin fewer than the best known, while the arc-flow model finds them;
    the bound it proves when it shows none exists."""
    unit = float(instance.cost[0])
    best_bins = round(known_cost / unit)
    lower = round(rounded_cost_bound(instance, known_bound)[0] / unit)
    best: Packing | None = None
    bound = lower
    while best_bins - 1 >= bound:
        outcome = arcflow_search(
            graph, 0, instance.shape_count, instance.demand, best_bins - 1, bound, work.clock().left(deadline), deadline
        )
        bound = max(bound, outcome.bins_bound)
        if outcome.packing is None:
            break
        best, best_bins = outcome.packing, outcome.packing.bin_count
    return _TaskResult(best, bound * unit)


def _enumeration_task(
    instance: Instance,
    pattern_sets: list[PatternSet],
    pricer: Pricer,
    prices: np.ndarray,
    known_cost: float,
    deadline: float,
) -> _TaskResult:
    """The exact search over every pattern whose reduced cost allows it in a better packing."""
    limits = instance.count_limits()
    best_values = pricer.price(
        prices, np.zeros(instance.type_count), instance.demand, limits != 0, deadline
    ).best_values
    exact_bound = dual_bound(instance, instance.demand, limits, prices, best_values)
    outcome = enumeration_search(instance, pattern_sets, prices, best_values, exact_bound, known_cost, deadline)
    return _TaskResult(outcome.packing, outcome.bound)


def _merge_bins(search: _Search) -> None:
    """The best packing with pairs of its bins merged onto one cheaper bin type
    (`sizing.binpack.merging`), with several bin types, in MERGE_SHARE of the work after the
    search: what the rounding and first-fit decreasing leave on dearer types than their items
    need, no integer program over the columns takes back (on a 1,029-pod trace fleet of 967
    types, 21,377 USD/hour merged to 21,185 against an LP of 21,036)."""
    if search.incumbent is None or search.proven or search.instance.type_count < 2:
        return
    # From where the search ended, which may be past its budget (an integer program overruns).
    deadline = max(work.now(), search.deadline(1.0)) + MERGE_SHARE * search.work_limit
    search.offer(merge_bins(search.instance, search.incumbent, deadline))


def _fewer_bins_at_the_same_cost(search: _Search, bins_bound: int) -> None:
    """Among packings of the proven least cost, prefer the one with the fewest bins.

    A search stops once its cost meets the bound, which says nothing of the bin count when
    several packings share that cost. Solving again with every bin a little dearer ranks
    equal-cost packings by their bins; the answer is kept only if its true cost is no higher.
    """
    if search.incumbent is None or not search.proven or search.incumbent.bin_count <= bins_bound:
        return
    remaining = search.work_limit - (work.now() - search.start)
    if remaining <= 0:
        return
    instance = search.instance
    per_bin = TIE_BREAK_COST_FRACTION * float(instance.cost.min())
    dearer = replace(instance, cost=instance.cost + per_bin)
    tie_break = _Search(dearer, work.now(), remaining, search.incumbent, 0.0, search.workers)
    cheap_bound, _ = aggregate_bound(dearer)
    assert cheap_bound is not None  # the same items and limits as the search that found a packing
    tie_break.raise_bound(max(cheap_bound, bins_bound * float(dearer.cost.min())))
    if not tie_break.proven:
        _optimise(tie_break)
    search.offer(tie_break.incumbent)


def _all_patterns(instance: Instance, deadline: float) -> list[PatternSet] | None:
    """Complete pattern lists of every bin type, or None when together they pass the limit
    or the work clock passes `deadline` first."""
    sets: list[PatternSet] = []
    left = PATTERN_LIMIT
    for t in range(instance.type_count):
        patterns = enumerate_patterns(instance.capacity[t], instance.sizes, instance.demand, left, deadline)
        if patterns is None:
            return None
        sets.append(patterns)
        left -= len(patterns)
    return sets


def _solution(search: _Search, bins_bound: int, start: float, clock: work.WorkClock) -> Solution:
    instance = search.instance
    assert search.incumbent is not None  # callers return an infeasible solution first
    packing = exact_packing(search.incumbent, instance)
    if (
        overfilled(packing, instance)
        or (packing.covered(instance.shape_count) != instance.demand).any()
        or not respects_limits(packing, instance)
    ):
        raise RuntimeError("internal error: the solver produced an invalid packing")
    cost = packing.cost(instance)
    bound = search.bound
    if bound > cost * (1 + 1e-9) + 1e-12:
        raise RuntimeError(f"internal error: lower bound {bound} above the cost {cost} of a valid packing")
    bound = min(bound, cost)
    _, rounded_bins = rounded_cost_bound(instance, bound)
    bins = max(bins_bound, rounded_bins or 0)
    if bins > packing.bin_count:
        raise RuntimeError(f"internal error: bin bound {bins} above the {packing.bin_count} bins of a valid packing")
    status = "optimal" if cost <= bound * (1 + 1e-9) + 1e-12 else "feasible"
    return Solution(
        status=status,
        cost=cost,
        bin_count=packing.bin_count,
        lower_bound=LowerBound(cost=bound, bins=bins),
        bins=bin_groups(packing, instance),
        seconds=_elapsed(start),
        work=round(clock.spent, 3),
    )


def _infeasible(reason: str, start: float) -> Solution:
    return Solution("infeasible", 0.0, 0, LowerBound(0.0, 0), (), _elapsed(start), reason)


def _elapsed(start: float) -> float:
    return time.perf_counter() - start
