"""Packings from the master LP: rounding down with a repair, and diving.

`round_down` keeps floor(x_j) copies of every column and packs what is left
with first-fit decreasing: quick, and close to the LP when bins hold many
items.

`dive` rounds one decision at a time, re-pricing in between. Each step solves
the master LP for the items still to place (with a few rounds of column
generation), then fixes bins: every column with an LP value of at least 1 is
fixed that many times, or else the column with the largest value once. Fixed
bins take only items still needed. The dive stops early when the fixed cost
plus a valid bound for the rest cannot beat the best packing known; when time
runs out, first-fit decreasing places the items still left.
"""

from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np

from sizing.binpack import work
from sizing.binpack.bounds import rounded_cost_bound
from sizing.binpack.colgen import Pricer, column_generation
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance
from sizing.binpack.master_lp import MasterLP, MasterSolution
from sizing.binpack.packing import Packing

def round_down(instance: Instance, master_lp: MasterLP, master: MasterSolution) -> Optional[Packing]:
    """floor(x) of every column, trimmed to the demand, plus FFD for the rest (None if that fails)."""
    demand = instance.demand.copy()
    used = np.zeros(instance.type_count, dtype=np.int64)
    fixed: List[Tuple[Tuple[int, Tuple[int, ...]], int]] = []
    for j in np.nonzero(master.x >= 1 - 1e-6)[0]:
        t, counts = master_lp.pool.columns[j]
        copies = int(math.floor(master.x[j] + 1e-6))
        limit = instance.max_count[t]
        if limit is not None:
            copies = min(copies, limit - int(used[t]))
        column = np.array(counts, dtype=np.int64)
        for _ in range(copies):
            take = np.minimum(column, demand)
            if not take.any():
                break
            fixed.append(((t, tuple(take)), 1))
            used[t] += 1
            demand -= take
    rest = first_fit_decreasing(instance, demand, used) if demand.any() else Packing(())
    if rest is None:
        return None
    return Packing.of(fixed + list(rest.bins))


def dive(
    instance: Instance,
    master_lp: MasterLP,
    pricer: Pricer,
    incumbent_cost: float,
    deadline: float,
    rounds_per_step: int,
) -> Optional[Packing]:
    """A packing cheaper than `incumbent_cost`, or None if the dive finds none in time.

    rounds_per_step: most master LPs (column generation rounds) per fixing step.
    """
    demand = instance.demand.copy()
    limits = np.array([-1 if m is None else m for m in instance.max_count], dtype=np.int64)
    fixed: List[Tuple[int, Tuple[int, ...]]] = []
    fixed_cost = 0.0
    tolerance = 1e-9 * max(1.0, incumbent_cost)
    while demand.any():
        if work.now() > deadline:
            break
        result = column_generation(instance, master_lp, pricer, demand, limits, deadline, rounds_per_step)
        master = result.master
        if master is None or master.uncovered > 1e-6:
            return None
        rest, _ = rounded_cost_bound(instance, result.bound)
        if fixed_cost + rest >= incumbent_cost - tolerance:
            return None
        columns = master_lp.pool.columns
        chosen = [(int(j), int(math.floor(master.x[j] + 1e-6))) for j in np.nonzero(master.x >= 1 - 1e-6)[0]]
        if not chosen:
            chosen = [(int(np.argmax(master.x)), 1)]
        for j, copies in chosen:
            t, counts = columns[j]
            for _ in range(copies):
                if limits[t] == 0:
                    break
                take = np.minimum(np.array(counts, dtype=np.int64), demand)
                if not take.any():
                    break
                fixed.append((t, tuple(take)))
                fixed_cost += float(instance.cost[t])
                demand -= take
                if limits[t] > 0:
                    limits[t] -= 1
    bins = [(column, 1) for column in fixed]
    if demand.any():
        # Out of time: first-fit decreasing places what is left.
        used = np.array([0 if m is None else m - limits[t] for t, m in enumerate(instance.max_count)], dtype=np.int64)
        leftover = first_fit_decreasing(instance, demand, used)
        if leftover is None:
            return None
        bins.extend(leftover.bins)
    packing = Packing.of(bins)
    return packing if packing.cost(instance) < incumbent_cost - tolerance else None
