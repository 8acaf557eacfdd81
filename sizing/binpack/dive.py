"""Packings from the master LP: rounding down with a repair, and diving.

`round_down` keeps floor(x_j) copies of every column (topped up like the
dive's bins) and packs what is left with first-fit decreasing: quick, and close
to the LP when bins hold many items. With several bin types, `round_master` also
rounds up (`round_up`) and keeps the cheaper of the two once each holds exactly
the demand, every bin on its cheapest type that holds it.

`dive` rounds one decision at a time, re-pricing in between, so columns that
the root never saw can enter below it (a depth-first price-and-branch). Each
step solves the master LP for the items still to place (with a few rounds of
column generation), then fixes bins: every column with an LP value of at least
1 is fixed that many times, or else the column with the largest value once.
Fixed bins take only items still needed, topped up with other items still needed
that fit the room left (`filled`). A path is cut when its fixed cost plus
a valid bound for the rest cannot beat the best packing known, and, with one bin
type, when its bins leave more room unused than a packing of one bin fewer than
the best can (the room of those bins minus the items' total size, per dimension):
a bin that would pass that allowance is never fixed.

With discrepancies allowed (limited discrepancy search), a node near the root
also tries, after its first choice, the next columns by LP value, each fixed
once while the columns tried before it are tabu below it; a path may take at
most `max_discrepancies` such turns. The search goes depth first, the dive's own
choices first, and stops when a packing meets the lower bound it is given or
when the work runs out, first-fit decreasing then placing what the current
path left.

With a `completion` (one bin type, items sized in one dimension), a node whose items left make a
small arc-flow graph (once the arcs that the node's LP prices rule out are taken out) is settled
exactly if diving on from it does not meet the target: the model packs the rest in fewer bins
than the best packing leaves it, if it can. Diving finds such packings poorly where every bin of
the optimum is all but full (Hard28), and cheaply where it does find them, so the model only
takes over where diving failed. The first such node of a path is settled, and below it any whose
graph has at most SETTLE_AGAIN_SHARE of the arcs of the nearest one settled above it: the deeper
node comes first (the search is depth first) and its smaller model is solved sooner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from sizing.binpack import work
from sizing.binpack.arcflow import ArcGraph, ResidualCompletion
from sizing.binpack.bounds import rounded_cost_bound
from sizing.binpack.colgen import Pricer, column_generation
from sizing.binpack.ffd import first_fit_decreasing, size_order
from sizing.binpack.instance import Instance, fit_counts
from sizing.binpack.master_lp import MasterLP, MasterSolution
from sizing.binpack.packing import Packing, exact_packing


def filled(instance: Instance, type_index: int, take: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """`take` (items of a column still needed) plus, largest first, items still needed that fit
    the room it leaves: a column's place for an item no longer needed (or one the LP moved to a
    smaller item) holds another item instead."""
    room = instance.capacity[type_index] - take @ instance.sizes
    left = demand - take
    fits = (instance.sizes <= room).all(axis=1) & (left > 0)
    if not fits.any():
        return take
    result = take.copy()
    for i in size_order(instance):
        if not fits[i]:
            continue
        count = fit_counts(room, instance.sizes[i : i + 1], left[i : i + 1])[0]
        if count > 0:
            result[i] += count
            room = room - count * instance.sizes[i]
    return result


def round_master(instance: Instance, master_lp: MasterLP, master: MasterSolution) -> Packing | None:
    """The master LP rounded: `round_down`, and with several bin types the cheaper of it and
    `round_up` once both hold exactly the demand (surplus items out, every bin on its cheapest
    type that holds it). With many types, what a rounding leaves to first-fit decreasing, or
    the surplus a rounding up leaves in its bins, lands on dearer types than its items need,
    and which of the two loses less varies from one LP to the next."""
    down = round_down(instance, master_lp, master)
    if instance.type_count == 1:
        return down
    candidates = [exact_packing(p, instance) for p in (down, round_up(instance, master_lp, master)) if p is not None]
    if not candidates:
        return None
    return min(candidates, key=lambda p: (p.cost(instance), p.bin_count))


def round_down(instance: Instance, master_lp: MasterLP, master: MasterSolution) -> Packing | None:
    """floor(x) of every column, trimmed to the demand, plus FFD for the rest (None if that fails)."""
    return _rounded(instance, master_lp, master, round_up=False)


def round_up(instance: Instance, master_lp: MasterLP, master: MasterSolution) -> Packing | None:
    """floor(x) of every column, then one more copy of the columns with a fractional part,
    largest part first, while items are left, each trimmed to the demand; FFD for what is
    still left (None if that fails)."""
    return _rounded(instance, master_lp, master, round_up=True)


def _rounded(instance: Instance, master_lp: MasterLP, master: MasterSolution, round_up: bool) -> Packing | None:
    demand = instance.demand.copy()
    used = np.zeros(instance.type_count, dtype=np.int64)
    fixed: list[tuple[tuple[int, tuple[int, ...]], int]] = []

    def fix(j: int, copies: int) -> None:
        t, counts = master_lp.pool.columns[j]
        limit = instance.max_count[t]
        if limit is not None:
            copies = min(copies, limit - int(used[t]))
        column = np.array(counts, dtype=np.int64)
        for _ in range(copies):
            take = filled(instance, t, np.minimum(column, demand), demand)
            if not take.any():
                break
            fixed.append(((t, tuple(take)), 1))
            used[t] += 1
            demand[:] -= take

    for j in np.nonzero(master.x >= 1 - 1e-6)[0].tolist():
        fix(j, int(math.floor(master.x[j] + 1e-6)))
    if round_up:
        parts = master.x - np.floor(master.x + 1e-6)
        fractional = np.nonzero(parts > 1e-6)[0]
        for j in fractional[np.lexsort((fractional, -parts[fractional]))].tolist():
            if not demand.any():
                break
            fix(j, 1)
    rest = first_fit_decreasing(instance, demand, used) if demand.any() else Packing(())
    if rest is None:
        return None
    return Packing.of(fixed + list(rest.bins))


@dataclass(frozen=True)
class _Node:
    """A node of the dive: the bins fixed so far, what is left to place, and the columns that
    may no longer be fixed below it (tabu), with the discrepancies spent on the way."""

    demand: np.ndarray
    limits: np.ndarray
    fixed: tuple[tuple[int, tuple[int, ...]], ...]
    fixed_cost: float
    tabu: frozenset[int]
    discrepancies: int
    depth: int
    waste: np.ndarray
    # A node to settle by the completion once the dive below it is done: a lower bound on the
    # cost of its items left, and the graph to settle it on. settled_arcs: the arcs of that graph
    # for the nearest node above it on the path that will be settled (None: no such node).
    settle_bound: float | None = None
    settle_graph: ArcGraph | None = None
    settled_arcs: int | None = None


def dive(
    instance: Instance,
    master_lp: MasterLP,
    pricer: Pricer,
    incumbent_cost: float,
    deadline: float,
    rounds_per_step: int,
    max_discrepancies: int = 0,
    target: float = float("-inf"),
    completion: ResidualCompletion | None = None,
) -> Packing | None:
    """The cheapest packing found below `incumbent_cost`, or None if the dive finds none in time.

    rounds_per_step: most master LPs (column generation rounds) per fixing step.
    max_discrepancies: how often a path may take another column than the dive's first choice
    (limited discrepancy search, see the module docstring); 0 is a single dive.
    target: a lower bound on the cost; the search stops at a packing that meets it.
    completion: settles nodes whose items left are few (see the module docstring).
    """
    limits = instance.count_limits()
    dimensions = len(instance.dimensions)
    stack = [_Node(instance.demand.copy(), limits, (), 0.0, frozenset(), 0, 0, np.zeros(dimensions, dtype=np.int64))]
    best: Packing | None = None
    best_cost = incumbent_cost
    while stack:
        node = stack.pop()
        tolerance = 1e-9 * max(1.0, abs(best_cost))
        allowance = waste_allowance(instance, best_cost)
        if allowance is not None and (node.waste > allowance).any():
            continue
        if not node.demand.any():
            packing = Packing.of((column, 1) for column in node.fixed)
            if packing.cost(instance) < best_cost - tolerance:
                best, best_cost = packing, packing.cost(instance)
                if best_cost <= target + tolerance:
                    break
            continue
        if work.now() > deadline:
            # Out of work: first-fit decreasing places what is left of this path, and the search ends.
            finished = _finish(instance, node)
            if finished is not None and finished.cost(instance) < best_cost - tolerance:
                best = finished
            break
        if node.settle_bound is not None:
            assert completion is not None  # only a dive with a completion leaves such nodes
            if node.fixed_cost + node.settle_bound >= best_cost - tolerance:
                continue
            rest_packed = completion.complete(
                node.demand, best_cost - node.fixed_cost, node.settle_bound, deadline, node.settle_graph
            )
            if rest_packed is not None:
                best = Packing.of([(column, 1) for column in node.fixed] + list(rest_packed.bins))
                best_cost = best.cost(instance)
                if best_cost <= target + tolerance:
                    break
            continue
        result = column_generation(instance, master_lp, pricer, node.demand, node.limits, deadline, rounds_per_step)
        master = result.master
        if master is None or master.uncovered > 1e-6:
            continue
        rest, _ = rounded_cost_bound(instance, result.bound)
        if node.fixed_cost + rest >= best_cost - tolerance:
            continue
        graph = (
            None
            if completion is None
            else completion.graph(node.demand, best_cost - node.fixed_cost, master.prices, result.bound)
        )
        if graph is not None and (
            node.settled_arcs is None or graph.arc_count <= node.settled_arcs * SETTLE_AGAIN_SHARE
        ):
            # Settled only if diving on from here does not meet the target (it usually does, for less).
            stack.append(replace(node, settle_bound=rest, settle_graph=graph, settled_arcs=graph.arc_count))
            node = replace(node, settled_arcs=graph.arc_count)
        stack.extend(reversed(_children(instance, master_lp, master, node, max_discrepancies, allowance)))
    return best


# A node below one that will be settled is settled too if its graph has at most this share of
# that one's arcs: the smaller graph is settled sooner, and it comes first.
SETTLE_AGAIN_SHARE = 0.5
# Discrepancies are taken only this close to the root (plus one level per discrepancy allowed),
# where choices weigh most.
DISCREPANCY_DEPTH = 4
ALTERNATIVES_PER_NODE = 2


def waste_allowance(instance: Instance, incumbent_cost: float) -> np.ndarray | None:
    """With one unlimited bin type, the room per dimension that a packing of fewer bins than the
    incumbent may leave unused in all its bins together: (incumbent bins - 1) x room - total size.
    None with several bin types or max counts, where no such count applies."""
    if instance.type_count != 1 or instance.max_count[0] is not None or not np.isfinite(incumbent_cost):
        return None
    bins = int(round(incumbent_cost / float(instance.cost[0])))
    allowance: np.ndarray = (bins - 1) * instance.capacity[0] - instance.demand @ instance.sizes
    return allowance


def _waste(instance: Instance, column: tuple[int, tuple[int, ...]], demand: np.ndarray) -> np.ndarray:
    t, counts = column
    waste: np.ndarray = instance.capacity[t] - np.minimum(np.array(counts, dtype=np.int64), demand) @ instance.sizes
    return waste


def _children(
    instance: Instance,
    master_lp: MasterLP,
    master: MasterSolution,
    node: _Node,
    max_discrepancies: int,
    allowance: np.ndarray | None,
) -> list[_Node]:
    """The dive's own choice first (every column at 1 or more fixed that often, else the
    largest one once), then up to ALTERNATIVES_PER_NODE other columns, each fixed once with
    the columns tried before it made tabu."""
    columns = master_lp.pool.columns
    values = master.x
    candidates = [
        int(j) for j in np.nonzero(values > 1e-6)[0] if int(j) not in node.tabu and node.limits[columns[int(j)][0]] != 0
    ]
    if not candidates:
        return []
    candidates.sort(key=lambda j: (-float(values[j]), j))
    whole = [(j, int(math.floor(values[j] + 1e-6))) for j in candidates if values[j] >= 1 - 1e-6]
    first = whole or [(candidates[0], 1)]
    children = [_fix(instance, columns, node, first, node.tabu, node.discrepancies, node.depth + 1)]
    if node.discrepancies >= max_discrepancies or node.depth >= DISCREPANCY_DEPTH + max_discrepancies:
        return [c for c in children if c is not None]
    tabu = set(node.tabu) | {candidates[0]}
    for j in candidates[1 : 1 + ALTERNATIVES_PER_NODE]:
        children.append(
            _fix(instance, columns, node, [(j, 1)], frozenset(tabu), node.discrepancies + 1, node.depth + 1)
        )
        tabu.add(j)
    return [c for c in children if c is not None]


def _fix(
    instance: Instance,
    columns: list[tuple[int, tuple[int, ...]]],
    node: _Node,
    chosen: list[tuple[int, int]],
    tabu: frozenset[int],
    discrepancies: int,
    depth: int,
) -> _Node | None:
    """The node with `copies` more bins of each chosen column, each holding only items still needed."""
    demand, limits = node.demand.copy(), node.limits.copy()
    fixed = list(node.fixed)
    cost = node.fixed_cost
    waste = node.waste.copy()
    for j, copies in chosen:
        t, counts = columns[j]
        for _ in range(copies):
            if limits[t] == 0:
                break
            take = filled(instance, t, np.minimum(np.array(counts, dtype=np.int64), demand), demand)
            if not take.any():
                break
            fixed.append((t, tuple(int(c) for c in take)))
            cost += float(instance.cost[t])
            waste += instance.capacity[t] - take @ instance.sizes
            demand -= take
            if limits[t] > 0:
                limits[t] -= 1
    if len(fixed) == len(node.fixed):
        return None
    return _Node(demand, limits, tuple(fixed), cost, tabu, discrepancies, depth, waste, settled_arcs=node.settled_arcs)


def _finish(instance: Instance, node: _Node) -> Packing | None:
    """The node's fixed bins plus first-fit decreasing for the rest (None if that fails)."""
    used = np.array([0 if m is None else m - node.limits[t] for t, m in enumerate(instance.max_count)], dtype=np.int64)
    leftover = first_fit_decreasing(instance, node.demand, used)
    if leftover is None:
        return None
    return Packing.of([(column, 1) for column in node.fixed] + list(leftover.bins))
