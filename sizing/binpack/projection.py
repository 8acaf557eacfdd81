"""Lower bounds from one dimension at a time: the cutting-stock LP of the items' sizes in it.

A packing of the items is also a packing of their sizes in any one dimension d (the same
bins, at the same cost), so a lower bound on the one-dimensional problem bounds the whole
one. Its column generation prices exactly and fast, by a table over the room
(`sizing.binpack.pricers.TablePricer`), and converges where column generation on the whole
problem, priced in several dimensions at once, stops short.

Where it pays: many nodes of one type whose pods fill one dimension (cpu) while the other
leaves them room. The aggregate LP treats cpu as fluid; the projection sees that two pods of
744 millicores leave 167 of a 1,655-millicore node that no other pod can use. On 20,036
trace-shaped pods on m5.large the cpu projection bounds the fleet at 7,170 nodes, where the
aggregate LP gives 6,975 and the optimum is 7,195.
"""

from __future__ import annotations

import numpy as np

from sizing.binpack import work
from sizing.binpack.colgen import SMOOTHING, column_generation
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance
from sizing.binpack.master_lp import ColumnPool, MasterLP
from sizing.binpack.pricers import TablePricer, table_pricing_applies

MAX_ROUNDS = 500
# A projection is given up once its master LP's value is within this share of the bound known
# already: its LP's value is no higher, so it could raise the bound by no more than that.
MIN_GAIN = 0.005


def project(instance: Instance, dimension: int) -> Instance | None:
    """The instance with items sized in `dimension` only (shapes of equal size there merged,
    items of size 0 there dropped: they need no room), bin types, costs and max counts kept.
    None when fewer than two sizes are left there (one size bounds no better than the aggregate
    LP's row for the dimension) or no bin type limits it. For bounds only: its shapes name no
    members."""
    if not instance.limited[:, dimension].any():
        return None
    sizes, shape_of = np.unique(instance.sizes[:, dimension], return_inverse=True)
    demand = np.bincount(shape_of.ravel(), weights=instance.demand, minlength=len(sizes)).astype(np.int64)
    sized = sizes > 0
    if int(sized.sum()) < 2:
        return None
    return Instance(
        dimensions=(instance.dimensions[dimension],),
        bin_names=instance.bin_names,
        capacity=instance.capacity[:, dimension : dimension + 1].copy(),
        limited=instance.limited[:, dimension : dimension + 1].copy(),
        cost=instance.cost,
        max_count=instance.max_count,
        sizes=sizes[sized].reshape(-1, 1),
        demand=demand[sized],
        members=tuple(() for _ in range(int(sized.sum()))),
    )


def projection_bound(
    instance: Instance, deadline: float, known: float = float("-inf"), target: float = float("inf")
) -> float:
    """The best lower bound on the cost (the problem's unit, USD/hour here) that the projections
    give within `deadline` on the work clock: each sized dimension's cutting-stock LP, tightest
    dimension first (most demand for the largest room), where its table pricing applies and its
    first-fit decreasing packing costs more than the bound `known` already (that packing's cost
    is above the projection's LP value, which could not raise the bound otherwise). Stops at
    the first projection that does not raise the bound, and once a bound reaches `target`.
    -inf when no projection applies (items sized in one dimension: the instance is its own
    projection)."""
    sized = np.nonzero((instance.sizes > 0).any(axis=0))[0]
    if len(sized) < 2:
        return float("-inf")
    totals = instance.demand @ instance.sizes
    largest = instance.capacity.max(axis=0)
    tightness = totals[sized] / np.maximum(largest[sized], 1)
    order = sized[np.lexsort((sized, -tightness))]
    best = float("-inf")
    for dimension in order.tolist():
        if work.now() >= deadline or best >= target:
            break
        projected = project(instance, dimension)
        if projected is None or not table_pricing_applies(projected):
            continue
        found = _cutting_stock_bound(projected, deadline, max(known, best), target)
        if found <= max(known, best):
            # The tightest dimension binds first: where its projection adds nothing, the
            # looser ones rarely do, and each costs as much.
            break
        best = found
    return best


def _cutting_stock_bound(projected: Instance, deadline: float, known: float, target: float) -> float:
    """Farley's bound of the one-dimensional instance's column generation (valid whenever it
    stops), started from its first-fit decreasing bins; -inf when those cost no more than
    `known`. The generation stops once its master LP's value is within MIN_GAIN of `known`."""
    pool = ColumnPool(projected.shape_count)
    start = first_fit_decreasing(projected)
    if start is not None:
        if start.cost(projected) <= known * (1 + 1e-9) + 1e-12:
            return float("-inf")
        for (t, counts), _ in start.bins:
            pool.add(t, counts)
    limits = projected.count_limits()
    generation = column_generation(
        projected,
        MasterLP(projected, pool),
        TablePricer(projected),
        projected.demand,
        limits,
        deadline,
        MAX_ROUNDS,
        target=target,
        smoothing=SMOOTHING,
        floor=known * (1 + MIN_GAIN),
    )
    return generation.bound
