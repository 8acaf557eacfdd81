"""Pricers for column generation: which new patterns could lower the master LP.

A pattern a of bin type t prices out when cost_t + sigma_t - pi.a < 0.
`PatternPricer` scans complete pattern lists (see `sizing.binpack.patterns`);
`KnapsackPricer` solves one knapsack per bin type (see `sizing.binpack.knapsack`);
`TablePricer` prices exactly by dynamic programming when items have size in one
dimension only (see `sizing.binpack.table_knapsack`).
Both return several item-disjoint columns per call, which cuts the number of
master LPs, and an upper bound on max pi.a per bin type for the bound.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sizing.binpack import work
from sizing.binpack.colgen import REDUCED_COST_TOLERANCE, Pricing
from sizing.binpack.instance import Instance
from sizing.binpack.knapsack import best_pattern, surrogate_bounds
from sizing.binpack.master_lp import Column
from sizing.binpack.patterns import PatternSet
from sizing.binpack.table_knapsack import best_patterns, table_cells

_CANDIDATES_PER_TYPE = 500
# Candidates looked at (for columns sharing no item) per unit of work.
CANDIDATES_PER_UNIT = 200
MANY_ITEMS = 12
MANY_ITEMS_NODES = 400
# An exact pass searches each type with at least EXACT_NODES nodes and, where the work left to
# its deadline affords more, up to EXACT_SEARCH_SHARE of that work split over the types, at
# most MAX_EXACT_NODES: proving that no pattern prices out is what ends column generation.
EXACT_NODES = 4000
MAX_EXACT_NODES = 2_000_000
EXACT_SEARCH_SHARE = 0.25
PARTIAL_PRICING_TYPES = 16
PARTIAL_PRICING_BEST = 6
PARTIAL_PRICING_TURNS = 4
# Largest dynamic programme (pieces x room cells) the table pricer builds per call.
TABLE_CELL_LIMIT = 25_000_000
# Tables past this many cells are built once per pricing, without the extra disjoint columns.
SMALL_TABLE_CELLS = 1_000_000


def sized_dimension(instance: Instance) -> int | None:
    """The one dimension in which items have size, or None when there are several (or none)."""
    sized = np.nonzero((instance.sizes > 0).any(axis=0))[0]
    return int(sized[0]) if len(sized) == 1 else None


def table_pricing_applies(instance: Instance) -> bool:
    """Items sized in one dimension only, and a table of at most TABLE_CELL_LIMIT cells."""
    d = sized_dimension(instance)
    if d is None:
        return False
    room = int(instance.capacity[:, d].max())
    return table_cells(instance.sizes[:, d], instance.demand, room) <= TABLE_CELL_LIMIT


class PatternPricer:
    """Exact pricing by scanning every feasible pattern of every bin type."""

    def __init__(self, instance: Instance, pattern_sets: Sequence[PatternSet], columns_per_call: int = 40):
        self.instance = instance
        self.pattern_sets = list(pattern_sets)
        self.columns_per_call = columns_per_call

    def price(
        self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray, deadline: float
    ) -> Pricing:
        best_values = np.zeros(self.instance.type_count)
        candidates: list[tuple[float, int, int]] = []
        for t, patterns in enumerate(self.pattern_sets):
            if not usable[t] or not len(patterns):
                continue
            values = patterns.values(prices)
            work.charge(len(patterns) / work.PATTERN_VALUES_PER_UNIT)
            best_values[t] = float(values.max())
            threshold = float(self.instance.cost[t] + limit_prices[t]) * (1 + REDUCED_COST_TOLERANCE)
            good = np.nonzero(values > threshold)[0]
            if len(good) > _CANDIDATES_PER_TYPE:
                good = good[np.argpartition(-values[good], _CANDIDATES_PER_TYPE)[:_CANDIDATES_PER_TYPE]]
            reduced = float(self.instance.cost[t] + limit_prices[t]) - values[good]
            candidates.extend(zip(reduced.tolist(), [t] * len(good), good.tolist(), strict=True))
        candidates.sort()
        candidates = candidates[:_CANDIDATES_PER_TYPE]
        work.charge(len(candidates) / CANDIDATES_PER_UNIT)
        columns: list[Column] = []
        taken = np.zeros(self.instance.shape_count, dtype=bool)
        for _, t, pattern in candidates:
            shapes = self.pattern_sets[t].shapes(pattern)
            if taken[shapes].any():
                continue
            taken[shapes] = True
            columns.append((t, tuple(np.minimum(self.pattern_sets[t].counts(pattern), demand))))
            if len(columns) >= self.columns_per_call:
                break
        return Pricing(columns, best_values, exact=True)


class KnapsackPricer:
    """Pricing by one knapsack per bin type; with a single bin type, a few disjoint patterns more.

    A quick pass with a small search budget usually finds improving patterns; only when it
    finds none does the exact pass run (larger budget), which is what proves convergence.
    HiGHS may finish searches that run out of nodes, within `milp_units` of work over the whole solve.

    When bins hold few items, quick passes reuse each type's dimension weights from its last
    LP relaxation instead of solving a new one; their upper bounds are then the search's
    (weaker) root bounds.

    With many bin types, a quick pass first prices only the types whose patterns were worth
    the most (relative to their cost) last time, plus a few others in turn; all types are
    priced when those find nothing. Types the shortlist leaves out are bounded by their
    surrogate knapsack (`sizing.binpack.knapsack.surrogate_bounds`), so every round still gives
    a Farley bound.

    Every pass first bounds each type by its surrogate knapsack, and searches only the types
    whose bound is above their cost: the others have no improving pattern. With many bin types
    that leaves out half the types or more in most rounds, so column generation gets several
    times the rounds within its budget.
    """

    def __init__(
        self,
        instance: Instance,
        milp_units: float,
        extra_columns: int = 4,
        quick_nodes: int = 50,
        exact_nodes: int = EXACT_NODES,
    ):
        self.instance = instance
        self.milp_units = milp_units
        self.extra_columns = extra_columns if instance.type_count == 1 else 0
        self.quick_nodes = quick_nodes
        # A search that cannot finish in its budget only adds time: when bins hold many items
        # the LP relaxation is a close enough bound, so the budget stays small.
        many_items = instance.typical_items_per_bin() > MANY_ITEMS
        self.exact_nodes = min(exact_nodes, MANY_ITEMS_NODES) if many_items else exact_nodes
        # With many items per bin, the rounded LP solution is the best quick pattern: keep solving it.
        self.reuse_weights = not many_items
        self.worth = np.full(instance.type_count, np.inf)
        self.turn = 0
        # Dimension weights per bin type from the last LP relaxation; quick passes reuse them.
        self.weights: list[np.ndarray | None] = [None] * instance.type_count

    def price(
        self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray, deadline: float
    ) -> Pricing:
        if usable.sum() > PARTIAL_PRICING_TYPES:
            shortlist = usable & self._shortlist(usable)
            partial = self._pass(prices, limit_prices, demand, shortlist, self.quick_nodes, deadline, quick=True)
            if partial.columns:
                return self._bounded(partial, prices, demand, usable)
        quick = self._pass(prices, limit_prices, demand, usable, self.quick_nodes, deadline, quick=True)
        if quick.columns or quick.exact or work.now() > deadline:
            return quick
        return self._pass(prices, limit_prices, demand, usable, self.exact_nodes, deadline, quick=False)

    def _exact_node_limit(self, node_limit: int, usable: np.ndarray, deadline: float) -> int:
        """Nodes for one type's exact search: `node_limit` at least, more where the work (and
        under a cap, the time) left to the deadline affords them."""
        if node_limit < EXACT_NODES:
            return node_limit
        scans = EXACT_SEARCH_SHARE * work.affordable_scans(deadline) / max(1, int(usable.sum()))
        affordable = scans / max(1, self.instance.shape_count)
        return int(min(MAX_EXACT_NODES, max(node_limit, affordable)))

    def _bounded(self, pricing: Pricing, prices: np.ndarray, demand: np.ndarray, usable: np.ndarray) -> Pricing:
        """The pricing with the usable types it did not price bounded by their surrogate
        knapsack (each type's last LP weights), so the round still gives a bound."""
        unknown = usable & np.isinf(pricing.best_values)
        if not unknown.any():
            return pricing
        best_values = pricing.best_values.copy()
        # One vectorised pass (about 2 ms for 100 types) beside a round of tens of units: not charged.
        best_values[unknown] = self._surrogate(prices, demand, unknown)[unknown]
        return Pricing(pricing.columns, best_values, pricing.exact)

    def _surrogate(self, prices: np.ndarray, demand: np.ndarray, usable: np.ndarray) -> np.ndarray:
        """Per usable type, its surrogate knapsack bound (its last LP weights, else each dimension
        weighted by the inverse of its room); inf for the others. Charged by the caller, if at all."""
        types = np.nonzero(usable)[0]
        bounds = np.full(self.instance.type_count, np.inf)
        if not len(types):
            return bounds
        rooms = self.instance.capacity[types]
        weights = np.full(rooms.shape[1], 1.0 / rooms.shape[1]) / np.maximum(rooms, 1)
        for k, t in enumerate(types.tolist()):
            known = self.weights[t]
            if known is not None:
                weights[k] = np.maximum(known, 0.0)
        bounds[types] = surrogate_bounds(prices, self.instance.sizes, rooms, demand, weights)
        return bounds

    def _shortlist(self, usable: np.ndarray) -> np.ndarray:
        """The types worth the most last time, and the next few in turn."""
        candidates = np.nonzero(usable)[0]
        order = candidates[np.lexsort((candidates, -self.worth[candidates]))]
        chosen = set(order[:PARTIAL_PRICING_BEST].tolist())
        for k in range(PARTIAL_PRICING_TURNS):
            chosen.add(int(candidates[(self.turn + k) % len(candidates)]))
        self.turn = (self.turn + PARTIAL_PRICING_TURNS) % len(candidates)
        mask = np.zeros(len(usable), dtype=bool)
        mask[list(chosen)] = True
        return mask

    def _pass(
        self,
        prices: np.ndarray,
        limit_prices: np.ndarray,
        demand: np.ndarray,
        usable: np.ndarray,
        node_limit: int,
        deadline: float,
        quick: bool,
    ) -> Pricing:
        """Price the usable types; past the deadline the rest stay unpriced (best value unknown)."""
        instance = self.instance
        best_values = np.full(instance.type_count, np.inf)
        columns: list[Column] = []
        exact = True
        thresholds = (instance.cost + limit_prices) * (1 + REDUCED_COST_TOLERANCE)
        # A type whose surrogate knapsack is worth no more than its cost has no improving pattern:
        # it is bounded, not searched (with many bin types, most types in most rounds).
        bounds = self._surrogate(prices, demand, usable)
        work.charge(work.KNAPSACK_CALL_UNITS)
        for t in range(instance.type_count):
            if not usable[t]:
                continue
            if work.now() > deadline:
                exact = False
                break
            threshold = float(thresholds[t])
            if bounds[t] <= threshold:
                best_values[t] = bounds[t]
                self.worth[t] = bounds[t] / threshold if threshold > 0 else 0.0
                continue
            remaining = prices.copy()
            for round_ in range(1 + self.extra_columns):
                first = round_ == 0 and not quick
                units = min(self.milp_units, deadline - work.now()) if first else 0.0
                reuse = None if first or not self.reuse_weights else self.weights[t]
                result = best_pattern(
                    remaining,
                    instance.sizes,
                    instance.capacity[t],
                    demand,
                    self._exact_node_limit(node_limit, usable, deadline) if first else self.quick_nodes,
                    units,
                    reuse,
                )
                work.charge(work.KNAPSACK_CALL_UNITS + result.scans / work.KNAPSACK_SCANS_PER_UNIT)
                if reuse is None and result.weights is not None:
                    self.weights[t] = result.weights
                if first and result.upper_bound > result.value:
                    self.milp_units -= work.KNAPSACK_MILP_UNITS
                if round_ == 0:
                    best_values[t] = result.upper_bound
                    self.worth[t] = result.value / float(instance.cost[t] + limit_prices[t])
                    exact = exact and result.upper_bound <= result.value * (1 + 1e-12) + 1e-12
                if result.value <= threshold:
                    break
                columns.append((t, tuple(result.counts)))
                remaining = np.where(result.counts > 0, 0.0, remaining)
        return Pricing(columns, best_values, exact)


class TablePricer:
    """Exact pricing by one dynamic programme over the room for all bin types (items sized in
    one dimension only, see `table_pricing_applies`). Each table also gives the best patterns of
    smaller rooms as further columns; with a single bin type and a small table, a few more
    item-disjoint patterns come from tables without the items already taken."""

    def __init__(self, instance: Instance, extra_columns: int = 3, alternatives: int = 12):
        dimension = sized_dimension(instance)
        if dimension is None:
            raise ValueError("table pricing needs items sized in exactly one dimension")
        self.instance = instance
        self.sizes = instance.sizes[:, dimension]
        self.rooms = instance.capacity[:, dimension]
        self.extra_columns = extra_columns if instance.type_count == 1 else 0
        self.alternatives = alternatives

    def price(
        self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray, deadline: float
    ) -> Pricing:
        instance = self.instance
        types = [t for t in range(instance.type_count) if usable[t]]
        best_values = np.zeros(instance.type_count)
        columns: list[Column] = []
        remaining = prices.copy()
        for round_ in range(1 + self.extra_columns):
            found, cells = best_patterns(
                remaining, self.sizes, demand, [int(self.rooms[t]) for t in types], self.alternatives
            )
            work.charge(work.KNAPSACK_CALL_UNITS + cells / work.TABLE_CELLS_PER_UNIT)
            taken = np.zeros(instance.shape_count, dtype=bool)
            # The alternatives (patterns of smaller rooms) fit the largest bin type.
            largest = max(types, key=lambda t: (int(self.rooms[t]), -t)) if types else 0
            owners = types + [largest] * (len(found) - len(types))
            for k, (t, pattern) in enumerate(zip(owners, found, strict=True)):
                if round_ == 0 and k < len(types):
                    best_values[t] = pattern.value
                threshold = float(instance.cost[t] + limit_prices[t]) * (1 + REDUCED_COST_TOLERANCE)
                if pattern.value > threshold:
                    columns.append((t, tuple(int(c) for c in pattern.counts)))
                    taken |= pattern.counts > 0
            if not taken.any() or work.now() > deadline or cells > SMALL_TABLE_CELLS:
                break
            remaining = np.where(taken, 0.0, remaining)
        return Pricing(columns, best_values, exact=True)
