"""First-fit decreasing for several bin types: the fast baseline and fallback.

Items are taken by decreasing size (sum over dimensions of size / largest
capacity), all items of a shape together; each goes into the first open bin
with room for it. Items of one shape are identical, so first fit can place
them in bulk: bin after bin, as many as fit. When no open bin has room a new
bin is opened, of a type chosen by a `TypeChoice`:

* a single bin type throughout (classic FFD; tried for every type), or
* the type with the lowest cost per item of the shape being placed.

`first_fit_decreasing` returns the cheapest (then fewest-bins) of these.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sizing.binpack.instance import Instance, fit_counts
from sizing.binpack.packing import Packing, better

# (instance, shape, items still to place, bins used per type) -> bin type or None
TypeChoice = Callable[[Instance, int, int, np.ndarray], int | None]


def _available(instance: Instance, type_index: int, used: np.ndarray) -> int:
    """How many more bins of the type may be opened (a large number when unlimited)."""
    limit = instance.max_count[type_index]
    return 1 << 62 if limit is None else max(0, limit - int(used[type_index]))


def single_type(type_index: int) -> TypeChoice:
    def choose(instance: Instance, shape: int, remaining: int, used: np.ndarray) -> int | None:
        fits = fit_counts(instance.capacity[type_index], instance.sizes[shape : shape + 1], np.array([remaining]))[0]
        return type_index if fits > 0 and _available(instance, type_index, used) > 0 else None

    return choose


def cheapest_per_item(instance: Instance, shape: int, remaining: int, used: np.ndarray) -> int | None:
    size = instance.sizes[shape]
    fits = np.full(instance.type_count, remaining, dtype=np.int64)
    for d in np.nonzero(size > 0)[0]:
        fits = np.minimum(fits, instance.capacity[:, d] // size[d])
    available = np.array([_available(instance, t, used) > 0 for t in range(instance.type_count)])
    candidates = np.nonzero((fits > 0) & available)[0]
    if not len(candidates):
        return None
    per_item = instance.cost[candidates] / fits[candidates]
    # Lowest cost per item, then lowest cost, then first type.
    return int(candidates[np.lexsort((candidates, instance.cost[candidates], per_item))[0]])


def size_order(instance: Instance) -> list[int]:
    """Shapes by decreasing normalised size, ties by shape index."""
    scale = np.maximum(instance.capacity.max(axis=0), 1).astype(float)
    weight = (instance.sizes / scale).sum(axis=1)
    return sorted(range(instance.shape_count), key=lambda i: (-weight[i], i))


def pack(
    instance: Instance,
    choose: TypeChoice,
    demand: np.ndarray | None = None,
    used: np.ndarray | None = None,
) -> Packing | None:
    """First-fit decreasing with the given type choice; None when some item cannot be placed.

    demand: items per shape to place (default: all); used: bins per type already opened
    elsewhere, which count against the max counts.
    """
    bins = first_fit_bins(instance, choose, demand, used)
    if bins is None:
        return None
    types, counts = bins
    if not len(types):
        return Packing(())
    # Identical bins merged and sorted as Packing.of does, thousands of rows at once.
    rows, multiplicity = np.unique(np.column_stack([types, counts]), axis=0, return_counts=True)
    return Packing(
        tuple(((row[0], tuple(row[1:])), m) for row, m in zip(rows.tolist(), multiplicity.tolist(), strict=True))
    )


def first_fit_bins(
    instance: Instance,
    choose: TypeChoice,
    demand: np.ndarray | None = None,
    used: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The bins `pack` opens, in opening order: their types and their items per shape (one row
    per bin, identical bins not merged); None when some item cannot be placed."""
    demand = instance.demand if demand is None else demand
    shapes, dims = instance.shape_count, len(instance.dimensions)
    types: list[int] = []
    loads = np.zeros((0, dims), dtype=np.int64)
    counts = np.zeros((0, shapes), dtype=np.int64)
    used = np.zeros(instance.type_count, dtype=np.int64) if used is None else used.copy()
    for shape in size_order(instance):
        remaining = int(demand[shape])
        size = instance.sizes[shape]
        if remaining and len(types):
            room = instance.capacity[np.array(types)] - loads
            fits = np.full(len(types), remaining, dtype=np.int64)
            for d in np.nonzero(size > 0)[0]:
                fits = np.minimum(fits, room[:, d] // size[d])
            before = np.cumsum(fits) - fits
            take = np.clip(remaining - before, 0, fits)
            loads += np.outer(take, size)
            counts[:, shape] += take
            remaining -= int(take.sum())
        while remaining:
            t = choose(instance, shape, remaining, used)
            if t is None:
                return None
            per_bin = int(fit_counts(instance.capacity[t], instance.sizes[shape : shape + 1], np.array([remaining]))[0])
            opened = min(-(-remaining // per_bin), _available(instance, t, used))
            fill = np.full(opened, per_bin, dtype=np.int64)
            fill[-1] = min(per_bin, remaining - per_bin * (opened - 1))
            new_counts = np.zeros((opened, shapes), dtype=np.int64)
            new_counts[:, shape] = fill
            types.extend([t] * opened)
            loads = np.vstack([loads, np.outer(fill, size)])
            counts = np.vstack([counts, new_counts])
            used[t] += opened
            remaining -= int(fill.sum())
    return np.array(types, dtype=np.int64), counts


def _cost_floor(instance: Instance, type_index: int, demand: np.ndarray) -> float:
    """No packing of `demand` into bins of this type alone costs less (USD/hour or the costs' unit)."""
    total = demand @ instance.sizes
    capacity = instance.capacity[type_index]
    bins = max((-(-int(total[d]) // int(capacity[d])) for d in range(len(capacity)) if capacity[d] > 0), default=0)
    return bins * float(instance.cost[type_index])


def _distinct_types(instance: Instance) -> list[int]:
    """Types for the single-type variants: of unlimited types with the same capacity, only the
    cheapest (first on ties), since they would pack identically."""
    chosen: list[int] = []
    cheapest: dict[tuple[int, ...], int] = {}
    for t in range(instance.type_count):
        if instance.max_count[t] is not None:
            chosen.append(t)
            continue
        key = tuple(int(c) for c in instance.capacity[t])
        if key not in cheapest or instance.cost[t] < instance.cost[cheapest[key]]:
            cheapest[key] = t
    return sorted(chosen + list(cheapest.values()))


def first_fit_decreasing(
    instance: Instance, demand: np.ndarray | None = None, used: np.ndarray | None = None
) -> Packing | None:
    """The best of the FFD variants (cheapest, then fewest bins); None if none packs every item.

    demand and used as for `pack`.
    """
    wanted = instance.demand if demand is None else demand
    choices: list[tuple[TypeChoice, int | None]] = [(single_type(t), t) for t in _distinct_types(instance)]
    if instance.type_count > 1:
        choices.append((cheapest_per_item, None))
    best: Packing | None = None
    for choose, only in choices:
        if only is not None and best is not None:
            # A single type whose cheapest conceivable packing costs more cannot be better.
            best_cost = best.cost(instance)
            if _cost_floor(instance, only, wanted) > best_cost + 1e-9 * max(1.0, abs(best_cost)):
                continue
        packing = pack(instance, choose, demand, used)
        if better(packing, best, instance):
            best = packing
    return best
