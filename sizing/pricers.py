"""Pricers for column generation: which new patterns could lower the master LP.

A pattern a of bin type t prices out when cost_t + sigma_t - pi.a < 0.
`PatternPricer` scans complete pattern lists (see `sizing.patterns`);
`KnapsackPricer` solves one knapsack per bin type (see `sizing.knapsack`).
Both return several item-disjoint columns per call, which cuts the number of
master LPs, and an upper bound on max pi.a per bin type for the bound.
"""

from __future__ import annotations

from typing import List, Sequence

import numpy as np

from sizing.colgen import REDUCED_COST_TOLERANCE, Column, Pricing
from sizing.instance import Instance
from sizing.knapsack import best_pattern
from sizing.patterns import PatternSet

_CANDIDATES_PER_TYPE = 3000


class PatternPricer:
    """Exact pricing by scanning every feasible pattern of every bin type."""

    def __init__(self, instance: Instance, pattern_sets: Sequence[PatternSet], columns_per_call: int = 40):
        self.instance = instance
        self.pattern_sets = list(pattern_sets)
        self.columns_per_call = columns_per_call

    def price(self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray) -> Pricing:
        best_values = np.zeros(self.instance.type_count)
        candidates = []
        for t, patterns in enumerate(self.pattern_sets):
            if not usable[t] or not len(patterns):
                continue
            values = patterns.values(prices)
            best_values[t] = float(values.max())
            threshold = float(self.instance.cost[t] + limit_prices[t]) * (1 + REDUCED_COST_TOLERANCE)
            good = np.nonzero(values > threshold)[0]
            if len(good) > _CANDIDATES_PER_TYPE:
                good = good[np.argpartition(-values[good], _CANDIDATES_PER_TYPE)[:_CANDIDATES_PER_TYPE]]
            reduced = float(self.instance.cost[t] + limit_prices[t]) - values[good]
            candidates.extend(zip(reduced.tolist(), [t] * len(good), good.tolist()))
        candidates.sort()
        columns: List[Column] = []
        taken = np.zeros(self.instance.shape_count, dtype=bool)
        for _, t, pattern in candidates:
            counts = np.minimum(self.pattern_sets[t].counts(pattern), demand)
            if (taken & (counts > 0)).any():
                continue
            taken |= counts > 0
            columns.append((t, tuple(counts)))
            if len(columns) >= self.columns_per_call:
                break
        return Pricing(columns, best_values, exact=True)


class KnapsackPricer:
    """Pricing by one knapsack per bin type; with a single bin type, a few disjoint patterns more."""

    def __init__(self, instance: Instance, extra_columns: int = 4, node_limit: int = 4000):
        self.instance = instance
        self.extra_columns = extra_columns if instance.type_count == 1 else 0
        self.node_limit = node_limit

    def price(self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray) -> Pricing:
        instance = self.instance
        best_values = np.zeros(instance.type_count)
        columns: List[Column] = []
        exact = True
        for t in range(instance.type_count):
            if not usable[t]:
                continue
            threshold = float(instance.cost[t] + limit_prices[t]) * (1 + REDUCED_COST_TOLERANCE)
            remaining = prices.copy()
            for round_ in range(1 + self.extra_columns):
                result = best_pattern(remaining, instance.sizes, instance.capacity[t], demand, self.node_limit)
                if round_ == 0:
                    best_values[t] = result.upper_bound
                    exact = exact and result.upper_bound <= result.value * (1 + 1e-12) + 1e-12
                if result.value <= threshold:
                    break
                columns.append((t, tuple(result.counts)))
                remaining = np.where(result.counts > 0, 0.0, remaining)
        return Pricing(columns, best_values, exact)
