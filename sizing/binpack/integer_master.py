"""Integer programs over columns, solved with HiGHS (`sizing.binpack.highs_milp`).

`covering_milp` solves min sum cost x subject to covering the demand and the
max counts, over a given set of columns; over the columns found by column
generation this is a heuristic (price and branch).

`enumeration_search` makes it exact when every pattern is known: with a dual
solution scaled to be feasible (see `sizing.binpack.colgen`), every packing of cost at
most T uses only columns whose reduced cost is at most T - bound, because

    cost(x) >= dual bound + sum_j reduced_cost_j x_j   and   reduced costs >= 0.

So an integer program over those few columns either finds a packing of cost at
most T or proves there is none. With one common bin cost, T steps up one bin
at a time from the bound; otherwise T is just below the incumbent's cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix, hstack, vstack

from sizing.binpack import work
from sizing.binpack.highs_milp import solve_milp
from sizing.binpack.instance import Instance
from sizing.binpack.master_lp import Column
from sizing.binpack.packing import Packing
from sizing.binpack.patterns import PatternSet

MAX_EXACT_COLUMNS = 60_000
MAX_TARGET_STEPS = 20


@dataclass(frozen=True)
class MilpOutcome:
    """packing: best found (None if none); proven: HiGHS proved it optimal over the columns;
    infeasible: HiGHS proved no packing exists over the columns; dual_bound: lower bound over the columns."""

    packing: Packing | None
    proven: bool
    infeasible: bool
    dual_bound: float


def covering_milp(
    instance: Instance,
    types: np.ndarray,
    matrix: Any,
    demand: np.ndarray,
    units: float,
    relative_gap: float = 1e-6,
    start: np.ndarray | None = None,
    short_root: bool = False,
) -> MilpOutcome:
    """min sum_j cost_t(j) x_j, sum_j a_ij x_j >= demand_i, per limited type sum x_j <= max count, x integer.

    units: work it may take; HiGHS gets the matching branch-and-bound node limit and as many
    interrupt checks. start: a feasible x to begin from. short_root: see `solve_milp`.
    """
    count = len(types)
    # HiGHS's time per call grows with the columns (presolve, root LP) before any branching.
    setup_units = work.MILP_CALL_UNITS + count / work.MILP_COLUMNS_PER_UNIT
    # ... and so does each branch-and-bound node.
    node_units = max(1.0, count / work.MILP_NODE_COLUMNS_PER_UNIT)
    if count == 0 or units < setup_units + 1:
        return MilpOutcome(None, False, False, float("-inf"))
    matrix = csc_matrix(matrix, dtype=float)
    rows = [matrix]
    row_lower = [demand.astype(float)]
    row_upper = [np.full(len(demand), np.inf)]
    limited = [t for t, m in enumerate(instance.max_count) if m is not None]
    if limited:
        rows.append(csc_matrix(np.array([types == t for t in limited], dtype=float)))
        row_lower.append(np.zeros(len(limited)))
        row_upper.append(np.array([float(m) for m in instance.max_count if m is not None]))
    result = solve_milp(
        instance.cost[types],
        vstack(rows, format="csc"),
        np.concatenate(row_lower),
        np.concatenate(row_upper),
        np.zeros(count),
        np.full(count, np.inf),
        (units - setup_units) / node_units,
        work.now() + units,
        relative_gap,
        start,
        (units - setup_units) / work.MILP_CALLBACK_UNITS,
        short_root,
    )
    work.charge(result.work(setup_units, node_units))
    dual = result.dual_bound
    if result.infeasible:
        return MilpOutcome(None, False, True, float("inf"))
    if result.x is None:
        return MilpOutcome(None, False, False, dual)
    x = np.round(result.x).astype(np.int64)
    used = np.nonzero(x)[0]
    chosen = np.rint(matrix[:, used].toarray()).astype(np.int64)
    packing = Packing.of(((int(types[j]), tuple(chosen[:, k])), int(x[j])) for k, j in enumerate(used))
    if (packing.covered(instance.shape_count) < demand).any():
        return MilpOutcome(None, False, False, dual)
    return MilpOutcome(packing, result.optimal, False, dual)


def pool_milp(instance: Instance, columns: Sequence[Column], units: float, start: Packing | None = None) -> MilpOutcome:
    """`covering_milp` over the columns of a pool, a heuristic: with `start`, its bins join the
    columns and the program begins from it. Without strong branching and sub-MIPs (see
    `solve_milp`) its root stays short."""
    columns = list(columns)
    x0: np.ndarray | None = None
    if start is not None:
        position = {column: j for j, column in enumerate(columns)}
        for column, _ in start.bins:
            if column not in position:
                position[column] = len(columns)
                columns.append(column)
        x0 = np.zeros(len(columns))
        for column, multiplicity in start.bins:
            x0[position[column]] += multiplicity
    types = np.array([t for t, _ in columns], dtype=np.int64)
    matrix = np.array([counts for _, counts in columns], dtype=np.int64).T
    return covering_milp(instance, types, matrix, instance.demand, units, start=x0, short_root=True)


@dataclass(frozen=True)
class ExactOutcome:
    """packing: a better packing if one was found; bound: a valid lower bound on the cost."""

    packing: Packing | None
    bound: float


def enumeration_search(
    instance: Instance,
    pattern_sets: Sequence[PatternSet],
    prices: np.ndarray,
    best_values: np.ndarray,
    bound: float,
    incumbent_cost: float,
    deadline: float,
) -> ExactOutcome:
    """Search all patterns with small reduced cost for packings cheaper than the incumbent.

    prices: master LP prices pi; best_values: max pi.a per bin type (exact); bound: the
    Farley bound of these prices (see `sizing.binpack.colgen.dual_bound`).
    """
    theta = 1.0
    for t, limit in enumerate(instance.max_count):
        if limit is None:
            theta = max(theta, float(best_values[t]) / float(instance.cost[t]))
    limit_prices = np.array(
        [
            0.0 if m is None else max(0.0, float(best_values[t]) / theta - float(instance.cost[t]))
            for t, m in enumerate(instance.max_count)
        ]
    )
    reduced = [
        float(instance.cost[t]) + limit_prices[t] - patterns.values(prices / theta)
        for t, patterns in enumerate(pattern_sets)
    ]
    step = instance.cost_step()
    tolerance = 1e-7 * float(instance.cost.max())
    dual_value = bound
    best: Packing | None = None
    if step is not None:
        target = float(np.ceil(bound / step - 1e-6)) * step
        for _ in range(MAX_TARGET_STEPS):
            if target >= incumbent_cost - step / 2:
                return ExactOutcome(best, max(bound, incumbent_cost))
            outcome = _search_below(instance, pattern_sets, reduced, target - dual_value + tolerance, deadline)
            if outcome is None:
                return ExactOutcome(best, bound)
            found = outcome.packing
            if found is not None and found.cost(instance) < incumbent_cost - step / 2:
                best, incumbent_cost = found, found.cost(instance)
                if incumbent_cost <= target + step / 2:
                    return ExactOutcome(best, target)
            if not (outcome.infeasible or outcome.proven):
                return ExactOutcome(best, bound)
            # No packing costs `target` or less: the next possible cost is one step up.
            target += step
            bound = target
    threshold = incumbent_cost * (1 - 1e-10)
    outcome = _search_below(instance, pattern_sets, reduced, threshold - dual_value + tolerance, deadline)
    if outcome is None:
        return ExactOutcome(best, bound)
    if outcome.infeasible:
        return ExactOutcome(best, max(bound, incumbent_cost))
    found = outcome.packing
    improved = found if found is not None and found.cost(instance) < incumbent_cost else best
    # Packings outside the searched columns cost more than `threshold`.
    return ExactOutcome(improved, max(bound, min(threshold, outcome.dual_bound)))


def _search_below(
    instance: Instance,
    pattern_sets: Sequence[PatternSet],
    reduced: Sequence[np.ndarray],
    slack: float,
    deadline: float,
) -> MilpOutcome | None:
    """The covering MILP over all patterns with reduced cost <= slack; None when too many or no time."""
    selected: tuple[np.ndarray, ...] = tuple(np.nonzero(r <= slack)[0] for r in reduced)
    total = sum(len(s) for s in selected)
    units = deadline - work.now()
    if total > MAX_EXACT_COLUMNS or units <= 0:
        return None
    blocks, types = [], []
    for t, (patterns, chosen) in enumerate(zip(pattern_sets, selected, strict=True)):
        if not len(chosen):
            continue
        members = patterns.members[chosen]
        columns = np.repeat(np.arange(len(chosen)), members.shape[1])
        shapes = members.reshape(-1)
        keep = shapes >= 0
        blocks.append(
            csc_matrix(
                (np.ones(int(keep.sum())), (shapes[keep], columns[keep])),
                shape=(instance.shape_count, len(chosen)),
            )
        )
        types.append(np.full(len(chosen), t, dtype=np.int64))
    if not blocks:
        return MilpOutcome(None, False, True, float("inf"))
    matrix = hstack(blocks, format="csc")
    return covering_milp(instance, np.concatenate(types), matrix, instance.demand, units, relative_gap=1e-9)
