"""Column generation for the pattern formulation (Gilmore-Gomory), with valid bounds.

The master LP (see `sizing.binpack.master_lp`) chooses how often to use each pattern
of the pool; pricers (see `sizing.binpack.pricers`) find patterns that would lower it.

Bound: for any prices pi >= 0 and best pattern values z_t >= max_a pi.a of each
bin type, scaling pi by theta = max(1, max over unlimited types of z_t / cost_t)
makes it dual feasible with sigma_t = max(0, z_t / theta - cost_t), hence

    demand . pi / theta - sum_t limit_t sigma_t  <=  optimal cost

(Farley's bound). It holds at every iteration, not only at convergence, and
needs no trust in the LP solver's accuracy, only upper bounds z_t.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sizing.binpack import work
from sizing.binpack.instance import Instance
from sizing.binpack.master_lp import Column, MasterLP, MasterSolution

REDUCED_COST_TOLERANCE = 1e-9
# Weight of the best prices so far in the prices that exact pricers see.
SMOOTHING = 0.5


@dataclass(frozen=True)
class Pricing:
    """New columns with negative reduced cost, and per bin type an upper bound on max pi.a."""

    columns: list[Column]
    best_values: np.ndarray
    exact: bool


class Pricer(Protocol):
    def price(
        self, prices: np.ndarray, limit_prices: np.ndarray, demand: np.ndarray, usable: np.ndarray, deadline: float
    ) -> Pricing: ...


def dual_bound(
    instance: Instance, demand: np.ndarray, limits: np.ndarray, prices: np.ndarray, best_values: np.ndarray
) -> float:
    """Farley's lower bound on the cost of covering `demand` (see the module docstring);
    -inf when some usable type's best value is unknown (infinite)."""
    usable = [t for t in range(instance.type_count) if limits[t] != 0]
    if not np.isfinite(best_values[usable]).all():
        return float("-inf")
    theta = 1.0
    for t in usable:
        if limits[t] < 0:
            theta = max(theta, float(best_values[t]) / float(instance.cost[t]))
    bound = float(demand @ prices) / theta
    for t in usable:
        if limits[t] > 0:
            bound -= float(limits[t]) * max(0.0, float(best_values[t]) / theta - float(instance.cost[t]))
    return bound


@dataclass(frozen=True)
class GenerationResult:
    """master: the last master LP; bound: best valid lower bound seen; converged: no column
    with negative reduced cost exists (proven); iterations: master LPs solved."""

    master: MasterSolution | None
    bound: float
    converged: bool
    iterations: int


def column_generation(
    instance: Instance,
    master_lp: MasterLP,
    pricer: Pricer,
    demand: np.ndarray,
    limits: np.ndarray,
    deadline: float,
    max_iterations: int,
    target: float = float("inf"),
    smoothing: float = 0.0,
    floor: float = float("-inf"),
) -> GenerationResult:
    """Grow the pool until no column prices out, the bound reaches `target`, the master LP's
    value comes down to `floor` (its optimum is no higher, so no bound from it can pass `floor`),
    or a budget runs out.

    With `smoothing` > 0 (Wentges), pricing sees a mix of the LP's prices and those that gave
    the best bound so far (that share of them), which damps the swings that make column
    generation tail off; meant for exact pricers. When the mix finds no column that would lower
    the LP, the LP's own prices are priced before concluding.
    """
    bound = float("-inf")
    master = None
    iterations = 0
    usable = limits != 0
    center: np.ndarray | None = None
    while iterations < max_iterations:
        iterations += 1
        master = master_lp.solve(demand, limits)
        work.charge(work.MASTER_LP_UNITS)
        if master is None:
            return GenerationResult(None, bound, False, iterations)
        if master.uncovered <= 1e-9 and master.value <= floor:
            return GenerationResult(master, bound, False, iterations)
        prices = (
            master.prices if center is None or not smoothing else smoothing * center + (1 - smoothing) * master.prices
        )
        pricing = pricer.price(prices, master.limit_prices, demand, usable, deadline)
        smoothed_bound = dual_bound(instance, demand, limits, prices, pricing.best_values)
        if center is None or smoothed_bound > bound:
            center = prices
        bound = max(bound, smoothed_bound)
        # Only columns that would lower the LP as it stands: a column found with the smoothed
        # prices may not (mis-pricing), and the LP's own prices are priced then.
        improving = [
            (t, counts)
            for t, counts in pricing.columns
            if float(master.prices @ np.asarray(counts, dtype=float))
            > float(instance.cost[t] + master.limit_prices[t]) * (1 + REDUCED_COST_TOLERANCE)
        ]
        added = sum(master_lp.pool.add(t, counts) for t, counts in improving)
        if not added and prices is not master.prices:
            pricing = pricer.price(master.prices, master.limit_prices, demand, usable, deadline)
            bound = max(bound, dual_bound(instance, demand, limits, master.prices, pricing.best_values))
            added = sum(master_lp.pool.add(t, counts) for t, counts in pricing.columns)
        if not added:
            return GenerationResult(master, bound, pricing.exact, iterations)
        if bound >= target or work.now() > deadline:
            break
    return GenerationResult(master, bound, False, iterations)
