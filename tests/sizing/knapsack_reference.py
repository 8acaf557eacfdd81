"""A plain-Python statement of the knapsack search in `sizing.binpack.knapsack_search`: the same
ranked shapes, the same fractional bounds, the same node order, written as a recursion with
Python floats, to check the compiled search against."""

from __future__ import annotations

import bisect
import sys


def _bounds(start, free, surrogate_room, price, weight, sizes, limit):
    """(bound, offset from start, copies that fit) for each shape from `start` that fits `free`."""
    found = []
    for k in range(start, len(sizes)):
        fit = limit[k]
        for d, size in enumerate(sizes[k]):
            if size > 0:
                fit = min(fit, free[d] // size)
        if fit > 0:
            found.append((k, fit))
    cum_w, cum_v = [0.0], [0.0]
    for k, fit in found:
        cum_w.append(cum_w[-1] + weight[k] * fit)
        cum_v.append(cum_v[-1] + price[k] * fit)
    result = []
    for c, (k, fit) in enumerate(found):
        reach = cum_w[c] + surrogate_room
        full = bisect.bisect_right(cum_w, reach) - 1
        value = cum_v[full] - cum_v[c]
        if full < len(found):
            nxt = found[full][0]
            value = value + (reach - cum_w[full]) * (price[nxt] / weight[nxt])
        result.append((value, k - start, fit))
    return result


def _surrogate(free, multipliers):
    total = 0.0
    for d in range(len(free)):
        total += free[d] * multipliers[d]
    return total


def reference_search(price, weight, sizes, limit, room, multipliers, epsilon, node_limit, best, best_value):
    """The compiled search's contract on plain lists: returns (nodes, best value, root bound, best)."""
    price, weight, multipliers = (list(map(float, a)) for a in (price, weight, multipliers))
    sizes = [list(map(int, row)) for row in sizes]
    limit, room, best = list(map(int, limit)), list(map(int, room)), list(map(int, best))
    root = _bounds(0, room, _surrogate(room, multipliers), price, weight, sizes, limit)
    state = {"nodes": 0, "best_value": float(best_value), "best": best}
    current = [0] * len(sizes)

    def visit(start, value, load):
        state["nodes"] += 1
        if value > state["best_value"] + epsilon:
            state["best_value"] = value
            state["best"] = list(current)
        if state["nodes"] > node_limit or start >= len(sizes):
            return
        free = [r - used for r, used in zip(room, load, strict=True)]
        for bound, offset, fit in _bounds(start, free, _surrogate(free, multipliers), price, weight, sizes, limit):
            if value + bound <= state["best_value"] + epsilon:
                return
            k = start + offset
            for copies in range(fit, 0, -1):
                current[k] = copies
                visit(
                    k + 1,
                    value + price[k] * copies,
                    [used + s * copies for used, s in zip(load, sizes[k], strict=True)],
                )
                current[k] = 0
                if state["nodes"] > node_limit:
                    return

    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 4 * len(sizes) + 100))
    try:
        visit(0, 0.0, [0] * len(room))
    finally:
        sys.setrecursionlimit(depth)
    return state["nodes"], state["best_value"], root[0][0] if root else 0.0, state["best"]
