"""Exact pricing when items have size in a single dimension: a dynamic programme over the room.

maximise  sum_i price_i * a_i   s.t.  sum_i size_i * a_i <= room,  0 <= a_i <= limit_i integer

Each shape's bound is split into binary pieces (1, 2, 4, ... copies, then the rest), which
turns the bounded knapsack into a 0-1 knapsack over the pieces; the table best[c] (most
value within room c) is updated piece by piece with numpy, and which pieces were taken at
which room is kept to read the pattern back. One table answers every bin type at once,
whatever its room, so the cost is cells = pieces x (largest room + 1), known in advance:
`table_cells` tells the caller whether the table is small enough before building it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PRICE_EPSILON = 1e-12


@dataclass(frozen=True)
class TablePattern:
    """counts: items per shape of a best pattern for one room; value: its price (the exact optimum)."""

    counts: np.ndarray
    value: float


def _pieces(sizes: np.ndarray, limits: np.ndarray, useful: np.ndarray) -> list[tuple[int, int]]:
    """(shape, copies) of the binary split of every useful shape's bound."""
    pieces = []
    for i in useful:
        left, copies = int(limits[i]), 1
        while left > 0:
            take = min(copies, left)
            pieces.append((int(i), take))
            left -= take
            copies *= 2
    return pieces


def table_cells(sizes: np.ndarray, limits: np.ndarray, room: int) -> int:
    """Cells the table would have (pieces x (room + 1)), for every shape priced."""
    fits = np.minimum(limits, room // np.maximum(sizes, 1))
    pieces = int(sum(int(n).bit_length() for n in fits if n > 0))
    return pieces * (room + 1)


def best_patterns(
    prices: np.ndarray, sizes: np.ndarray, limits: np.ndarray, rooms: Sequence[int], alternatives: int = 0
) -> tuple[list[TablePattern], int]:
    """A best pattern for each room in `rooms`, then up to `alternatives` other patterns (the best
    ones for smaller rooms than the largest, read from the same table), and the cells computed.

    sizes: size per shape in the one dimension (shapes of size 0 come in whole); limits: most items of each shape a pattern
    may hold; prices: value per item. Shapes of no positive price are left out of every pattern.
    """
    largest = int(max(rooms)) if len(rooms) else 0
    fits = np.minimum(limits, largest // np.maximum(sizes, 1))
    useful = np.nonzero((prices > PRICE_EPSILON) & (fits > 0) & (sizes > 0))[0]
    free = (prices > PRICE_EPSILON) & (sizes == 0)
    pieces = _pieces(sizes, fits, useful)
    best = np.zeros(largest + 1)
    taken = np.zeros((len(pieces), largest + 1), dtype=bool)
    for k, (i, copies) in enumerate(pieces):
        weight = int(sizes[i]) * copies
        if weight > largest:
            continue
        value = float(prices[i]) * copies
        candidate = best[: largest + 1 - weight] + value
        better = candidate > best[weight:] + PRICE_EPSILON
        taken[k, weight:] = better
        best[weight:] = np.where(better, candidate, best[weight:])

    def read(room: int) -> TablePattern:
        counts = np.where(free, limits, 0).astype(np.int64)
        c = room
        for k in range(len(pieces) - 1, -1, -1):
            if taken[k, c]:
                i, copies = pieces[k]
                counts[i] += copies
                c -= int(sizes[i]) * copies
        return TablePattern(counts, float(prices @ counts))

    results = [read(int(room)) for room in rooms]
    if alternatives:
        # Rooms where the table's value steps up hold patterns of their own; the most valuable first.
        steps = np.nonzero(np.diff(best) > PRICE_EPSILON)[0] + 1
        seen = {tuple(p.counts) for p in results}
        for c in steps[np.argsort(-best[steps], kind="stable")][: 4 * alternatives].tolist():
            pattern = read(int(c))
            if tuple(pattern.counts) not in seen:
                seen.add(tuple(pattern.counts))
                results.append(pattern)
                if len(results) >= len(rooms) + alternatives:
                    break
    return results, len(pieces) * (largest + 1)
