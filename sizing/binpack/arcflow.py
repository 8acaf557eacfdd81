"""The arc-flow model of one-dimensional bin packing, solved as an integer program by HiGHS.

Valério de Carvalho's model: a node per load a bin can reach, an arc (u, u + size_i) per
item of shape i placed at load u, and an arc from every node to the end (room left
unused). A path from load 0 to the end is a pattern, and

    minimise z   s.t.  flow out of 0 = z = flow into the end, flow conserved elsewhere,
                       sum of the flows on the arcs of shape i >= demand_i,  flows integer >= 0

is the whole problem: unlike the integer program over generated columns, it holds every
pattern, so its optimum is the true optimum. Its LP relaxation is as strong as column
generation's. Arcs are built with the shapes by decreasing size, an arc of shape i leaving
only the loads reached by larger shapes (up to demand_i of shape i in a row), which keeps
one order of the items in a bin and cuts most of the symmetric paths.

`arcflow_search` asks for a packing of at most `target` bins (one fewer than the best
known): a packing if HiGHS finds one, a proof that none exists when it proves the
model infeasible. The model is built only when it is small (`arc_count` tells in advance),
since HiGHS's time grows quickly with the arcs.

`fixed_by_reduced_cost` makes a large graph small where the LP is tight: with item prices
pi >= 0 scaled so that no bin (each shape at most its demand) is worth more than its cost
(Farley), every packing of z bins, trimmed to the demand, has

    z x bin cost  >=  pi . demand + sum over its bins of (bin cost - pi . bin)

and every term of the sum is >= 0, so a packing of at most `target` bins uses no arc whose
best bin through it falls short of the bin's cost by more than target x bin cost - pi . demand.
On Hard28, at the prices of the root's column generation, 2 to 11 % of the arcs are left, and
among them a packing of one bin fewer than the dives found.

`ResidualCompletion` uses the model on what a dive has left to place once that is small: it
packs the rest in fewer bins than the dive's path may use, where such a packing exists.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csc_matrix, vstack

from sizing.binpack import work
from sizing.binpack.highs_milp import solve_milp
from sizing.binpack.packing import Packing


@dataclass(frozen=True)
class ArcGraph:
    """Arcs as parallel arrays: tail and head loads (the end is `room + 1`) and shape (-1: the
    arc to the end)."""

    room: int
    tails: np.ndarray
    heads: np.ndarray
    shapes: np.ndarray

    @property
    def arc_count(self) -> int:
        return int(len(self.tails))


def _order(sizes: np.ndarray) -> list[int]:
    return sorted(range(len(sizes)), key=lambda i: (-int(sizes[i]), i))


def _item_arcs(sizes: np.ndarray, demand: np.ndarray, room: int) -> Iterator[tuple[int, np.ndarray] | np.ndarray]:
    """The item arcs, run by run: (shape, the loads its arcs leave); last, every load reached."""
    reached = np.zeros(room + 1, dtype=bool)
    reached[0] = True
    for i in _order(sizes):
        size, copies = int(sizes[i]), int(demand[i])
        if size <= 0 or size > room or copies <= 0:
            continue
        grown = reached.copy()
        front = reached.copy()
        for _ in range(min(copies, room // size)):
            starts = np.nonzero(front[: room + 1 - size])[0]
            if not len(starts):
                break
            yield i, starts
            front = np.zeros(room + 1, dtype=bool)
            front[starts + size] = True
            grown |= front
        reached = grown
    yield np.nonzero(reached)[0]


def arc_count(sizes: np.ndarray, demand: np.ndarray, room: int, limit: int) -> int | None:
    """At least as many arcs as `build_graph` makes (it merges duplicates), or None past `limit`."""
    arcs = 0
    for run in _item_arcs(sizes, demand, room):
        arcs += len(run[1]) if isinstance(run, tuple) else len(run)
        if arcs > limit:
            return None
    return arcs


def build_graph(sizes: np.ndarray, demand: np.ndarray, room: int) -> ArcGraph:
    """The arc-flow graph (see the module docstring); shapes of size 0 or none demanded get no arc."""
    tails: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    shapes: list[np.ndarray] = []
    for run in _item_arcs(sizes, demand, room):
        if isinstance(run, tuple):
            i, starts = run
            tails.append(starts)
            heads.append(starts + int(sizes[i]))
            shapes.append(np.full(len(starts), i))
        else:
            tails.append(run)
            heads.append(np.full(len(run), room + 1))
            shapes.append(np.full(len(run), -1))
    tail = np.concatenate(tails)
    head = np.concatenate(heads)
    shape = np.concatenate(shapes)
    # Parallel arcs of one shape (the same item reached by two runs) carry the same flow: keep one.
    keys = np.unique(np.stack([tail, head, shape]), axis=1)
    return ArcGraph(room, keys[0], keys[1], keys[2])


# Arcs whose best path a floating-point sum puts just past the allowance are kept: a share of a bin.
REDUCED_COST_TOLERANCE = 1e-7
# Arcs the reduced-cost pass goes through per unit of work (two passes of numpy over them).
ARCS_PER_UNIT = 2_000
# Most cells (shapes x loads) of the reduced-cost pass's tables: 32 MiB of float64.
FIXING_CELL_LIMIT = 4_000_000


@dataclass(frozen=True)
class FixedGraph:
    """graph: the arcs a packing of at most the target's bins may use; bound: Farley's lower
    bound on the bins from the prices (fractional; no packing has fewer bins)."""

    graph: ArcGraph
    bound: float


def arc_values(graph: ArcGraph, sizes: np.ndarray, demand: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per arc, the most a bin whose path takes that arc may be worth, an item of shape i worth
    values[i] and each shape taken at most its demand times (-inf where no such bin takes it).

    Paths take the shapes in the graph's order (larger first), each shape's copies in a row.
    `before[u]` is the most the shapes already passed may be worth at load exactly u, and
    `after[k][v]` the most the shapes from the k-th in order on may add from load v. An arc of
    shape i from load u carries the c-th copy of i in a row, for some c up to its demand; the
    bin it is on came to u with c - 1 copies and may take up to demand - c more. Cells: about
    shapes x copies x (room + 1), numpy over the loads.
    """
    room = graph.room
    order = [i for i in _order(sizes) if 0 < int(sizes[i]) <= room and int(demand[i]) > 0]
    after = np.zeros((len(order) + 1, room + 1))
    for k in range(len(order) - 1, -1, -1):
        after[k] = _with_copies(after[k + 1], order[k], sizes, demand, values, forward=False)
    worth = np.full(graph.arc_count, -np.inf)
    before = np.full(room + 1, -np.inf)
    before[0] = 0.0
    for k, i in enumerate(order):
        size, value, copies = int(sizes[i]), float(values[i]), _copies(i, sizes, demand, room)
        arcs = np.nonzero(graph.shapes == i)[0]
        starts = graph.tails[arcs]
        # more[v]: the most from load v on with up to `left` more copies of i, then the shapes after it.
        more = after[k + 1].copy()
        for c in range(copies, 0, -1):
            left = copies - c
            if left > 0:
                more[: room + 1 - left * size] = np.maximum(
                    more[: room + 1 - left * size], left * value + after[k + 1][left * size :]
                )
            first = starts - (c - 1) * size
            ok = first >= 0
            candidate = np.full(len(arcs), -np.inf)
            candidate[ok] = before[first[ok]] + c * value + more[starts[ok] + size]
            worth[arcs] = np.maximum(worth[arcs], candidate)
        before = _with_copies(before, i, sizes, demand, values, forward=True)
    losses = graph.shapes < 0
    worth[losses] = before[graph.tails[losses]]
    return worth


def _copies(i: int, sizes: np.ndarray, demand: np.ndarray, room: int) -> int:
    return min(int(demand[i]), room // int(sizes[i]))


def _with_copies(
    table: np.ndarray, i: int, sizes: np.ndarray, demand: np.ndarray, values: np.ndarray, forward: bool
) -> np.ndarray:
    """`table` (value per load) with 0 to demand_i copies of shape i added: at loads that many
    sizes further on (forward, values by the load reached) or from loads that many sizes on."""
    room = len(table) - 1
    size, value = int(sizes[i]), float(values[i])
    result = table.copy()
    for c in range(1, _copies(i, sizes, demand, room) + 1):
        shift = c * size
        if forward:
            result[shift:] = np.maximum(result[shift:], table[: room + 1 - shift] + c * value)
        else:
            result[: room + 1 - shift] = np.maximum(result[: room + 1 - shift], table[shift:] + c * value)
    return result


def fixed_by_reduced_cost(
    graph: ArcGraph, sizes: np.ndarray, demand: np.ndarray, prices: np.ndarray, target: int
) -> FixedGraph:
    """The arcs a packing of at most `target` bins may use, given item prices >= 0 in bins
    (see the module docstring); an empty graph when the prices prove no such packing exists.
    The prices are first scaled down, where some bin is worth more than one, to be feasible.
    Where the tables over the loads would pass FIXING_CELL_LIMIT cells, the graph is left whole
    (with the trivial bound 0)."""
    shapes = int(((sizes > 0) & (sizes <= graph.room) & (demand > 0)).sum())
    if (shapes + 1) * (graph.room + 1) > FIXING_CELL_LIMIT:
        return FixedGraph(graph, 0.0)
    work.charge(graph.arc_count / ARCS_PER_UNIT + _table_cells(graph, sizes, demand) / work.TABLE_CELLS_PER_UNIT)
    values = np.maximum(np.asarray(prices, dtype=float), 0.0)
    worth = arc_values(graph, sizes, demand, values)
    scale = max(1.0, float(worth.max(initial=0.0)))
    bound = float(demand @ values) / scale
    allowance = target - bound
    keep = 1.0 - worth / scale <= allowance + REDUCED_COST_TOLERANCE
    if allowance < -REDUCED_COST_TOLERANCE:
        keep[:] = False
    kept = ArcGraph(graph.room, graph.tails[keep], graph.heads[keep], graph.shapes[keep])
    return FixedGraph(kept, bound)


def _table_cells(graph: ArcGraph, sizes: np.ndarray, demand: np.ndarray) -> int:
    """Cells `arc_values` computes: per shape and copy in a row, three passes over the loads."""
    room = graph.room
    runs = sum(min(int(d), room // int(s)) for s, d in zip(sizes, demand, strict=True) if 0 < int(s) <= room)
    return 3 * int(runs) * (room + 1)


@dataclass(frozen=True)
class ArcFlowOutcome:
    """packing: a packing of at most `target` bins (None if none found); infeasible: HiGHS
    proved that none exists; bins_bound: a lower bound on the bins of any packing."""

    packing: Packing | None
    infeasible: bool
    bins_bound: int


def arcflow_search(
    graph: ArcGraph,
    type_index: int,
    shape_count: int,
    demand: np.ndarray,
    target: int,
    lower: int,
    units: float,
    deadline: float,
) -> ArcFlowOutcome:
    """A packing into at most `target` bins of the one bin type, or a proof there is none.

    lower: a known lower bound on the bins; units: work HiGHS may take (its node limit);
    deadline: for the wall-clock cap, if any.
    """
    arcs = graph.arc_count
    nodes = np.unique(np.concatenate([graph.tails, graph.heads]))
    inner = nodes[(nodes > 0) & (nodes <= graph.room)]
    setup = work.MILP_CALL_UNITS + arcs / work.MILP_COLUMNS_PER_UNIT
    per_node = max(1.0, arcs / work.MILP_NODE_COLUMNS_PER_UNIT)
    if target < lower or units < setup + 1:
        return ArcFlowOutcome(None, target < lower, lower)
    # Variables: the arcs, then z (the number of bins).
    rows, cols, vals = [], [], []
    row_of_node = {int(u): k for k, u in enumerate(inner)}
    for k in range(arcs):
        u, v = int(graph.tails[k]), int(graph.heads[k])
        if u in row_of_node:
            rows.append(row_of_node[u])
            cols.append(k)
            vals.append(-1.0)
        if v in row_of_node:
            rows.append(row_of_node[v])
            cols.append(k)
            vals.append(1.0)
    conservation = csc_matrix((vals, (rows, cols)), shape=(len(inner), arcs + 1))
    source = np.zeros(arcs + 1)
    source[:arcs][graph.tails == 0] = 1.0
    source[arcs] = -1.0
    demanded = [i for i in range(shape_count) if demand[i] > 0]
    cover = np.zeros((len(demanded), arcs + 1))
    for r, i in enumerate(demanded):
        cover[r, :arcs] = graph.shapes == i
    matrix = vstack([conservation, csc_matrix(source[None, :]), csc_matrix(cover)], format="csc")
    row_lower = np.concatenate([np.zeros(len(inner) + 1), demand[demanded].astype(float)])
    row_upper = np.concatenate([np.zeros(len(inner) + 1), np.full(len(demanded), np.inf)])
    objective = np.zeros(arcs + 1)
    objective[arcs] = 1.0
    upper = np.full(arcs + 1, float(target))
    lower_bounds = np.zeros(arcs + 1)
    lower_bounds[arcs] = float(lower)
    # No sub-MIP heuristics: on these models HiGHS spent most of its time in them (Hard28 graphs
    # cut down by reduced costs: 1 to 2 s without them, up to 20 s with them).
    result = solve_milp(
        objective,
        matrix,
        row_lower,
        row_upper,
        lower_bounds,
        upper,
        (units - setup) / per_node,
        deadline,
        short_root=True,
    )
    work.charge(result.work(setup, per_node))
    if result.infeasible:
        return ArcFlowOutcome(None, True, target + 1)
    bound = lower
    if np.isfinite(result.dual_bound):
        bound = max(lower, int(np.ceil(result.dual_bound - 1e-6)))
    if result.x is None:
        return ArcFlowOutcome(None, False, bound)
    flows = np.rint(result.x[:arcs]).astype(np.int64)
    packing = _paths(graph, flows, type_index, shape_count)
    if packing is None or (packing.covered(shape_count) < demand).any():
        return ArcFlowOutcome(None, False, bound)
    return ArcFlowOutcome(packing, False, bound)


def _paths(graph: ArcGraph, flows: np.ndarray, type_index: int, shape_count: int) -> Packing | None:
    """Split an integer flow into paths from load 0 to the end: one bin per unit of flow."""
    flows = flows.copy()
    out: dict[int, list[int]] = {}
    for arc in np.nonzero(flows > 0)[0]:
        out.setdefault(int(graph.tails[arc]), []).append(int(arc))
    end = graph.room + 1
    bins: list[tuple[tuple[int, tuple[int, ...]], int]] = []
    while True:
        starts = [k for k in out.get(0, []) if flows[k] > 0]
        if not starts:
            break
        counts = np.zeros(shape_count, dtype=np.int64)
        path = []
        node = 0
        while node != end:
            arcs = [k for k in out.get(node, []) if flows[k] > 0]
            if not arcs:
                return None
            k = arcs[0]
            path.append(k)
            if graph.shapes[k] >= 0:
                counts[graph.shapes[k]] += 1
            node = int(graph.heads[k])
        amount = int(min(flows[k] for k in path))
        for k in path:
            flows[k] -= amount
        bins.append(((type_index, tuple(int(c) for c in counts)), amount))
    return Packing.of(bins)


# Graphs up to this many arcs are built to be cut down by reduced costs.
REDUCIBLE_ARC_LIMIT = 100_000
# Reduced costs cut a residual graph down where the bound leaves fewer bins than this to spare:
# with more, few arcs go, and the cut is not worth its work.
FIXING_ALLOWANCE = 1.0
# Residual graphs up to this many arcs are settled by the model (on Hard28, every one of them
# within 400 units; at 5,000 arcs and more, HiGHS left some undecided with that much work).
RESIDUAL_ARC_LIMIT = 3000
RESIDUAL_UNITS = 1000.0
# HiGHS's simplex iterations are charged after the fact; on these graphs they came to at most
# about one per two arcs (Hard28), so a completion starts only with that much work left.
RESIDUAL_ARCS_PER_UNIT = 2 / work.MILP_ITERATION_UNITS


class ResidualCompletion:
    """Exact completion of a partial packing with one unlimited bin type, items sized in one
    dimension, by the arc-flow model of the items left, when its graph has at most `arc_limit`
    arcs once the arcs that no packing within the allowance uses are taken out (at the prices
    of the dive's LP for those items, `fixed_by_reduced_cost`).

    sizes: the shapes' sizes in the sized dimension; room: the bin's room in it; bin_cost: the
    cost of one bin.
    """

    def __init__(
        self,
        sizes: np.ndarray,
        room: int,
        bin_cost: float,
        arc_limit: int = RESIDUAL_ARC_LIMIT,
        units: float = RESIDUAL_UNITS,
        whole: ArcGraph | None = None,
    ):
        self.sizes = sizes
        self.room = room
        self.bin_cost = bin_cost
        self.arc_limit = arc_limit
        self.units = units
        self.whole = whole

    def graph(
        self, demand: np.ndarray, allowed_cost: float, prices: np.ndarray | None = None, bound_cost: float = -math.inf
    ) -> ArcGraph | None:
        """The graph of `demand` to settle a packing of it for less than `allowed_cost` on, if it
        has at most the arc limit; None when it has more.

        prices (per shape, in cost) and bound_cost (a lower bound on the cost of `demand`): where
        they leave less than FIXING_ALLOWANCE bins between the bound and the bins allowed, the
        arcs the prices rule out are taken out first, and with a `whole` graph (the whole
        instance's, less arcs ruled out for a packing of the whole as cheap as this one's) the
        arcs are cut from it: each residual bin, items by decreasing size, is a path of it.
        Else the graph of `demand` is built if it has at most the arc limit.
        """
        target = math.ceil(allowed_cost / self.bin_cost - 1e-9) - 1
        fixing = prices is not None and target - bound_cost / self.bin_cost < FIXING_ALLOWANCE
        if fixing and self.whole is not None:
            shapes = self.whole.shapes
            demanded = (shapes < 0) | (demand[np.maximum(shapes, 0)] > 0)
            graph = ArcGraph(self.room, self.whole.tails[demanded], self.whole.heads[demanded], shapes[demanded])
        elif arc_count(self.sizes, demand, self.room, self.arc_limit) is None:
            return None
        else:
            graph = build_graph(self.sizes, demand, self.room)
        if fixing:
            assert prices is not None  # fixing needs them
            graph = fixed_by_reduced_cost(graph, self.sizes, demand, prices / self.bin_cost, target).graph
        return graph if graph.arc_count <= self.arc_limit else None

    def complete(
        self,
        demand: np.ndarray,
        allowed_cost: float,
        bound_cost: float,
        deadline: float,
        graph: ArcGraph | None = None,
    ) -> Packing | None:
        """`demand` packed for less than `allowed_cost`; None when there is no such packing, its
        graph is over the limit, the work left before `deadline` is too little for it, or HiGHS
        finds none within its work.

        bound_cost: a lower bound on the cost of packing `demand`; graph: the graph to use,
        from `graph` for an allowance at least this one (default: the whole graph of `demand`).
        """
        if graph is None:
            graph = self.graph(demand, allowed_cost)
        units = min(self.units, work.clock().left(deadline))
        if graph is None or units < work.MILP_CALL_UNITS + graph.arc_count / RESIDUAL_ARCS_PER_UNIT:
            return None
        target = math.ceil(allowed_cost / self.bin_cost - 1e-9) - 1
        lower = max(0, math.ceil(bound_cost / self.bin_cost - 1e-9))
        if target < lower:
            return None
        return arcflow_search(graph, 0, len(self.sizes), demand, target, lower, units, deadline).packing
