"""Packings in the solver's numeric form, and turning them into the result.

A packing is a multiset of bins; a bin is a bin-type index and the number of
items of each shape it holds. The optimiser works with packings that cover at
least the demand; `exact_packing` removes the surplus (which never overfills a
bin), drops bins left empty and moves each bin to the cheapest bin type that
still holds it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from sizing.binpack.instance import Instance
from sizing.binpack.model import BinGroup

Bin = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class Packing:
    """bins: (bin type index, items per shape) -> how many such bins, as sorted tuples."""

    bins: tuple[tuple[Bin, int], ...]

    @staticmethod
    def of(bins: Iterable[tuple[Bin, int]]) -> Packing:
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


def better(a: Packing | None, b: Packing | None, instance: Instance) -> bool:
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
    result is deterministic. Identical bins are handled as one group with a count: a fleet of
    thousands of nodes of a few kinds costs a few steps, not one per node.
    """
    groups: list[tuple[int, np.ndarray, int]] = [
        (t, np.array(counts, dtype=np.int64), m) for (t, counts), m in packing.bins
    ]
    surplus = packing.covered(instance.shape_count) - instance.demand
    # Each group's trimmed copies (its last ones), last first; the copies left whole stay grouped.
    trimmed: list[list[tuple[int, np.ndarray, int]]] = [[] for _ in groups]
    index = len(groups) - 1
    while index >= 0 and (surplus > 0).any():
        t, counts, copies = groups[index]
        while copies > 0:
            removed = np.minimum(counts, np.maximum(surplus, 0))
            if not removed.any():
                break  # nor would its other copies, which hold the same items
            surplus -= removed
            trimmed[index].append((t, counts - removed, 1))
            copies -= 1
        groups[index] = (t, counts, copies)
        index -= 1
    # In the bins' order: the fullest choose their type first and ties keep this order.
    ordered = [bin_ for group, cut in zip(groups, trimmed, strict=True) for bin_ in [group, *reversed(cut)]]
    kept = [group for group in ordered if group[2] > 0 and group[1].any()]
    return Packing.of(((t, tuple(c)), m) for t, c, m in _cheapest_types(kept, instance))


def _cheapest_types(groups: list[tuple[int, np.ndarray, int]], instance: Instance) -> list[tuple[int, np.ndarray, int]]:
    """Move bins to cheaper types that still hold their items, within the max counts. Groups
    are (type, items per shape, how many such bins); a group may split over several types."""
    used = np.zeros(instance.type_count, dtype=np.int64)
    for t, _, copies in groups:
        used[t] += copies
    limits = np.array([np.iinfo(np.int64).max if m is None else m for m in instance.max_count], dtype=np.int64)
    by_price = np.lexsort((np.arange(instance.type_count), instance.cost))
    result: list[tuple[int, np.ndarray, int]] = []
    # Fullest bins choose first: they have the fewest options. Each takes the cheapest type that
    # holds it and has room left under its max count.
    for g in sorted(range(len(groups)), key=lambda g: -int(groups[g][1].sum())):
        t, counts, left = groups[g]
        load = counts @ instance.sizes
        cheaper = by_price[instance.cost[by_price] < instance.cost[t]]
        for h in cheaper[(instance.capacity[cheaper] >= load).all(axis=1)].tolist():
            moved = int(min(left, limits[h] - used[h]))
            if moved <= 0:
                continue
            used[h] += moved
            used[t] -= moved
            left -= moved
            result.append((h, counts, moved))
            if not left:
                break
        if left:
            result.append((t, counts, left))
    return result


def overfilled(packing: Packing, instance: Instance) -> list[Bin]:
    """Bins whose items exceed the bin type's capacity in some dimension."""
    bad = []
    for (t, counts), _ in packing.bins:
        load = np.asarray(counts, dtype=np.int64) @ instance.sizes
        if (load > instance.capacity[t]).any():
            bad.append((t, counts))
    return bad


def bin_groups(packing: Packing, instance: Instance) -> tuple[BinGroup, ...]:
    """The packing by bin type and item name; identical bins grouped with a count.

    An exact packing is assumed. Items of a shape that merges several names are
    handed out name by name, in input order, bin after bin.
    """
    remaining = [list(members) for members in instance.members]
    named: Counter[tuple[str, tuple[tuple[str, int], ...]]] = Counter()
    for (t, counts), m in packing.bins:
        for _ in range(m):
            items: dict[str, int] = {}
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
