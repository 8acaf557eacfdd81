"""Two bins onto one cheaper bin: a local improvement of a packing with several bin types.

A packing rounded from the master LP, or packed by first-fit decreasing, often leaves two
partly filled bins whose items together fit, in every dimension, one bin of a type that costs
less than the two bins together (with many bin types: the items of two small bins in one
larger bin). `merge_bins` finds such pairs among the packing's distinct bins, merges the pairs
that save the most, each bin in at most one merge per round, and repeats until no pair saves
anything or the work runs out.

A round looks at every pair of distinct bins (a bin with itself where the packing holds two
copies) against the bin types cheaper than the pair, cheapest first: MERGE_GROUP_LIMIT distinct
bins bound that, and a round is charged its pair-and-type checks. A bin type with a count limit
takes a merged bin only within that limit. Costs are the bin types' costs, in the problem's own
unit (e.g. USD/hour).
"""

from __future__ import annotations

import numpy as np

from sizing.binpack import work
from sizing.binpack.instance import Instance
from sizing.binpack.packing import Packing

# Distinct bins (type and content) above which no merge is tried: a round is quadratic in them.
MERGE_GROUP_LIMIT = 300
# Pair, type and dimension comparisons worth one unit of work.
MERGE_CHECKS_PER_UNIT = 1_000_000
# A merge must save more than this share of the cheaper bin type's cost (rounding noise).
MERGE_TOLERANCE = 1e-9


def merge_bins(instance: Instance, packing: Packing, deadline: float) -> Packing:
    """`packing` with pairs of bins merged onto one cheaper bin where that lowers the cost;
    the same packing when nothing merges, when it has more than MERGE_GROUP_LIMIT distinct
    bins, or when the work clock passes `deadline` before a round."""
    current = packing
    while work.now() < deadline:
        merged = _merge_round(instance, current)
        if merged is None:
            break
        current = merged
    return current


def _cheapest_targets(
    instance: Instance,
    pair_loads: np.ndarray,
    first_types: np.ndarray,
    second_types: np.ndarray,
    used: np.ndarray,
    limits: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of bins: the cheapest type that holds both loads, and what moving them onto it
    saves (-inf where none does). Types are tried cheapest first, each only on the pairs still
    without one that it could save on, so memory stays at pairs x dimensions whatever the types.
    A limited type takes a merged bin only where it has one to spare, or where the pair frees
    one of its own."""
    cost = instance.cost
    pair_cost = cost[first_types] + cost[second_types]
    target = np.full(len(pair_loads), -1, dtype=np.int64)
    open_pairs = np.arange(len(pair_loads))
    checks = 0
    for t in np.argsort(cost, kind="stable").tolist():
        open_pairs = open_pairs[pair_cost[open_pairs] > cost[t]]
        if not len(open_pairs):
            break
        checks += len(open_pairs)
        fits = (pair_loads[open_pairs] <= instance.capacity[t]).all(axis=1)
        if limits[t] >= 0 and used[t] >= limits[t]:
            fits &= (first_types[open_pairs] == t) | (second_types[open_pairs] == t)
        target[open_pairs[fits]] = t
        open_pairs = open_pairs[~fits]
    work.charge(checks * instance.capacity.shape[1] / MERGE_CHECKS_PER_UNIT)
    saving = np.where(target >= 0, pair_cost - cost[np.maximum(target, 0)], -np.inf)
    return target, saving


def _merge_round(instance: Instance, packing: Packing) -> Packing | None:
    """One round: the best-saving disjoint merges, or None when no pair saves anything."""
    groups = list(packing.bins)
    count = len(groups)
    if count < 1 or count > MERGE_GROUP_LIMIT:
        return None
    types = np.array([t for (t, _), _ in groups], dtype=np.int64)
    contents = np.array([counts for (_, counts), _ in groups], dtype=np.int64)
    copies = np.array([m for _, m in groups], dtype=np.int64)
    loads = contents @ instance.sizes
    first, second = np.triu_indices(count)
    # A bin pairs with itself only where the packing holds two of it.
    keep = (first != second) | (copies[first] >= 2)
    first, second = first[keep], second[keep]
    if not len(first):
        return None
    pair_loads = loads[first] + loads[second]
    used = packing.type_counts(instance.type_count)
    limits = instance.count_limits()
    target, saving = _cheapest_targets(instance, pair_loads, types[first], types[second], used, limits)
    worth = saving > MERGE_TOLERANCE * float(instance.cost.min())
    if not worth.any():
        return None
    order = np.lexsort((second, first, -saving))
    left = copies.copy()
    merged: list[tuple[tuple[int, tuple[int, ...]], int]] = []
    for k in order.tolist():
        if not worth[k]:
            break
        a, b, t = int(first[k]), int(second[k]), int(target[k])
        needed_a = 2 if a == b else 1
        if left[a] < needed_a or left[b] < 1:
            continue
        if limits[t] >= 0 and t not in (int(types[a]), int(types[b])) and used[t] >= limits[t]:
            continue
        left[a] -= 1
        left[b] -= 1
        used[types[a]] -= 1
        used[types[b]] -= 1
        used[t] += 1
        merged.append(((t, tuple((contents[a] + contents[b]).tolist())), 1))
    kept = [((int(types[g]), tuple(contents[g].tolist())), int(left[g])) for g in range(count)]
    return Packing.of(kept + merged)
