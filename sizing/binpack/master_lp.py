"""The master LP of column generation, kept warm between solves.

    minimise   sum_j cost_t(j) x_j + sum_i penalty s_i
    s.t.       sum_j a_ij x_j + s_i >= demand_i          (prices pi_i >= 0)
               sum_{j of type t} x_j <= limit_t           (limit prices sigma_t >= 0, limited types)
               x, s >= 0

With items sized in one dimension, columns of cost 0 also let a larger item's place
hold a smaller item (see `exchange_pairs`).

The artificial s_i keep the LP feasible under max counts and in dives; their
penalty is far above any bin cost, so they stay at zero whenever real columns
can cover the items.

Column generation solves this LP hundreds of times, each time with a few more
columns or (in dives) other right-hand sides. scipy's `linprog` always starts
from scratch; a `highspy.Highs` object (the HiGHS project's own Python
package, the same solver scipy bundles) keeps the model and its basis, so a
re-solve takes a few simplex iterations. Without highspy installed, `linprog`
remains as the fallback and gives the same LP optimum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, hstack, identity, vstack

from sizing.binpack import work
from sizing.binpack.instance import Instance

try:  # pragma: no cover - depends on what is installed
    from highspy import Highs
except ImportError:  # pragma: no cover
    Highs = None

PENALTY_FACTOR = 1000.0

Column = tuple[int, tuple[int, ...]]


class ColumnPool:
    """Distinct columns (bin type index, items per shape) in the order they were added."""

    def __init__(self, shape_count: int):
        self.shape_count = shape_count
        self.columns: list[Column] = []
        self._index: dict[Column, int] = {}
        self._matrix = np.zeros((shape_count, 0), dtype=np.int64)
        self._types = np.zeros(0, dtype=np.int64)

    def add(self, type_index: int, counts: Sequence[int]) -> bool:
        column = (int(type_index), tuple(int(c) for c in counts))
        if column in self._index or not any(column[1]):
            return False
        self._index[column] = len(self.columns)
        self.columns.append(column)
        return True

    def __len__(self) -> int:
        return len(self.columns)

    def matrix(self) -> np.ndarray:
        """Items per shape (rows) of every column (columns)."""
        self._catch_up()
        return self._matrix

    def types(self) -> np.ndarray:
        """Bin type index of every column."""
        self._catch_up()
        return self._types

    def _catch_up(self) -> None:
        known = self._types.shape[0]
        if known < len(self.columns):
            fresh = self.columns[known:]
            self._matrix = np.hstack([self._matrix, np.array([c for _, c in fresh], dtype=np.int64).T])
            self._types = np.concatenate([self._types, np.array([t for t, _ in fresh], dtype=np.int64)])


@dataclass(frozen=True)
class MasterSolution:
    """x: value per pool column; value: LP objective; prices: pi per shape (0 where nothing is
    demanded); limit_prices: sigma per bin type; uncovered: total of the artificial variables."""

    x: np.ndarray
    value: float
    prices: np.ndarray
    limit_prices: np.ndarray
    uncovered: float


class MasterLP:
    """The master LP over `pool`; `solve` takes the demand per shape and the limit per bin type
    (-1 for unlimited; only types with a max count may be limited)."""

    def __init__(self, instance: Instance, pool: ColumnPool, warm: bool = True, exchanges: bool = True):
        self.instance = instance
        self.pool = pool
        self.exchanges = exchange_pairs(instance) if warm and exchanges else []
        self.limited = [t for t, m in enumerate(instance.max_count) if m is not None]
        self.penalty = PENALTY_FACTOR * float(instance.cost.max())
        self._highs: Any = _new_highs() if warm else None
        self._synced = 0
        self._bounds: np.ndarray | None = None
        if self._highs is not None:
            self._build()

    def solve(self, demand: np.ndarray, limits: np.ndarray) -> MasterSolution | None:
        if self._highs is not None:
            return self._solve_warm(demand, limits)
        return self._solve_cold(demand, limits)

    def _build(self) -> None:
        highs, shapes = self._highs, self.instance.shape_count
        inf = highs.getInfinity()
        rows = shapes + len(self.limited)
        lower = np.concatenate([np.zeros(shapes), np.full(len(self.limited), -inf)])
        upper = np.concatenate([np.full(shapes, inf), np.zeros(len(self.limited))])
        highs.addRows(rows, lower, upper, 0, np.zeros(rows, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        highs.addCols(
            shapes,
            np.full(shapes, self.penalty),
            np.zeros(shapes),
            np.full(shapes, inf),
            shapes,
            np.arange(shapes, dtype=np.int32),
            np.arange(shapes, dtype=np.int32),
            np.ones(shapes),
        )
        self._add_exchanges()

    def _add_exchanges(self) -> None:
        highs = self._highs
        count = len(self.exchanges)
        if not count:
            return
        starts = np.arange(0, 2 * count, 2, dtype=np.int32)
        indices = np.array([row for pair in self.exchanges for row in pair], dtype=np.int32)
        values = np.tile([-1.0, 1.0], count)
        highs.addCols(
            count,
            np.zeros(count),
            np.zeros(count),
            np.full(count, highs.getInfinity()),
            2 * count,
            starts,
            indices,
            values,
        )

    def _sync(self) -> None:
        fresh = self.pool.columns[self._synced :]
        if not fresh:
            return
        highs, shapes = self._highs, self.instance.shape_count
        limit_row = {t: shapes + r for r, t in enumerate(self.limited)}
        starts: list[int] = []
        indices: list[int] = []
        values: list[float] = []
        for t, counts in fresh:
            starts.append(len(indices))
            for i, c in enumerate(counts):
                if c:
                    indices.append(i)
                    values.append(float(c))
            if t in limit_row:
                indices.append(limit_row[t])
                values.append(1.0)
        costs = np.array([float(self.instance.cost[t]) for t, _ in fresh])
        highs.addCols(
            len(fresh),
            costs,
            np.zeros(len(fresh)),
            np.full(len(fresh), highs.getInfinity()),
            len(indices),
            np.array(starts, dtype=np.int32),
            np.array(indices, dtype=np.int32),
            np.array(values),
        )
        self._synced = len(self.pool.columns)

    def _solve_warm(self, demand: np.ndarray, limits: np.ndarray) -> MasterSolution | None:
        highs, shapes = self._highs, self.instance.shape_count
        self._sync()
        inf = highs.getInfinity()
        # Only rows whose bounds differ from the last solve are changed (one call per row).
        bounds = np.concatenate([demand.astype(float), np.array([float(limits[t]) for t in self.limited])])
        changed = np.arange(len(bounds)) if self._bounds is None else np.nonzero(bounds != self._bounds)[0]
        for row in changed.tolist():
            if row < shapes:
                highs.changeRowBounds(row, float(bounds[row]), inf)
            else:
                highs.changeRowBounds(row, -inf, float(bounds[row]))
        self._bounds = bounds
        seconds = work.seconds_until(math.inf)
        if seconds is not None:
            highs.setOptionValue("time_limit", max(seconds, 1e-3))
        highs.run()
        if highs.modelStatusToString(highs.getModelStatus()) != "Optimal":
            return None
        solution = highs.getSolution()
        values = np.array(solution.col_value)
        duals = np.array(solution.row_dual)
        prices = np.where(demand > 0, np.maximum(duals[:shapes], 0.0), 0.0)
        limit_prices = np.zeros(self.instance.type_count)
        for r, t in enumerate(self.limited):
            limit_prices[t] = max(0.0, -float(duals[shapes + r]))
        return MasterSolution(
            x=values[shapes + len(self.exchanges) :],
            value=float(highs.getInfo().objective_function_value),
            prices=prices,
            limit_prices=limit_prices,
            uncovered=float(values[:shapes].sum()),
        )

    def _solve_cold(self, demand: np.ndarray, limits: np.ndarray) -> MasterSolution | None:
        instance, pool = self.instance, self.pool
        rows = np.nonzero(demand > 0)[0]
        a, types = pool.matrix(), pool.types()
        costs = instance.cost[types] if len(types) else np.zeros(0)
        cover = hstack([csr_matrix(-a[rows].astype(float)), -identity(len(rows), format="csr")])
        blocks, rhs = [cover], [-demand[rows].astype(float)]
        if self.limited:
            membership = np.zeros((len(self.limited), len(types) + len(rows)))
            for r, t in enumerate(self.limited):
                membership[r, : len(types)] = types == t
            blocks.append(csr_matrix(membership))
            rhs.append(limits[self.limited].astype(float))
        result = linprog(
            np.concatenate([costs, np.full(len(rows), self.penalty)]),
            A_ub=vstack(blocks, format="csr"),
            b_ub=np.concatenate(rhs),
            bounds=(0, None),
            method="highs",
        )
        if result.status != 0:
            return None
        prices = np.zeros(instance.shape_count)
        prices[rows] = np.maximum(-result.ineqlin.marginals[: len(rows)], 0.0)
        limit_prices = np.zeros(instance.type_count)
        if self.limited:
            limit_prices[self.limited] = np.maximum(-result.ineqlin.marginals[len(rows) :], 0.0)
        return MasterSolution(
            x=result.x[: len(types)],
            value=float(result.fun),
            prices=prices,
            limit_prices=limit_prices,
            uncovered=float(result.x[len(types) :].sum()),
        )


def exchange_pairs(instance: Instance) -> list[tuple[int, int]]:
    """(larger, smaller) shapes next to each other by size, when items are sized in one dimension.

    Any bin that holds an item can hold a smaller one in its place, so some optimal prices
    never value a smaller item above a larger one. Columns of cost 0 that trade a larger
    item's place for a smaller item (-1 and +1 in their rows) keep the LP's prices so ordered
    without changing its optimum, which cuts the many rounds in which prices wander over
    equally good values (dual-optimal inequalities of the cutting-stock problem).
    """
    sized = np.nonzero((instance.sizes > 0).any(axis=0))[0]
    if len(sized) != 1:
        return []
    sizes = instance.sizes[:, int(sized[0])]
    order = sorted(range(instance.shape_count), key=lambda i: (-int(sizes[i]), i))
    return [(order[k], order[k + 1]) for k in range(len(order) - 1) if sizes[order[k + 1]] > 0]


def _new_highs() -> Any:
    if Highs is None:
        return None
    highs = Highs()
    highs.setOptionValue("output_flag", False)
    return highs
