"""Packings in the solver's numeric form, and turning them into the result.

A packing is a multiset of bins; a bin is a bin-type index and the number of
items of each shape it holds. The optimiser works with packings that cover at
least the demand; `exact_packing` removes the surplus (which never overfills a
bin), drops bins left empty and moves each bin to the cheapest bin type that
still holds it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from types import MappingProxyType
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np

from sizing.binpack.instance import Instance
from sizing.binpack.model import BinGroup

Bin = Tuple[int, Tuple[int, ...]]


@dataclass(frozen=True)
class Packing:
    """bins: (bin type index, items per shape) -> how many such bins, as sorted tuples."""

    bins: Tuple[Tuple[Bin, int], ...]

    @staticmethod
    def of(bins: Iterable[Tuple[Bin, int]]) -> "Packing":
        merged: Counter[Bin] = Counter()
        for (type_index, counts), multiplicity in bins:
            if multiplicity > 0:
                merged[(int(type_index), tuple(int(c) for c in counts))] += int(multiplicity)
        return Packing(tuple(sorted(merged.items())))

    def cost(self, instance: Instance) -> float:
        """Total cost (the unit of the bin costs, e.g. USD/hour)."""
        return float(sum(float(instance.cost[t]) * m for (t, _), m in self.bins))

    @property
    def bin_count(self) -> int:
        return sum(m for _, m in self.bins)

    def type_counts(self, type_count: int) -> np.ndarray:
        used = np.zeros(type_count, dtype=np.int64)
        for (t, _), m in self.bins:
            used[t] += m
        return used

    def covered(self, shape_count: int) -> np.ndarray:
        total = np.zeros(shape_count, dtype=np.int64)
        for (_, counts), m in self.bins:
            total += np.asarray(counts, dtype=np.int64) * m
        return total


def better(a: Optional[Packing], b: Optional[Packing], instance: Instance) -> bool:
    """Whether `a` beats `b`: lower cost, then fewer bins (None never beats anything)."""
    if a is None:
        return False
    if b is None:
        return True
    cost_a, cost_b = a.cost(instance), b.cost(instance)
    tolerance = 1e-9 * max(1.0, abs(cost_b))
    if cost_a < cost_b - tolerance:
        return True
    return cost_a <= cost_b + tolerance and a.bin_count < b.bin_count


def respects_limits(packing: Packing, instance: Instance) -> bool:
    used = packing.type_counts(instance.type_count)
    return all(limit is None or used[t] <= limit for t, limit in enumerate(instance.max_count))


def exact_packing(packing: Packing, instance: Instance) -> Packing:
    """The same bins holding exactly the demand, empties dropped, each on its cheapest fitting type.

    Surplus items come out of the last bins first (in the packing's sorted order), so the
    result is deterministic.
    """
    bins: List[Tuple[int, np.ndarray]] = []
    for (t, counts), m in packing.bins:
        for _ in range(m):
            bins.append((t, np.array(counts, dtype=np.int64)))
    surplus = packing.covered(instance.shape_count) - instance.demand
    for index in range(len(bins) - 1, -1, -1):
        if not (surplus > 0).any():
            break
        bin_counts = bins[index][1]
        removed = np.minimum(bin_counts, np.maximum(surplus, 0))
        bin_counts -= removed
        surplus -= removed
    bins = [(t, counts) for t, counts in bins if counts.any()]
    return Packing.of(((t, tuple(c)), 1) for t, c in _cheapest_types(bins, instance))


def _cheapest_types(bins: List[Tuple[int, np.ndarray]], instance: Instance) -> List[Tuple[int, np.ndarray]]:
    """Move bins to cheaper types that still hold their items, within the max counts."""
    used = np.zeros(instance.type_count, dtype=np.int64)
    for t, _ in bins:
        used[t] += 1
    limits = np.array([np.iinfo(np.int64).max if m is None else m for m in instance.max_count], dtype=np.int64)
    by_price = np.lexsort((np.arange(instance.type_count), instance.cost))
    result: Dict[int, Tuple[int, np.ndarray]] = {}
    # Fullest bins choose first: they have the fewest options.
    for b in sorted(range(len(bins)), key=lambda b: -int(bins[b][1].sum())):
        t, counts = bins[b]
        load = counts @ instance.sizes
        cheaper = by_price[instance.cost[by_price] < instance.cost[t]]
        holds = cheaper[(instance.capacity[cheaper] >= load).all(axis=1) & (used[cheaper] < limits[cheaper])]
        if len(holds):
            used[holds[0]] += 1
            used[t] -= 1
            t = int(holds[0])
        result[b] = (t, counts)
    return [result[b] for b in range(len(bins))]


def overfilled(packing: Packing, instance: Instance) -> List[Bin]:
    """Bins whose items exceed the bin type's capacity in some dimension."""
    bad = []
    for (t, counts), _ in packing.bins:
        load = np.asarray(counts, dtype=np.int64) @ instance.sizes
        if (load > instance.capacity[t]).any():
            bad.append((t, counts))
    return bad


def bin_groups(packing: Packing, instance: Instance) -> Tuple[BinGroup, ...]:
    """The packing by bin type and item name; identical bins grouped with a count.

    An exact packing is assumed. Items of a shape that merges several names are
    handed out name by name, in input order, bin after bin.
    """
    remaining = [list(members) for members in instance.members]
    named: Counter[Tuple[str, Tuple[Tuple[str, int], ...]]] = Counter()
    for (t, counts), m in packing.bins:
        for _ in range(m):
            items: Dict[str, int] = {}
            for shape, count in enumerate(counts):
                while count > 0:
                    name, left = remaining[shape][0]
                    take = min(left, count)
                    items[name] = items.get(name, 0) + take
                    count -= take
                    if take == left:
                        remaining[shape].pop(0)
                    else:
                        remaining[shape][0] = (name, left - take)
            named[(instance.bin_names[t], tuple(sorted(items.items())))] += 1
    groups = [
        BinGroup(bin_type=name, count=count, items=MappingProxyType(dict(items)))
        for (name, items), count in named.items()
    ]
    groups.sort(key=lambda g: (g.bin_type, -g.count, sorted(g.items.items())))
    return tuple(groups)
