"""Complete enumeration of the feasible patterns of a bin type, when there are few.

A pattern is a non-empty multiset of items that fits one bin. With few items
per bin (typical of benchmark instances) there are few enough patterns to list
them all; pricing then becomes a vectorised sum, and an exact integer model
over all patterns becomes possible. Enumeration goes level by level (patterns
of 1, 2, ... items, indices non-decreasing) and gives up as soon as the count
passes a limit, so its cost is bounded.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import csr_matrix

from sizing.binpack import work

_CHUNK = 2048


class PatternSet:
    """All feasible patterns of one bin type, as a sparse matrix of items per shape.

    members[p, k]: the k-th item (shape index) of pattern p, or -1 past its end;
    shapes may repeat. `matrix` has one row per pattern and one column per shape.
    """

    def __init__(self, members: np.ndarray, shape_count: int):
        self.members = members
        self.shape_count = shape_count
        rows = np.repeat(np.arange(members.shape[0]), members.shape[1])
        flat = members.reshape(-1)
        keep = flat >= 0
        self.matrix = csr_matrix(
            (np.ones(int(keep.sum())), (rows[keep], flat[keep])), shape=(members.shape[0], shape_count)
        )
        self.matrix.sum_duplicates()

    def __len__(self) -> int:
        return int(self.members.shape[0])

    def values(self, prices: np.ndarray) -> np.ndarray:
        """Sum of item prices per pattern (prices per shape)."""
        values: np.ndarray = self.matrix @ prices
        return values

    def shapes(self, pattern: int) -> np.ndarray:
        """The shapes in the pattern (each once)."""
        shapes: np.ndarray = self.matrix.indices[self.matrix.indptr[pattern] : self.matrix.indptr[pattern + 1]]
        return shapes

    def counts(self, pattern: int) -> np.ndarray:
        """The pattern as items per shape."""
        counts = np.zeros(self.shape_count, dtype=np.int64)
        start, end = self.matrix.indptr[pattern], self.matrix.indptr[pattern + 1]
        counts[self.matrix.indices[start:end]] = np.rint(self.matrix.data[start:end]).astype(np.int64)
        return counts


def enumerate_patterns(
    room: np.ndarray, sizes: np.ndarray, demand: np.ndarray, limit: int, deadline: float = math.inf
) -> PatternSet | None:
    """Every multiset of items (at most demand[i] of shape i) that fits `room`; None past `limit`
    patterns, or when the work clock passes `deadline` (each level charges its patterns)."""
    shapes, dims = sizes.shape
    room = np.asarray(room, dtype=np.int64)
    start = np.nonzero((sizes <= room).all(axis=1) & (demand > 0))[0]
    last = start
    last_repeats = np.ones(len(start), dtype=np.int64)
    loads = sizes[start]
    members = start[:, None]
    levels: list[np.ndarray] = []
    total = 0
    candidates = np.arange(shapes)
    while len(last):
        total += len(last)
        work.charge(len(last) / work.PATTERNS_PER_UNIT)
        if total > limit or work.now() > deadline:
            return None
        levels.append(members)
        grown_last, grown_repeats, grown_loads, grown_members = [], [], [], []
        grown = 0
        for begin in range(0, len(last), _CHUNK):
            if work.now() > deadline:
                return None
            chunk = slice(begin, begin + _CHUNK)
            tail, repeats, load = last[chunk], last_repeats[chunk], loads[chunk]
            # Shapes in non-decreasing order; the last shape again only while demand allows.
            allowed = ((candidates[None, :] > tail[:, None]) & (demand[None, :] > 0)) | (
                (candidates[None, :] == tail[:, None]) & (repeats[:, None] < demand[tail][:, None])
            )
            free = room[None, :] - load
            for d in range(dims):
                allowed &= sizes[None, :, d] <= free[:, d, None]
            parent, shape = np.nonzero(allowed)
            if not len(parent):
                continue
            grown += len(parent)
            if total + grown > limit:
                return None
            grown_last.append(shape)
            grown_repeats.append(np.where(shape == tail[parent], repeats[parent] + 1, 1))
            grown_loads.append(load[parent] + sizes[shape])
            grown_members.append(np.concatenate([members[chunk][parent], shape[:, None]], axis=1))
        if not grown_last:
            break
        last = np.concatenate(grown_last)
        last_repeats = np.concatenate(grown_repeats)
        loads = np.concatenate(grown_loads)
        members = np.concatenate(grown_members)
    table = np.full((total, len(levels)), -1, dtype=np.int32)
    row = 0
    for width, level in enumerate(levels, start=1):
        table[row : row + len(level), :width] = level
        row += len(level)
    return PatternSet(table, shapes)
