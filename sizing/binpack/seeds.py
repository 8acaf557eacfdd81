"""Columns to start column generation with: the first-fit-decreasing packings of the bin types
the aggregate LP ranks best.

With many bin types the master LP over the first packing's bins alone starts far from its
optimum and tails off: each round prices a few types and adds a handful of columns. Each good
type's own FFD packing of the items it can hold gives the LP well-filled bins of that type from
the start, for the cost of one vectorised first fit per type.
"""

from __future__ import annotations

import numpy as np

from sizing.binpack import work
from sizing.binpack.bounds import aggregate_reduced_costs
from sizing.binpack.ffd import first_fit_bins, single_type
from sizing.binpack.instance import Instance, fit_counts
from sizing.binpack.master_lp import ColumnPool

# Bin-shape cells (bins opened x shapes) a first fit and the merging of its bins go through per unit.
SEED_CELLS_PER_UNIT = 5_000
# Shapes a first fit places per unit of work (numpy's overhead per shape).
SHAPES_PER_UNIT = 20
# Types seeded, and about how many bins of each the seeding packs.
SEED_TYPES = 16
SEED_BINS = 200


def seed_pool(pool: ColumnPool, instance: Instance, deadline: float, type_count: int = SEED_TYPES) -> int:
    """Add to `pool` the distinct bins of FFD packings, each of the items that fit one type (a
    sample of them when they fill many bins), for the `type_count` types the aggregate LP ranks
    best (smallest reduced cost for their cost), until the work clock passes `deadline`; returns
    how many columns were new.

    Types with a max count are left out: their packings could open more bins than allowed.
    """
    reduced = aggregate_reduced_costs(instance)
    if reduced is None:
        return 0
    candidates = [t for t in range(instance.type_count) if instance.max_count[t] is None]
    ranked = sorted(candidates, key=lambda t: (float(reduced[t]), t))[:type_count]
    added = 0
    for t in ranked:
        if work.now() > deadline:
            break
        demand = _sample(instance, t)
        work.charge(instance.shape_count / SHAPES_PER_UNIT)
        if not demand.any():
            continue
        bins = first_fit_bins(instance, single_type(t), demand)
        assert bins is not None  # every item left in `demand` fits the type, which has no max count
        _, counts = bins
        work.charge(counts.size / SEED_CELLS_PER_UNIT)
        for row in np.unique(counts, axis=0):
            added += pool.add(t, row.tolist())
    return added


def _sample(instance: Instance, type_index: int) -> np.ndarray:
    """The items of the shapes that fit the type, scaled down (each shape keeping at least one)
    so that they fill about SEED_BINS bins of it: the mix, not the count, shapes the bins FFD makes."""
    demand = np.where(
        fit_counts(instance.capacity[type_index], instance.sizes, instance.demand) > 0, instance.demand, 0
    )
    totals = demand @ instance.sizes
    capacity = instance.capacity[type_index]
    sized = capacity > 0
    bins = float((totals[sized] / capacity[sized]).max(initial=0.0))
    if bins <= SEED_BINS:
        return demand
    return np.ceil(demand * (SEED_BINS / bins)).astype(np.int64)
