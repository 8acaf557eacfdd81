"""Pricing for one bin type: the most valuable set of items that fits one bin.

maximise  sum_i price_i * a_i
s.t.      sum_i size_{i,d} * a_i <= room_d  for every dimension d
          0 <= a_i <= limit_i, integer

This is a bounded multi-dimensional knapsack. A depth-first branch and bound
solves it exactly when it is small: shapes are tried in order of price per unit
of surrogate size (sizes weighted by the dual prices of the dimensions in the
LP relaxation, solved with HiGHS), and a branch is cut when its
value plus the fractional (Dantzig) bound of the shapes after it, restricted to
those that still fit, cannot beat the best pattern found. When the search
exceeds its node budget, HiGHS (scipy.optimize.milp) takes over; its dual bound
keeps the reported upper bound valid either way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from sizing.instance import fit_counts

PRICE_EPSILON = 1e-12


@dataclass(frozen=True)
class KnapsackResult:
    """counts: items per shape of the best pattern found; value: its price;
    upper_bound: no pattern is worth more (equal to value when proven optimal)."""

    counts: np.ndarray
    value: float
    upper_bound: float


def best_pattern(
    prices: np.ndarray,
    sizes: np.ndarray,
    room: np.ndarray,
    limit: np.ndarray,
    node_limit: int = 4000,
    fallback_seconds: float = 1.0,
) -> KnapsackResult:
    """The most valuable pattern for one bin with room `room` (see the module docstring)."""
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
    multipliers = _surrogate_multipliers(prices[useful], sizes[useful], room, limit[useful])
    search = _BranchAndBound(prices, sizes, room, limit, useful, multipliers, node_limit)
    if len(useful) < sys.getrecursionlimit() // 4:
        search.run()
    if search.complete:
        counts += search.best_counts
        value = float(prices @ counts)
        return KnapsackResult(counts, value, value)
    return _with_milp(prices, sizes, room, limit, counts, search, fallback_seconds)


def _surrogate_multipliers(prices, sizes, room, limit) -> np.ndarray:
    """Weights of the dimensions: the LP relaxation's dual prices, kept strictly positive."""
    scale = 1.0 / np.maximum(room, 1)
    relaxation = linprog(
        -prices, A_ub=(sizes * scale).T, b_ub=room * scale, bounds=np.column_stack([np.zeros(len(limit)), limit]),
        method="highs",
    )
    duals = np.zeros(len(room)) if relaxation.status != 0 else np.maximum(-relaxation.ineqlin.marginals, 0.0)
    total = duals.sum()
    weights = duals / total if total > 0 else np.zeros(len(room))
    return (weights + 1e-3 / len(room)) * scale


class _BranchAndBound:
    def __init__(self, prices, sizes, room, limit, useful, multipliers, node_limit):
        self.multipliers = multipliers
        weight = sizes[useful] @ multipliers
        efficiency = prices[useful] / weight
        order = useful[np.lexsort((useful, -efficiency))]
        self.order = order
        self.price = prices[order].astype(float)
        self.weight = (sizes[order] @ multipliers).astype(float)
        self.sizes = sizes[order].astype(np.int64)
        self.limit = limit[order].astype(np.int64)
        self.room = np.asarray(room, dtype=np.int64)
        self.node_limit = node_limit
        self.nodes = 0
        self.best_value = 0.0
        self.best = np.zeros(len(order), dtype=np.int64)
        self.current = np.zeros(len(order), dtype=np.int64)
        self.complete = False
        self.shape_count = sizes.shape[0]
        root_bounds = self._bounds(0, self.room, self._surrogate(self.room))[0]
        self.root_bound = float(root_bounds[0]) if len(root_bounds) else 0.0

    def _surrogate(self, free: np.ndarray) -> float:
        return float(free @ self.multipliers)

    @property
    def best_counts(self) -> np.ndarray:
        """The best pattern found, as items per shape."""
        counts = np.zeros(self.shape_count, dtype=np.int64)
        counts[self.order] = self.best
        return counts

    def run(self) -> None:
        self._visit(0, 0.0, np.zeros(len(self.room), dtype=np.int64))
        self.complete = self.nodes <= self.node_limit

    def _bounds(self, start, free, surrogate_room):
        """For each shape k >= start that fits in `free`: fractional bound of shapes k.. given the room."""
        fits = np.minimum(self.limit[start:], _fit_rows(free, self.sizes[start:]))
        candidates = np.nonzero(fits > 0)[0]
        if not len(candidates):
            return np.zeros(0), candidates, fits
        w = self.weight[start:][candidates] * fits[candidates]
        v = self.price[start:][candidates] * fits[candidates]
        cum_w = np.concatenate(([0.0], np.cumsum(w)))
        cum_v = np.concatenate(([0.0], np.cumsum(v)))
        reach = cum_w[:-1] + surrogate_room
        full = np.searchsorted(cum_w, reach, side="right") - 1
        bound = cum_v[full] - cum_v[:-1]
        partial = full < len(candidates)
        nxt = np.minimum(full, len(candidates) - 1)
        ratio = self.price[start:][candidates][nxt] / self.weight[start:][candidates][nxt]
        bound = bound + np.where(partial, (reach - cum_w[full]) * ratio, 0.0)
        return bound, candidates, fits

    def _visit(self, start, value, load) -> None:
        self.nodes += 1
        if value > self.best_value + PRICE_EPSILON:
            self.best_value = value
            self.best = self.current.copy()
        if self.nodes > self.node_limit or start >= len(self.order):
            return
        free = self.room - load
        bound, candidates, fits = self._bounds(start, free, self._surrogate(free))
        for position, offset in enumerate(candidates):
            if value + bound[position] <= self.best_value + PRICE_EPSILON:
                return
            k = start + int(offset)
            for copies in range(int(fits[offset]), 0, -1):
                self.current[k] = copies
                self._visit(k + 1, value + self.price[k] * copies, load + self.sizes[k] * copies)
                self.current[k] = 0
                if self.nodes > self.node_limit:
                    return


def _fit_rows(free: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    fits = np.full(sizes.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    for d in range(sizes.shape[1]):
        positive = sizes[:, d] > 0
        fits[positive] = np.minimum(fits[positive], free[d] // sizes[positive, d])
    return fits


def _with_milp(prices, sizes, room, limit, base_counts, search, seconds) -> KnapsackResult:
    """Solve with HiGHS when the search ran out of nodes; keep the better pattern."""
    useful = search.order
    result = milp(
        -prices[useful],
        constraints=LinearConstraint(sizes[useful].T.astype(float), -np.inf, room.astype(float)),
        integrality=np.ones(len(useful)),
        bounds=Bounds(0, limit[useful].astype(float)),
        options={"time_limit": max(0.05, seconds), "node_limit": 2000},
    )
    counts = base_counts + search.best_counts
    base_value = float(prices @ base_counts)
    upper = base_value + search.root_bound
    if result.x is not None:
        candidate = base_counts.copy()
        candidate[useful] += np.round(result.x).astype(np.int64)
        if (candidate @ sizes <= room).all() and (candidate <= limit).all() and prices @ candidate > prices @ counts:
            counts = candidate
    if result.mip_dual_bound is not None and np.isfinite(result.mip_dual_bound):
        upper = min(upper, base_value - float(result.mip_dual_bound) + 1e-9 * max(1.0, abs(result.mip_dual_bound)))
    value = float(prices @ counts)
    return KnapsackResult(counts, value, max(upper, value))
