"""One bin fewer by local search on partial packings: one unlimited bin type, few items.

To turn a packing of k bins into one of k - 1, the search keeps k - 3 of its bins, each
within its room, and sets the items of the other three aside. It then trades items between
the kept bins and the set-aside ones, never overfilling a kept bin, so that what is set aside
weighs less and less; once the set-aside items fit in two bins, those two bins and the kept
ones pack everything in k - 1. It then goes on from that packing towards k - 2, until the
lower bound it is given or the work runs out. An attempt that leaves no less weight aside for
STALL_STEPS steps starts again from the same packing with the next three lightest bins set
aside. (A simplified form of the consistent neighbourhood search of Buljubašić and Vasquez,
Computers & Operations Research, 2016.)

An item's weight is its size as a share of the bin's room, summed over the dimensions the bin
names, each dimension weighed by how scarce it is to a packing of one bin fewer: by the inverse of
the room that packing would leave unused in it (its bins' room less the items' total, at least
MIN_SLACK of a bin), the scarcest weighing 1. With one dimension that is the plain share. Scarce
dimensions are the ones a packing of fewer bins must fill: on 3-D vector instances whose bins are
all but full in one dimension and far from it in the others, weighing the three alike left the
search a bin above the optimum after 30 s, and weighing them by scarcity reached it in a fraction
of a second. Two kinds of move:

* exchange: up to two items of one kept bin are set aside, and one or two set-aside items go
  into that bin in their place, where they fit. Each step makes the move that leaves the least
  weight aside, even when that is more than before (a tabu search): an item set aside from a
  bin may not go back into it for TABU_TENURE steps, unless the move leaves less weight aside
  than ever before in this attempt.
* refill, when items are sized in one dimension: every REFILL_EVERY steps, each kept bin in
  turn takes the fullest set of its own and the set-aside items that fits its room (exact,
  by subset sums, where their bitsets stay within SUBSET_SUM_BITS), which only ever lowers the
  weight set aside.

The search is deterministic and charges its work: each step, the (kept subset, set-aside
subset) pairs it weighed.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from sizing.binpack import work
from sizing.binpack.instance import Instance
from sizing.binpack.packing import Packing

# Items (over all shapes) the search handles at most: it keeps each item apart.
ITEM_LIMIT = 1500
# Move pairs one step may weigh (bins of many small items make many): the search ends before a
# step that would weigh more, since a step is not cut short.
STEP_PAIR_LIMIT = 2_000_000
# Bins set aside per attempt; what they held must end in one fewer.
BINS_SET_ASIDE = 3
TABU_TENURE = 50
REFILL_EVERY = 25
# Move pairs weighed per unit of work in one dimension (about a millisecond on the reference machine).
PAIRS_PER_UNIT = 45_000
STEP_UNITS = 0.3
# Setting up an attempt (loads, order, every kept bin's subsets), per bin.
ATTEMPT_UNITS_PER_BIN = 0.03
# An attempt ends after this many steps without leaving less weight aside than ever before.
STALL_STEPS = 3000
# Move pairs times dimensions evaluated at once, at most (bounds the memory of a step).
BLOCK_CELLS = 200_000
# Bits of the subset-sum bitsets of one call, at most (items x room), and per unit of work:
# beyond the limit, a refill skips the bin and a split into two bins is tried exhaustively.
SUBSET_SUM_BITS = 20_000_000
SUBSET_SUM_BITS_PER_UNIT = 20_000_000
# Set-aside items tried exhaustively for a split into two bins, at most.
SPLIT_ITEM_LIMIT = 16
# Unused room (in bins) a dimension's scarcity is reckoned with at least, so that a dimension
# its items fill exactly does not make the others weigh nothing.
MIN_SLACK = 0.05


def applies(instance: Instance) -> bool:
    """One bin type with no max count, and at most ITEM_LIMIT items."""
    return instance.type_count == 1 and instance.max_count[0] is None and 0 < int(instance.demand.sum()) <= ITEM_LIMIT


@dataclass
class _State:
    """Kept bins (item lists and loads) and the set-aside items, over items 0..n-1."""

    sizes: np.ndarray  # (n, D) integer sizes
    weight: np.ndarray  # (n,) share of the room, summed over the named dimensions
    room: np.ndarray  # (D,)
    bins: list[list[int]]
    loads: np.ndarray  # (K, D)
    aside: list[int]

    def aside_weight(self) -> float:
        return float(self.weight[self.aside].sum()) if self.aside else 0.0


def eliminate_bins(instance: Instance, packing: Packing, lower_bins: int, deadline: float) -> Packing | None:
    """A packing of fewer bins than `packing` (the fewest found, down to `lower_bins`), or None
    when none is found before the work clock reaches `deadline`. See the module docstring."""
    if not applies(instance) or packing.bin_count <= max(lower_bins, BINS_SET_ASIDE):
        return None
    shape_of = np.repeat(np.arange(instance.shape_count), instance.demand)
    sizes = instance.sizes[shape_of].astype(np.int64)
    room = instance.capacity[0].astype(np.int64)
    named = instance.limited[0] & (room > 0)
    shares = sizes[:, named] / room[named]
    bins = _item_bins(packing, shape_of, instance.shape_count)
    best: list[list[int]] | None = None
    attempt = 0
    while len(bins) - 1 >= max(lower_bins, BINS_SET_ASIDE) and work.now() < deadline:
        try:
            fewer = _one_bin_fewer(sizes, item_weights(shares, len(bins) - 1), room, bins, deadline, attempt)
        except _TooLarge:
            break
        if fewer is None:
            # A stalled attempt starts again with the next lightest bins set aside.
            attempt += 1
            if (attempt + 1) * BINS_SET_ASIDE > len(bins):
                break
            continue
        best = bins = fewer
        attempt = 0
    if best is None:
        return None
    return Packing.of(((0, tuple(np.bincount(shape_of[b], minlength=instance.shape_count).tolist())), 1) for b in best)


def item_weights(shares: np.ndarray, target_bins: int) -> np.ndarray:
    """Each item's weight for a search towards `target_bins` bins: its shares of the bin's room
    (items x named dimensions), each dimension scaled by the inverse of the room, in bins, that
    the target leaves unused in it (at least MIN_SLACK), the scarcest dimension by 1; zero where
    the bin names no dimension."""
    if shares.shape[1] == 0:
        return np.zeros(shares.shape[0])
    slack = np.maximum(target_bins - shares.sum(axis=0), MIN_SLACK)
    scarcity = slack.min() / slack
    weights: np.ndarray = shares @ scarcity
    return weights


class _TooLarge(Exception):
    """A step would weigh more than STEP_PAIR_LIMIT move pairs."""


def _item_bins(packing: Packing, shape_of: np.ndarray, shape_count: int) -> list[list[int]]:
    """The packing's bins as lists of item indices (items of a shape in index order); a cover's
    surplus is dropped."""
    first = np.searchsorted(shape_of, np.arange(shape_count))
    taken = np.zeros(shape_count, dtype=np.int64)
    demand = np.bincount(shape_of, minlength=shape_count)
    bins: list[list[int]] = []
    for (_, counts), multiplicity in packing.bins:
        for _ in range(multiplicity):
            items: list[int] = []
            for shape, count in enumerate(counts):
                take = min(int(count), int(demand[shape] - taken[shape]))
                items.extend(range(int(first[shape] + taken[shape]), int(first[shape] + taken[shape] + take)))
                taken[shape] += take
            if items:
                bins.append(items)
    return bins


def _one_bin_fewer(
    sizes: np.ndarray,
    weight: np.ndarray,
    room: np.ndarray,
    bins: list[list[int]],
    deadline: float,
    attempt: int,
) -> list[list[int]] | None:
    """Bins holding every item, one fewer than `bins`, or None by the deadline or after
    STALL_STEPS steps without progress. Attempt a sets aside the bins of rank 3a to 3a + 2 by
    weight, lightest first: they hold the least weight to place elsewhere."""
    work.charge(len(bins) * ATTEMPT_UNITS_PER_BIN)
    loads = np.array([sizes[b].sum(axis=0) for b in bins])
    order = sorted(range(len(bins)), key=lambda k: (float(weight[bins[k]].sum()), k))
    aside_bins = set(order[attempt * BINS_SET_ASIDE : (attempt + 1) * BINS_SET_ASIDE])
    kept = [k for k in range(len(bins)) if k not in aside_bins]
    state = _State(
        sizes,
        weight,
        room,
        [list(bins[k]) for k in kept],
        loads[kept].copy(),
        sorted(i for k in sorted(aside_bins) for i in bins[k]),
    )
    free_bins = BINS_SET_ASIDE - 1
    tabu = np.zeros((len(sizes), len(state.bins)), dtype=np.int64)
    outgoing = _Outgoing(state)
    least = state.aside_weight()
    step = last_gain = 0
    while work.now() < deadline and step - last_gain < STALL_STEPS:
        split = _split(state, free_bins)
        if split is not None:
            return state.bins + [b for b in split if b]
        if sizes.shape[1] == 1 and step % REFILL_EVERY == REFILL_EVERY - 1:
            changed = _refill(state)
            for k in changed:
                outgoing.update(state, k)
            if changed:
                least, last_gain = _progress(state, least, last_gain, step)
                step += 1
                continue
        move = _best_exchange(state, outgoing, tabu, step, least)
        if move is None:
            return None
        k, out, into = move
        _exchange(state, k, out, into)
        tabu[list(out), k] = step + TABU_TENURE
        outgoing.update(state, k)
        least, last_gain = _progress(state, least, last_gain, step)
        step += 1
    return None


def _progress(state: _State, least: float, last_gain: int, step: int) -> tuple[float, int]:
    """The least weight aside so far and the step it was reached."""
    weight = state.aside_weight()
    return (weight, step) if weight < least - 1e-12 else (least, last_gain)


def _pairs(items: list[int], empty: bool) -> tuple[np.ndarray, np.ndarray]:
    """First and second item (-1 for none) of every subset of up to two of `items`."""
    pairs = ([(-1, -1)] if empty else []) + [(i, -1) for i in items] + list(combinations(items, 2))
    array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return array[:, 0], array[:, 1]


class _Outgoing:
    """Every kept bin's subsets of up to two items (the empty one included), in a fixed number of
    rows per bin so that a change to one bin rewrites only its rows; unused rows never fit."""

    def __init__(self, state: _State):
        self.slots = 0
        self._layout(state)

    def _layout(self, state: _State) -> None:
        most = max((len(b) for b in state.bins), default=0)
        self.slots = max(self.slots, 1 + most + most * (most - 1) // 2)
        count = len(state.bins) * self.slots
        self.owner = np.repeat(np.arange(len(state.bins), dtype=np.int64), self.slots)
        self.first = np.full(count, -1, dtype=np.int64)
        self.second = np.full(count, -1, dtype=np.int64)
        self.size = np.zeros((count, state.sizes.shape[1]), dtype=np.int64)
        self.weight = np.zeros(count)
        self.count = np.zeros(count, dtype=np.int64)
        self.unused = np.ones(count, dtype=bool)
        for k in range(len(state.bins)):
            self.update(state, k)

    def update(self, state: _State, k: int) -> None:
        first, second = _pairs(state.bins[k], empty=True)
        if len(first) > self.slots:
            self._layout(state)
            return
        rows = slice(k * self.slots, k * self.slots + len(first))
        spare = slice(k * self.slots + len(first), (k + 1) * self.slots)
        self.first[rows], self.second[rows] = first, second
        self.size[rows] = _summed(state.sizes, first, second)
        self.weight[rows] = _summed(state.weight, first, second)
        self.count[rows] = (first >= 0).astype(np.int64) + (second >= 0)
        self.unused[rows] = False
        self.unused[spare] = True


def _summed(values: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """values[first] + values[second], where -1 stands for no item."""
    shape = (-1,) + (1,) * (values.ndim - 1)
    return np.where((first >= 0).reshape(shape), values[first], 0) + np.where(
        (second >= 0).reshape(shape), values[second], 0
    )


def _best_exchange(
    state: _State, outgoing: _Outgoing, tabu: np.ndarray, step: int, least: float
) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """The allowed exchange that leaves the least weight aside: (kept bin, items it sets aside,
    set-aside items it takes), or None when no set-aside item fits anywhere. Raises _TooLarge
    when the step would weigh more than STEP_PAIR_LIMIT pairs."""
    in_first, in_second = _pairs(state.aside, empty=False)
    if not len(in_first):
        return None
    in_size = _summed(state.sizes, in_first, in_second)
    in_weight = _summed(state.weight, in_first, in_second)
    in_count = 1 + (in_second >= 0).astype(np.int64)
    owner = outgoing.owner
    if len(owner) * len(in_first) > STEP_PAIR_LIMIT:
        raise _TooLarge
    # A pair costs more the more dimensions it is checked in.
    work.charge(STEP_UNITS + len(owner) * len(in_first) * (1 + state.sizes.shape[1]) / (2 * PAIRS_PER_UNIT))
    aside_now = state.aside_weight()
    has_second = in_second >= 0
    second_or_first = np.where(has_second, in_second, in_first)
    best: tuple[float, int, int] | None = None
    # Blocks of kept-bin rows, so that the arrays of one block stay small whatever the instance.
    block = max(1, BLOCK_CELLS // (len(in_first) * state.sizes.shape[1]))
    for start in range(0, len(owner), block):
        rows = slice(start, start + block)
        owners = owner[rows]
        room_left = state.room - state.loads[owners] + outgoing.size[rows]  # (rows, D)
        room_left[outgoing.unused[rows]] = -1
        # Dimension by dimension: much faster than one comparison over a third axis.
        fits = in_size[None, :, 0] <= room_left[:, 0, None]
        for d in range(1, state.sizes.shape[1]):
            fits &= in_size[None, :, d] <= room_left[:, d, None]
        if not fits.any():
            continue
        aside_after = aside_now + outgoing.weight[rows, None] - in_weight[None, :]
        blocked = (step < tabu[in_first][:, owners].T) | (step < tabu[second_or_first][:, owners].T)
        # Aspiration: a tabu move that leaves less aside than ever before is allowed.
        allowed = fits & (~blocked | (aside_after < least - 1e-12))
        if not allowed.any():
            continue
        # Least weight aside, then the most items aside (small items split into two bins more
        # easily); the weight is rounded so that float noise never decides, and the count, which
        # changes by at most 2 per move, weighs less than the rounding step.
        score = np.round(aside_after, 8) - 1e-10 * (outgoing.count[rows, None] - in_count[None, :])
        flat = int(np.argmin(np.where(allowed, score, np.inf)))
        r, column = divmod(flat, len(in_first))
        if best is None or float(score[r, column]) < best[0]:
            best = (float(score[r, column]), start + r, column)
    if best is None:
        return None
    _, row, column = best
    k = int(owner[row])
    out = tuple(int(i) for i in (outgoing.first[row], outgoing.second[row]) if i >= 0)
    into = tuple(int(i) for i in (in_first[column], in_second[column]) if i >= 0)
    return k, out, into


def _exchange(state: _State, k: int, out: tuple[int, ...], into: tuple[int, ...]) -> None:
    for i in out:
        state.bins[k].remove(i)
        state.aside.append(i)
        state.loads[k] -= state.sizes[i]
    for i in into:
        state.aside.remove(i)
        state.bins[k].append(i)
        state.loads[k] += state.sizes[i]
    state.bins[k].sort()
    state.aside.sort()


def _refill(state: _State) -> list[int]:
    """Each kept bin in turn takes the fullest set of its items and the set-aside ones that fits
    (one dimension); the bins that changed."""
    changed = []
    capacity = int(state.room[0])
    for k in range(len(state.bins)):
        pool = state.bins[k] + state.aside
        sizes = [int(state.sizes[i, 0]) for i in pool]
        chosen = _fullest(sizes, capacity)
        if chosen is None:
            continue
        work.charge(len(pool) * capacity / SUBSET_SUM_BITS_PER_UNIT)
        total = sum(sizes[j] for j in chosen)
        if total <= int(state.loads[k, 0]):
            continue
        items = sorted(pool[j] for j in chosen)
        state.bins[k] = items
        taken = set(items)
        state.aside = sorted(i for i in pool if i not in taken)
        state.loads[k] = state.sizes[items].sum(axis=0)
        changed.append(k)
    return changed


def _fullest(sizes: list[int], capacity: int) -> list[int] | None:
    """Indices of a subset of `sizes` with the largest sum at most `capacity` (bitset subset sums),
    or None when the bitsets would pass SUBSET_SUM_BITS in all."""
    if len(sizes) * (capacity + 1) > SUBSET_SUM_BITS:
        return None
    limit = (1 << (capacity + 1)) - 1
    reachable = [1]
    for size in sizes:
        reachable.append((reachable[-1] | (reachable[-1] << size)) & limit)
    target = reachable[-1].bit_length() - 1
    chosen = []
    for j in range(len(sizes) - 1, -1, -1):
        if not (reachable[j] >> target) & 1:
            chosen.append(j)
            target -= sizes[j]
    return chosen[::-1]


def _split(state: _State, free_bins: int) -> list[list[int]] | None:
    """The set-aside items in at most `free_bins` (two) bins, or None if none is found. Not
    charged, though every step calls it: the set-aside items are few."""
    aside = state.aside
    if not aside:
        return [[]]
    total = state.sizes[aside].sum(axis=0)
    if (total > free_bins * state.room).any():
        return None
    if (total <= state.room).all():
        return [list(aside)]
    if state.sizes.shape[1] == 1:
        capacity = int(state.room[0])
        fullest = _fullest([int(state.sizes[i, 0]) for i in aside], capacity)
        if fullest is not None:
            chosen = set(fullest)
            rest = [aside[j] for j in range(len(aside)) if j not in chosen]
            if int(state.sizes[rest, 0].sum()) <= capacity:
                return [[aside[j] for j in sorted(chosen)], rest]
            return None
    if len(aside) > SPLIT_ITEM_LIMIT:
        return None
    aside_sizes = state.sizes[aside]
    masks = np.arange(1 << len(aside), dtype=np.int64)
    members = (masks[:, None] >> np.arange(len(aside))) & 1
    first = members @ aside_sizes
    ok = (first <= state.room).all(axis=1) & ((total - first) <= state.room).all(axis=1)
    if not ok.any():
        return None
    mask = int(np.argmax(ok))
    return [
        [aside[j] for j in range(len(aside)) if (mask >> j) & 1],
        [aside[j] for j in range(len(aside)) if not (mask >> j) & 1],
    ]
