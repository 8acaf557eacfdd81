"""The depth-first branch and bound of `sizing.binpack.knapsack`, compiled with numba.

Shapes come ranked by price per unit of surrogate size. A node fixes the copies of one shape
and moves on to the shapes after it; a branch is cut when its value plus the fractional
(Dantzig) bound of the shapes after it, restricted to those that still fit the room left,
cannot beat the best pattern found by more than `epsilon`. The search stops after `node_limit`
nodes. The order of the nodes, and so the pattern found within a node limit, is fixed by the
input alone: the compiled search and a plain Python one over the same input visit the same
nodes (see the tests).

Every array is plain numpy: prices and surrogate weights as float64, sizes, limits and room
as int64 (the units of the dimensions, e.g. millicores and MiB).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

# A fit count that no limit reaches: the shape has no size in that dimension.
_UNBOUNDED = np.iinfo(np.int64).max


def compiled(signature: str | None = None) -> Callable[[Callable[..., Any]], Any]:
    """numba's `njit`, cached on disk where numba finds a writable place for its cache (beside
    the module, or the user's cache directory), else compiled anew in each process: a read-only
    install without a home directory still runs, only its first search of a process waits for
    the compilation."""

    def decorate(function: Callable[..., Any]) -> Any:
        try:
            return njit(signature, cache=True, nogil=True)(function)
        except RuntimeError as error:
            if "no locator available" not in str(error):
                raise
            return njit(signature, cache=False, nogil=True)(function)

    return decorate


@compiled()
def _surrogate(free: np.ndarray, multipliers: np.ndarray) -> float:
    total = 0.0
    for d in range(free.shape[0]):
        total += free[d] * multipliers[d]
    return total


@compiled()
def node_bounds(
    start: int,
    free: np.ndarray,
    surrogate_room: float,
    price: np.ndarray,
    weight: np.ndarray,
    sizes: np.ndarray,
    limit: np.ndarray,
    bound: np.ndarray,
    candidates: np.ndarray,
    fits: np.ndarray,
    cum_w: np.ndarray,
    cum_v: np.ndarray,
) -> int:
    """For each shape k >= start with a copy that fits `free`, the fractional bound of shapes k..
    within `surrogate_room`. Writes the candidates' offsets from `start`, their copies that fit
    and their bounds into the given arrays; returns how many candidates there are. cum_w and
    cum_v: room for the running totals (shapes + 1 entries), reused from node to node."""
    shapes, dimensions = sizes.shape
    count = 0
    for k in range(start, shapes):
        room_for = _UNBOUNDED
        for d in range(dimensions):
            if sizes[k, d] > 0:
                room_for = min(room_for, free[d] // sizes[k, d])
        copies = min(limit[k], room_for)
        if copies > 0:
            candidates[count] = k - start
            fits[count] = copies
            count += 1
    if count == 0:
        return 0
    # Running totals of surrogate weight and price over the candidates, from 0.
    cum_w[0] = 0.0
    cum_v[0] = 0.0
    for c in range(count):
        k = start + candidates[c]
        cum_w[c + 1] = cum_w[c] + weight[k] * fits[c]
        cum_v[c + 1] = cum_v[c] + price[k] * fits[c]
    for c in range(count):
        reach = cum_w[c] + surrogate_room
        # The last prefix whose weight is within reach (searchsorted, side "right", minus one).
        low, high = 0, count + 1
        while low < high:
            middle = (low + high) // 2
            if cum_w[middle] <= reach:
                low = middle + 1
            else:
                high = middle
        full = low - 1
        value = cum_v[full] - cum_v[c]
        if full < count:
            k = start + candidates[full]
            value = value + (reach - cum_w[full]) * (price[k] / weight[k])
        bound[c] = value
    return count


@compiled()
def _grown(buffer: np.ndarray, needed: int) -> np.ndarray:
    if needed <= buffer.shape[0]:
        return buffer
    larger = np.empty(max(needed, 2 * buffer.shape[0]), dtype=buffer.dtype)
    larger[: buffer.shape[0]] = buffer
    return larger


# Compiled when the module is imported (or read from numba's cache), never inside a search:
# a compilation takes seconds, which no work budget or wall-clock cap accounts for.
@compiled(
    "Tuple((int64, float64, float64))(float64[::1], float64[::1], int64[:, ::1], int64[::1], int64[::1],"
    " float64[::1], float64, int64, int64[::1], float64)"
)
def search(
    price: np.ndarray,
    weight: np.ndarray,
    sizes: np.ndarray,
    limit: np.ndarray,
    room: np.ndarray,
    multipliers: np.ndarray,
    epsilon: float,
    node_limit: int,
    best: np.ndarray,
    best_value: float,
) -> tuple[int, float, float]:
    """Search from the pattern `best` (worth `best_value`), improving it in place.

    price: per shape, in ranked order (float64); weight: surrogate size per shape (float64);
    sizes: shapes x dimensions (int64); limit: copies allowed per shape (int64); room: per
    dimension (int64); multipliers: surrogate weight per unit of each dimension (float64).
    Returns (nodes visited, value of `best`, root bound): more nodes than `node_limit` means the
    search stopped before it proved `best` optimal; no pattern is worth more than the root bound
    (the fractional bound of all shapes, 0 when none fits).

    The search is depth first with an explicit stack of frames, one per shape fixed so far:
    numba's cache does not hold recursive functions reliably.
    """
    shapes, dimensions = sizes.shape
    current = np.zeros(shapes, dtype=np.int64)
    # Per frame: the first shape it may add, its value, its load, where its candidates start
    # in the shared buffers, how many there are, the candidate being tried, the copies of it
    # to try next (0: the candidate's bound is still to be checked), the shape set in `current`.
    frame_start = np.empty(shapes + 1, dtype=np.int64)
    frame_value = np.empty(shapes + 1)
    frame_load = np.zeros((shapes + 1, dimensions), dtype=np.int64)
    frame_offset = np.empty(shapes + 1, dtype=np.int64)
    frame_count = np.empty(shapes + 1, dtype=np.int64)
    frame_position = np.empty(shapes + 1, dtype=np.int64)
    frame_copies = np.empty(shapes + 1, dtype=np.int64)
    frame_active = np.empty(shapes + 1, dtype=np.int64)
    bounds = np.empty(4 * shapes)
    candidates = np.empty(4 * shapes, dtype=np.int64)
    fits = np.empty(4 * shapes, dtype=np.int64)
    cum_w = np.empty(shapes + 1)
    cum_v = np.empty(shapes + 1)
    root_count = node_bounds(
        0, room, _surrogate(room, multipliers), price, weight, sizes, limit, bounds, candidates, fits, cum_w, cum_v
    )
    root_bound = bounds[0] if root_count > 0 else 0.0
    nodes = 0
    top = -1
    # The node to visit next: its first shape, value and load.
    start, value = 0, 0.0
    load = np.zeros(dimensions, dtype=np.int64)
    visiting = True
    while True:
        if visiting:
            visiting = False
            nodes += 1
            if value > best_value + epsilon:
                best_value = value
                best[:] = current
            if nodes <= node_limit and start < shapes:
                offset = 0 if top < 0 else frame_offset[top] + frame_count[top]
                needed = offset + shapes - start
                bounds = _grown(bounds, needed)
                candidates = _grown(candidates, needed)
                fits = _grown(fits, needed)
                free = room - load
                top += 1
                frame_start[top] = start
                frame_value[top] = value
                frame_load[top] = load
                frame_offset[top] = offset
                frame_count[top] = node_bounds(
                    start,
                    free,
                    _surrogate(free, multipliers),
                    price,
                    weight,
                    sizes,
                    limit,
                    bounds[offset:],
                    candidates[offset:],
                    fits[offset:],
                    cum_w,
                    cum_v,
                )
                frame_position[top] = 0
                frame_copies[top] = 0
                frame_active[top] = -1
        if top < 0:
            break
        # Back in the frame on top: its last child, if any, is done.
        if frame_active[top] >= 0:
            current[frame_active[top]] = 0
            frame_active[top] = -1
            if nodes > node_limit:
                break
        position = frame_position[top]
        at = frame_offset[top] + position
        if frame_copies[top] == 0:
            if position >= frame_count[top] or frame_value[top] + bounds[at] <= best_value + epsilon:
                top -= 1
                continue
            frame_copies[top] = fits[at]
        k = frame_start[top] + candidates[at]
        copies = frame_copies[top]
        frame_copies[top] = copies - 1
        if copies == 1:
            frame_position[top] = position + 1
        current[k] = copies
        frame_active[top] = k
        start = k + 1
        value = frame_value[top] + price[k] * copies
        load = frame_load[top] + sizes[k] * copies
        visiting = True
    return nodes, best_value, root_bound
