"""The solver's clock: units of work, so the same problem gets the same answer on any machine.

Every step of the search charges what it did (a master LP solve, a knapsack search by
its nodes, an integer program by its branch-and-bound nodes) and checks its deadline
against the work spent, never against the wall clock. HiGHS runs single-threaded with
node limits and no time limit, so each call is deterministic too.

A wall-clock cap may be set as a safety net (`Problem.time_limit_seconds`); results cut
by it depend on the machine, so the capacity planner leaves it off.
"""

from __future__ import annotations

import time
from typing import Optional

# A unit is worth about a millisecond on a 2-core x86_64 machine (measured on the planner's
# problems); only the ratios matter for determinism, the scale only for how long a budget lasts.
MASTER_LP_UNITS = 3
KNAPSACK_CALL_UNITS = 2
KNAPSACK_NODES_PER_UNIT = 15
KNAPSACK_MILP_UNITS = 100
MILP_CALL_UNITS = 20
MILP_NODE_COLUMNS_PER_UNIT = 50
MILP_COLUMNS_PER_UNIT = 20
PATTERNS_PER_UNIT = 20_000


class WorkClock:
    """Work spent so far; `now()` stands in for a clock in every deadline of the search."""

    def __init__(self, wall_seconds: Optional[float] = None):
        self.spent = 0.0
        self._wall_deadline = None if wall_seconds is None else time.perf_counter() + wall_seconds

    def charge(self, units: float) -> None:
        self.spent += units

    def now(self) -> float:
        if self._wall_deadline is not None and time.perf_counter() > self._wall_deadline:
            return float("inf")
        return self.spent


_active = WorkClock()


def start(wall_seconds: Optional[float] = None) -> WorkClock:
    """A fresh clock for one solve; the search's modules read it through `now()` and `charge()`."""
    global _active
    _active = WorkClock(wall_seconds)
    return _active


def now() -> float:
    return _active.now()


def charge(units: float) -> None:
    _active.charge(units)


def milp_options(node_limit: int) -> dict:
    """HiGHS options for a deterministic integer program: a node limit, no time limit."""
    return {"node_limit": max(1, int(node_limit)), "presolve": True}
