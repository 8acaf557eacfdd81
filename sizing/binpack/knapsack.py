"""Pricing for one bin type: the most valuable set of items that fits one bin.

maximise  sum_i price_i * a_i
s.t.      sum_i size_{i,d} * a_i <= room_d  for every dimension d
          0 <= a_i <= limit_i, integer

This is a bounded multi-dimensional knapsack. Its LP relaxation (HiGHS) gives
an upper bound and, rounded down and filled up greedily, a first pattern that
is close to the best when bins hold many items. A depth-first branch and
bound (compiled, `sizing.binpack.knapsack_search`) then improves it, exactly
when the search is small: shapes are tried in order of price per unit
of surrogate size (sizes weighted by the dual prices of the dimensions in the
LP relaxation, solved with HiGHS), and a branch is cut when its
value plus the fractional (Dantzig) bound of the shapes after it, restricted to
those that still fit, cannot beat the best pattern found. When the search
exceeds its node budget, HiGHS (`sizing.binpack.highs_milp`) takes over if given time;
its dual bound, or else the root bound of the search, keeps the reported upper
bound valid either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from sizing.binpack import knapsack_search, work
from sizing.binpack.highs_milp import solve_milp
from sizing.binpack.instance import fit_counts

PRICE_EPSILON = 1e-12
MILP_NODE_LIMIT = 2000


@dataclass(frozen=True)
class KnapsackResult:
    """counts: items per shape of the best pattern found; value: its price;
    upper_bound: no pattern is worth more (equal to value when proven optimal);
    weights: the dimension weights used, to pass back in as `weights` next time;
    nodes: of the search; scans: shapes its nodes looked at (nodes times the shapes searched),
    what its work is charged by."""

    counts: np.ndarray
    value: float
    upper_bound: float
    weights: np.ndarray | None = None
    nodes: int = 0
    scans: int = 0


def best_pattern(
    prices: np.ndarray,
    sizes: np.ndarray,
    room: np.ndarray,
    limit: np.ndarray,
    node_limit: int = 4000,
    fallback_units: float = 100.0,
    weights: np.ndarray | None = None,
) -> KnapsackResult:
    """The most valuable pattern for one bin with room `room` (see the module docstring).

    weights: dimension weights for the surrogate from an earlier call; given, the LP
    relaxation is skipped (faster, but no LP bound and no rounded start).
    """
    shapes = sizes.shape[0]
    limit = fit_counts(room, sizes, limit)
    useful = np.nonzero((prices > PRICE_EPSILON) & (limit > 0))[0]
    counts = np.zeros(shapes, dtype=np.int64)
    if not len(useful):
        return KnapsackResult(counts, 0.0, 0.0)
    free = useful[(sizes[useful] == 0).all(axis=1)]
    counts[free] = limit[free]
    useful = useful[(sizes[useful] > 0).any(axis=1)]
    if not len(useful):
        value = float(prices @ counts)
        return KnapsackResult(counts, value, value)
    if weights is None:
        weights, relaxation, solution = _relaxation(prices[useful], sizes[useful], room, limit[useful])
        search = _BranchAndBound(prices, sizes, room, limit, useful, weights, node_limit)
        search.root_bound = min(search.root_bound, relaxation)
        search.start_from(_round_and_fill(solution, sizes[useful], room, limit[useful], search.rank))
    else:
        search = _BranchAndBound(prices, sizes, room, limit, useful, weights, node_limit)
    search.run()
    if search.complete:
        counts += search.best_counts
        value = float(prices @ counts)
        return KnapsackResult(counts, value, value, weights, search.nodes, search.scans)
    if fallback_units < work.KNAPSACK_MILP_UNITS:
        base = float(prices @ counts)
        counts += search.best_counts
        value = float(prices @ counts)
        return KnapsackResult(counts, value, max(value, base + search.root_bound), weights, search.nodes, search.scans)
    result = _with_milp(prices, sizes, room, limit, counts, search)
    work.charge(work.KNAPSACK_MILP_UNITS)
    return KnapsackResult(result.counts, result.value, result.upper_bound, weights, search.nodes, search.scans)


def surrogate_bounds(
    prices: np.ndarray, sizes: np.ndarray, rooms: np.ndarray, limit: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Per bin type (a row of `rooms`), an upper bound on its best pattern's value without a
    search: the fractional knapsack on one surrogate constraint, the dimensions weighted by that
    type's row of `weights` (>= 0). Every pattern meets the surrogate constraint, so none is
    worth more; with the weights of the type's LP relaxation it is close to the LP bound."""
    fits = np.stack([fit_counts(room, sizes, limit) for room in rooms], axis=1)  # shapes x types
    useful = (prices[:, None] > PRICE_EPSILON) & (fits > 0)
    load = sizes @ weights.T
    value = np.where(useful, prices[:, None] * fits, 0.0)
    with np.errstate(over="ignore"):
        ratio = np.where(load > 0, prices[:, None] / np.where(load > 0, load, 1.0), np.inf)
    # Shapes with no load, or too little for their ratio to be a number (weights near the
    # smallest double), are counted whole: that can only raise the bound, where ranking them
    # among each other by an infinite ratio could lower it below the best pattern.
    free = useful & ~np.isfinite(ratio)
    bound = np.where(free, value, 0.0).sum(axis=0)
    ranked = useful & ~free
    ratio = np.where(ranked, ratio, -np.inf)
    order = np.argsort(-ratio, axis=0, kind="stable")
    ratio = np.take_along_axis(ratio, order, axis=0)
    weight = np.take_along_axis(np.where(ranked, load * fits, 0.0), order, axis=0)
    value = np.take_along_axis(np.where(ranked, value, 0.0), order, axis=0)
    capacity = (rooms * weights).sum(axis=1)
    filled = np.cumsum(weight, axis=0)
    whole = filled <= capacity
    bound += np.where(whole, value, 0.0).sum(axis=0)
    # The first shape that does not fit whole fills what is left, fractionally.
    split = whole.sum(axis=0)
    columns = np.nonzero(split < sizes.shape[0])[0]
    at = split[columns]
    left = capacity[columns] - np.where(at > 0, filled[np.maximum(at - 1, 0), columns], 0.0)
    # Nothing left adds nothing; room left at a ratio too large to represent bounds nothing.
    with np.errstate(invalid="ignore", over="ignore"):
        partial = np.where(left > 0, left * ratio[at, columns], 0.0)
    bound[columns] += np.where(np.isnan(partial), np.inf, partial)
    result: np.ndarray = bound * (1 + 1e-9) + 1e-12
    return result


def _relaxation(
    prices: np.ndarray, sizes: np.ndarray, room: np.ndarray, limit: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray]:
    """The LP relaxation: (weights of the dimensions for the surrogate, an upper bound on the value).

    The weights are the LP's dual prices, kept strictly positive; the bound is the LP value
    with a little slack for rounding (or the trivial bound if HiGHS fails).
    """
    scale = 1.0 / np.maximum(room, 1)
    relaxation = linprog(
        -prices,
        A_ub=(sizes * scale).T,
        b_ub=room * scale,
        bounds=np.column_stack([np.zeros(len(limit)), limit]),
        method="highs",
    )
    if relaxation.status != 0:
        return np.full(len(room), 1.0 / len(room)) * scale, float(prices @ limit), np.zeros(len(limit))
    duals = np.maximum(-relaxation.ineqlin.marginals, 0.0)
    total = duals.sum()
    weights = duals / total if total > 0 else np.zeros(len(room))
    bound = -float(relaxation.fun) * (1 + 1e-9) + 1e-12
    return (weights + 1e-3 / len(room)) * scale, bound, relaxation.x


def _round_and_fill(
    solution: np.ndarray, sizes: np.ndarray, room: np.ndarray, limit: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """The LP solution rounded down, then topped up shape by shape in `rank` order (per useful shape)."""
    counts: np.ndarray = np.minimum(np.floor(solution + 1e-9).astype(np.int64), limit)
    free = room - counts @ sizes
    for k in rank:
        more = int(limit[k] - counts[k])
        for d in np.nonzero(sizes[k] > 0)[0]:
            more = min(more, int(free[d] // sizes[k, d]))
        if more > 0:
            counts[k] += more
            free -= more * sizes[k]
    return counts


class _BranchAndBound:
    """The search over the useful shapes, ranked by price per unit of surrogate size
    (`sizing.binpack.knapsack_search` runs it)."""

    def __init__(
        self,
        prices: np.ndarray,
        sizes: np.ndarray,
        room: np.ndarray,
        limit: np.ndarray,
        useful: np.ndarray,
        multipliers: np.ndarray,
        node_limit: int,
    ) -> None:
        self.multipliers = np.ascontiguousarray(multipliers, dtype=np.float64)
        weight = sizes[useful] @ multipliers
        efficiency = prices[useful] / weight
        self.rank = np.lexsort((useful, -efficiency))
        order = useful[self.rank]
        self.order = order
        self.price = np.ascontiguousarray(prices[order], dtype=np.float64)
        self.weight = np.ascontiguousarray(sizes[order] @ multipliers, dtype=np.float64)
        self.sizes = np.ascontiguousarray(sizes[order], dtype=np.int64)
        self.limit = np.ascontiguousarray(limit[order], dtype=np.int64)
        self.room = np.ascontiguousarray(room, dtype=np.int64)
        self.node_limit = node_limit
        self.nodes = 0
        self.best_value = 0.0
        self.best = np.zeros(len(order), dtype=np.int64)
        self.complete = False
        self.shape_count = sizes.shape[0]
        self.root_bound = math.inf

    def start_from(self, useful_counts: np.ndarray) -> None:
        """Take a known pattern (items per useful shape, in input order) as the best so far."""
        self.best = np.ascontiguousarray(useful_counts[self.rank], dtype=np.int64)
        self.best_value = float(self.price @ self.best)

    @property
    def best_counts(self) -> np.ndarray:
        """The best pattern found, as items per shape."""
        counts = np.zeros(self.shape_count, dtype=np.int64)
        counts[self.order] = self.best
        return counts

    def run(self) -> None:
        self.nodes, self.best_value, root_bound = knapsack_search.search(
            self.price,
            self.weight,
            self.sizes,
            self.limit,
            self.room,
            self.multipliers,
            PRICE_EPSILON,
            self.node_limit,
            self.best,
            self.best_value,
        )
        self.root_bound = min(self.root_bound, root_bound)
        self.complete = self.nodes <= self.node_limit

    @property
    def scans(self) -> int:
        """Shapes looked at: each node looks at most at every shape searched."""
        return self.nodes * len(self.order)


def _with_milp(
    prices: np.ndarray,
    sizes: np.ndarray,
    room: np.ndarray,
    limit: np.ndarray,
    base_counts: np.ndarray,
    search: _BranchAndBound,
) -> KnapsackResult:
    """Solve with HiGHS when the search ran out of nodes; keep the better pattern."""
    useful = search.order
    result = solve_milp(
        -prices[useful],
        sizes[useful].T.astype(float),
        np.full(len(room), -np.inf),
        room.astype(float),
        np.zeros(len(useful)),
        limit[useful].astype(float),
        MILP_NODE_LIMIT,
    )
    counts = base_counts + search.best_counts
    base_value = float(prices @ base_counts)
    upper = base_value + search.root_bound
    if result.x is not None:
        candidate = base_counts.copy()
        candidate[useful] += np.round(result.x).astype(np.int64)
        if (candidate @ sizes <= room).all() and (candidate <= limit).all() and prices @ candidate > prices @ counts:
            counts = candidate
    if np.isfinite(result.dual_bound):
        upper = min(upper, base_value - result.dual_bound + 1e-9 * max(1.0, abs(result.dual_bound)))
    value = float(prices @ counts)
    return KnapsackResult(counts, value, max(upper, value))
