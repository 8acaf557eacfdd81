"""Cheap lower bounds on the cost and on the number of bins, and impossibility checks.

* Aggregate LP: min sum_t cost_t y_t with sum_t capacity_{t,d} y_t >= total demand_d
  per dimension, sum_{t} fit_t(i) y_t >= demand_i per shape (a bin of type t holds at
  most fit_t(i) items of shape i) and 0 <= y_t <= max count. A relaxation of any packing.
* Bin count: max over dimensions of ceil(total demand / largest capacity), and per shape
  ceil(demand / most items of the shape one bin holds); with a single bin type the
  Martello-Toth bound L2 per dimension.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix

from sizing.binpack import work
from sizing.binpack.instance import Instance

# Relative slack taken off LP values so that rounding in HiGHS never lifts a bound too high.
LP_SAFETY = 1e-9
# Most (shape, type) pairs the assignment LP is built for (its simplex time grows faster than
# the pairs: 0.2 s at 3,000 on the reference machine, 7 s at 16,000), and pairs per unit of work.
ASSIGNMENT_PAIR_LIMIT = 4_000
ASSIGNMENT_PAIRS_PER_UNIT = 15


def _usable(instance: Instance) -> np.ndarray:
    return np.array([limit is None or limit > 0 for limit in instance.max_count], dtype=bool)


def fit_matrix(instance: Instance) -> np.ndarray:
    """fit[t, i]: most items of shape i one empty bin of type t holds (capped by demand)."""
    return np.array([instance.fit_counts(t) for t in range(instance.type_count)], dtype=np.int64).reshape(
        instance.type_count, instance.shape_count
    )


def aggregate_bound(instance: Instance) -> tuple[float | None, str | None]:
    """(lower bound on the cost, None), or (None, why the max counts make packing impossible)."""
    result, fits, totals = _aggregate_lp(instance)
    if result.status == 2:
        return None, _limits_reason(instance, fits, totals)
    if result.status != 0:
        return 0.0, None
    return float(result.fun) * (1 - LP_SAFETY), None


def aggregate_reduced_costs(instance: Instance) -> np.ndarray | None:
    """Per bin type, its cost less what the aggregate LP's prices make its room worth, as a
    share of its cost (0 for the types that LP uses, >= 0 for all); None when the LP has no
    optimum. Types with small values are the ones good packings are made of."""
    result, fits, totals = _aggregate_lp(instance)
    if result.status != 0:
        return None
    rows = _aggregate_rows(instance, fits, totals)
    prices = -np.asarray(result.ineqlin.marginals, dtype=float)
    reduced = np.asarray(instance.cost - prices @ rows, dtype=float)
    share: np.ndarray = np.maximum(reduced, 0.0) / np.maximum(instance.cost, 1e-12)
    return share


def _aggregate_rows(instance: Instance, fits: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """The aggregate LP's constraint rows (one per sized dimension, then one per shape), each
    scaled so that its right-hand side is 1."""
    rows = [instance.capacity[:, d] / totals[d] for d in np.nonzero(totals > 0)[0]]
    rows += [fits[:, i] / instance.demand[i] for i in range(instance.shape_count)]
    return np.array(rows, dtype=float).reshape(len(rows), instance.type_count)


def _aggregate_lp(instance: Instance) -> tuple[Any, np.ndarray, np.ndarray]:
    """scipy's result of the aggregate LP (see the module docstring), the fit matrix and the
    total demand per dimension."""
    usable = _usable(instance)
    fits = fit_matrix(instance)
    totals = instance.demand @ instance.sizes
    rows = _aggregate_rows(instance, fits, totals)
    upper = [None if limit is None else float(limit) for limit in instance.max_count]
    bounds = [(0.0, 0.0 if not usable[t] else upper[t]) for t in range(instance.type_count)]
    result = linprog(instance.cost, A_ub=-rows, b_ub=-np.ones(len(rows)), bounds=bounds, method="highs")
    return result, fits, totals


def _limits_reason(instance: Instance, fits: np.ndarray, totals: np.ndarray) -> str:
    limits = np.array([0 if m is None else m for m in instance.max_count], dtype=np.int64)
    for i in range(instance.shape_count):
        room = int(limits @ fits[:, i])
        if room < instance.demand[i]:
            names = ", ".join(repr(n) for n, _ in instance.members[i])
            return (
                f"the max counts of the bin types leave room for {room} of the {int(instance.demand[i])} items {names}"
            )
    for d, dim in enumerate(instance.dimensions):
        room = int(limits @ instance.capacity[:, d])
        if room < totals[d]:
            return f"the max counts of the bin types offer {room} {dim} in total but the items need {int(totals[d])}"
    return "the max counts of the bin types are too small for the items"


def martello_toth_l2(sizes: np.ndarray, counts: np.ndarray, capacity: int) -> int:
    """Martello-Toth L2 for one dimension, items given as sizes with counts (all sizes <= capacity)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    best = 0
    thresholds = {0} | {int(s) for s in sizes if 2 * s <= capacity}
    for k in sorted(thresholds):
        large = sizes > capacity - k
        middle = (2 * sizes > capacity) & ~large
        small = (sizes >= k) & (2 * sizes <= capacity)
        middle_room = int(counts[middle].sum()) * capacity - int((sizes[middle] * counts[middle]).sum())
        spill = int((sizes[small] * counts[small]).sum()) - middle_room
        bound = int(counts[large].sum()) + int(counts[middle].sum()) + max(0, -(-spill // capacity))
        best = max(best, bound)
    return best


def bin_count_bound(instance: Instance) -> int:
    """Fewest bins any packing needs (max counts ignored)."""
    usable = _usable(instance)
    if not usable.any() or instance.shape_count == 0:
        return 0
    capacity = instance.capacity[usable]
    totals = instance.demand @ instance.sizes
    bound = 0
    for d in range(len(instance.dimensions)):
        largest = int(capacity[:, d].max())
        if totals[d] > 0 and largest > 0:
            bound = max(bound, -(-int(totals[d]) // largest))
    most = fit_matrix(instance)[usable].max(axis=0)
    for i in range(instance.shape_count):
        if most[i] > 0:
            bound = max(bound, -(-int(instance.demand[i]) // int(most[i])))
    if instance.type_count == 1:
        for d in range(len(instance.dimensions)):
            if instance.limited[0, d] and capacity[0, d] > 0:
                bound = max(bound, martello_toth_l2(instance.sizes[:, d], instance.demand, int(capacity[0, d])))
    return bound


def rounded_cost_bound(instance: Instance, cost_bound: float) -> tuple[float, int | None]:
    """The bound rounded up to the next possible packing cost (see `Instance.cost_step`), and with
    one common bin cost the matching number of bins: (cost, bins or None)."""
    step = instance.cost_step()
    if step is None or not math.isfinite(cost_bound):
        return cost_bound, None
    steps = max(0, math.ceil(cost_bound / step - 1e-6))
    bins = steps if instance.unit_cost() is not None else None
    return steps * step, bins


def assignment_bound(instance: Instance, pair_limit: int = ASSIGNMENT_PAIR_LIMIT) -> float | None:
    """A lower bound on the cost from the LP that assigns items to bin types: y_t bins of type t,
    x_it items of shape i on them,

        min sum_t cost_t y_t   s.t.  sum_t x_it = demand_i,
                                     sum_i size_id x_it <= capacity_td y_t   (every t, d),
                                     x_it <= fit_t(i) y_t,
                                     sum of x_it over the shapes larger than half of capacity_td <= y_t
                                     (every t, d: a bin holds one such item at most in each dimension),
                                     y_t <= max count.

    Unlike the aggregate LP, an item's sizes must all fit the type it is put on, which is what
    makes it stronger where no type suits every shape's mix, and the rows of large items, which
    make it stronger where items are large for their bins. None past `pair_limit` pairs of shape
    and type that fit, or when the LP has no optimum. Charged as work by its pairs.
    """
    fits = fit_matrix(instance)
    pairs = np.argwhere(fits > 0)  # (type, shape), in order
    if len(pairs) == 0 or len(pairs) > pair_limit:
        return None
    work.charge(len(pairs) / ASSIGNMENT_PAIRS_PER_UNIT)
    types, shapes, dims = instance.type_count, instance.shape_count, len(instance.dimensions)
    count = len(pairs)
    pair_type, pair_shape = pairs[:, 0], pairs[:, 1]
    x = np.arange(count)  # x variables first, then y
    y = count + pair_type
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    row = 0

    def add(row_ids: np.ndarray, col_ids: np.ndarray, values: np.ndarray) -> None:
        rows.append(row_ids)
        cols.append(col_ids)
        vals.append(values.astype(float))

    # Room per type and dimension: sum_i size_id x_it - capacity_td y_t <= 0.
    for d in range(dims):
        sized = instance.sizes[pair_shape, d] > 0
        add(row + pair_type[sized], x[sized], instance.sizes[pair_shape[sized], d])
        add(row + np.arange(types), count + np.arange(types), -instance.capacity[:, d])
        row += types
        large = sized & (2 * instance.sizes[pair_shape, d] > instance.capacity[pair_type, d])
        add(row + pair_type[large], x[large], np.ones(int(large.sum())))
        add(row + np.arange(types), count + np.arange(types), -np.ones(types))
        row += types
    # Items per bin: x_it - fit_t(i) y_t <= 0.
    add(row + np.arange(count), x, np.ones(count))
    add(row + np.arange(count), y, -fits[pair_type, pair_shape])
    row += count
    a_ub = csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(row, count + types))
    a_eq = csr_matrix((np.ones(count), (pair_shape, x)), shape=(shapes, count + types))
    cost = np.concatenate([np.zeros(count), instance.cost.astype(float)])
    usable = _usable(instance)
    bounds = [(0.0, None)] * count + [
        (0.0, 0.0 if not usable[t] else (None if m is None else float(m))) for t, m in enumerate(instance.max_count)
    ]
    result = linprog(
        cost,
        A_ub=a_ub,
        b_ub=np.zeros(row),
        A_eq=a_eq,
        b_eq=instance.demand.astype(float),
        bounds=bounds,
        method="highs-ds",
    )
    if result.status != 0:
        return None
    return float(result.fun) * (1 - LP_SAFETY)
