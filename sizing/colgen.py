"""Column generation for the pattern formulation (Gilmore-Gomory), with valid bounds.

Master LP over a pool of columns (a column is a bin type and a pattern):

    minimise   sum_j cost_t(j) x_j + sum_i penalty s_i
    s.t.       sum_j a_ij x_j + s_i >= demand_i          (prices pi_i >= 0)
               sum_{j of type t} x_j <= limit_t           (limit prices sigma_t >= 0, limited types)
               x, s >= 0

The artificial s_i keep the LP feasible under max counts and in dives; the
penalty is far above any bin cost, so they stay at zero whenever real columns
can cover the items.

Bound: for any pi >= 0 and best pattern values z_t >= max_a pi.a of each type,
scaling pi by theta = max(1, max over unlimited types of z_t / cost_t) makes it
dual feasible with sigma_t = max(0, z_t / theta - cost_t), hence

    demand . pi / theta - sum_t limit_t sigma_t  <=  optimal cost

(Farley's bound). It holds at every iteration, not only at convergence, and
needs no trust in the LP solver's accuracy, only upper bounds z_t.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import List, Optional, Protocol, Sequence, Tuple

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, hstack, identity, vstack

from sizing.instance import Instance

REDUCED_COST_TOLERANCE = 1e-9
PENALTY_FACTOR = 1000.0

Column = Tuple[int, Tuple[int, ...]]


class ColumnPool:
    """Distinct columns (bin type index, items per shape) in the order they were added."""

    def __init__(self, shape_count: int):
        self.shape_count = shape_count
        self.columns: List[Column] = []
        self._index = {}

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
        if not self.columns:
            return np.zeros((self.shape_count, 0), dtype=np.int64)
        return np.array([counts for _, counts in self.columns], dtype=np.int64).T

    def types(self) -> np.ndarray:
        return np.array([t for t, _ in self.columns], dtype=np.int64)


@dataclass(frozen=True)
class MasterSolution:
    """x: value per pool column; value: LP objective; prices: pi per shape; limit_prices:
    sigma per bin type; uncovered: total of the artificial variables (0 when real columns suffice)."""

    x: np.ndarray
    value: float
    prices: np.ndarray
    limit_prices: np.ndarray
    uncovered: float


@dataclass(frozen=True)
class Pricing:
    """New columns with negative reduced cost, and per bin type an upper bound on max pi.a."""

    columns: List[Column]
    best_values: np.ndarray
    exact: bool


class Pricer(Protocol):
    def price(self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray) -> Pricing:
        ...


def solve_master(instance: Instance, pool: ColumnPool, demand: np.ndarray, limits: np.ndarray) -> Optional[MasterSolution]:
    """The master LP over the pool; limits[t] < 0 means unlimited. None if HiGHS fails."""
    shapes = instance.shape_count
    rows = np.nonzero(demand > 0)[0]
    a = pool.matrix()
    types = pool.types()
    costs = instance.cost[types] if len(types) else np.zeros(0)
    penalty = PENALTY_FACTOR * float(instance.cost.max()) * np.ones(len(rows))
    cover = hstack([csr_matrix(-a[rows].astype(float)), -identity(len(rows), format="csr")])
    limited = [t for t in range(instance.type_count) if limits[t] >= 0]
    blocks = [cover]
    bounds_rhs = [-demand[rows].astype(float)]
    if limited:
        membership = np.zeros((len(limited), len(types) + len(rows)))
        for r, t in enumerate(limited):
            membership[r, : len(types)] = types == t
        blocks.append(csr_matrix(membership))
        bounds_rhs.append(limits[limited].astype(float))
    result = linprog(
        np.concatenate([costs, penalty]),
        A_ub=vstack(blocks, format="csr"),
        b_ub=np.concatenate(bounds_rhs),
        bounds=(0, None),
        method="highs",
    )
    if result.status != 0:
        return None
    prices = np.zeros(shapes)
    prices[rows] = np.maximum(-result.ineqlin.marginals[: len(rows)], 0.0)
    limit_prices = np.zeros(instance.type_count)
    if limited:
        limit_prices[limited] = np.maximum(-result.ineqlin.marginals[len(rows) :], 0.0)
    return MasterSolution(
        x=result.x[: len(types)],
        value=float(result.fun),
        prices=prices,
        limit_prices=limit_prices,
        uncovered=float(result.x[len(types) :].sum()),
    )


def dual_bound(instance: Instance, demand: np.ndarray, limits: np.ndarray, prices: np.ndarray, best_values: np.ndarray) -> float:
    """Farley's lower bound on the cost of covering `demand` (see the module docstring)."""
    usable = [t for t in range(instance.type_count) if limits[t] != 0]
    theta = 1.0
    for t in usable:
        if limits[t] < 0:
            theta = max(theta, float(best_values[t]) / float(instance.cost[t]))
    bound = float(demand @ prices) / theta
    for t in usable:
        if limits[t] > 0:
            bound -= float(limits[t]) * max(0.0, float(best_values[t]) / theta - float(instance.cost[t]))
    return bound


@dataclass(frozen=True)
class GenerationResult:
    """master: the last master LP; bound: best valid lower bound seen; converged: no column
    with negative reduced cost exists (proven); iterations: master LPs solved."""

    master: Optional[MasterSolution]
    bound: float
    converged: bool
    iterations: int


def column_generation(
    instance: Instance,
    pool: ColumnPool,
    pricer: Pricer,
    demand: np.ndarray,
    limits: np.ndarray,
    deadline: float,
    max_iterations: int,
    target: float = float("inf"),
) -> GenerationResult:
    """Grow the pool until no column prices out, the bound reaches `target`, or a budget runs out."""
    bound = float("-inf")
    master = None
    iterations = 0
    usable = limits != 0
    while iterations < max_iterations:
        iterations += 1
        master = solve_master(instance, pool, demand, limits)
        if master is None:
            return GenerationResult(None, bound, False, iterations)
        pricing = pricer.price(master.prices, master.limit_prices, demand, usable)
        bound = max(bound, dual_bound(instance, demand, limits, master.prices, pricing.best_values))
        added = sum(pool.add(t, counts) for t, counts in pricing.columns)
        if not added:
            return GenerationResult(master, bound, pricing.exact, iterations)
        if bound >= target or time.perf_counter() > deadline:
            break
    return GenerationResult(master, bound, False, iterations)
