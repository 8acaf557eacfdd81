"""The solver's clock: units of work, so the same problem gets the same answer on any machine.

Every step of the search charges what it did (a master LP solve, a knapsack search by
its nodes, an integer program by its branch-and-bound nodes) and checks its deadline
against the work spent, never against the wall clock. HiGHS gets node limits derived from
the work a step may take and is charged, after it returns, the larger of its nodes and its
simplex iterations (which count the root's cut rounds and heuristics), so each call is
deterministic too. A single integer program can still run past its share: HiGHS offers
no deterministic limit on the work of its root.

A wall-clock cap may be set as well (`Problem.time_limit_seconds`). The clock then maps
the elapsed share of the cap onto the work scale: `now()` is the larger of the work spent
and `origin + units * elapsed / seconds`. Every deadline of the search, a share of the work
budget, is thereby also the same share of the cap, so each phase keeps its share of the
time however large the work budget is, and HiGHS is told the seconds left to its deadline.
Past the cap `now()` is infinite, which stops every loop. Results cut by the cap depend on
the machine; the capacity planner leaves it off.

`WorkClock.portion` carves a budget of its own out of a clock, for a task that may run on
another thread: it charges its own work, so its result depends only on its budget, never
on what runs beside it. Each thread reads the clock it was given through `now()` and
`charge()` (see `using`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# A unit is worth about a millisecond on a 2-core x86_64 machine (measured on the planner's
# problems); only the ratios matter for determinism, the scale only for how long a budget lasts.
MASTER_LP_UNITS = 3
KNAPSACK_CALL_UNITS = 2
# Shapes looked at per unit by the pricing knapsack's search: a node of the compiled search
# (`sizing.binpack.knapsack_search`) looks at each shape it may still add, 65,000 to 130,000 of
# them a millisecond on the reference machine, so a search is charged its nodes times its shapes.
KNAPSACK_SCANS_PER_UNIT = 75_000
# Units of work in a second of wall clock (a unit is about a millisecond): under a cap, what
# bounds a search that cannot look at the clock while it runs.
UNITS_PER_SECOND = 1000
KNAPSACK_MILP_UNITS = 100
MILP_CALL_UNITS = 20
MILP_NODE_COLUMNS_PER_UNIT = 50
MILP_COLUMNS_PER_UNIT = 20
# Patterns listed per unit (`sizing.binpack.patterns`). Listing is slower than that on the reference
# machine (375,000 to 890,000 patterns a second, docs/benchmarks.md); charging its real cost would
# change which lists complete under the default budget, so the rate is kept as the budget's results
# were measured with it.
PATTERNS_PER_UNIT = 10_000
# Patterns of a complete list valued at once per unit, when pricing scans the list: a sparse
# product, 55,000 to 200,000 patterns a millisecond on the reference machine (three-dimensional
# lists the slower), far cheaper per pattern than listing them.
PATTERN_VALUES_PER_UNIT = 50_000
# Simplex iterations of an integer program (root cut rounds and heuristics included) per unit.
MILP_ITERATION_UNITS = 0.5
# One interrupt check of HiGHS's integer search. Checks come 2 to 30 ms apart on the reference
# machine; at this rate a program over columns ends within about twice its share of the work
# on the vector and fleet benchmarks (HiGHS's root does not check often enough for less).
MILP_CALLBACK_UNITS = 4
# Cells of a dynamic programme (capacity x shape steps) worth one unit.
TABLE_CELLS_PER_UNIT = 200_000


class WorkClock:
    """A budget of `units` of work from `origin` on the work scale, and optionally `seconds`
    of wall clock from now (see the module docstring)."""

    def __init__(self, units: float = math.inf, seconds: float | None = None, origin: float = 0.0):
        self.units = units
        self.origin = origin
        self.spent = origin
        self.seconds = seconds
        self._started = time.perf_counter()
        self._stopped = False

    @property
    def end(self) -> float:
        """The point on the work scale where the budget runs out."""
        return self.origin + self.units

    def charge(self, units: float) -> None:
        self.spent += units

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def stop(self) -> None:
        """End this budget now: every later reading of the clock is past any deadline."""
        self._stopped = True

    @property
    def stopped(self) -> bool:
        return self._stopped

    def now(self) -> float:
        if self._stopped:
            return math.inf
        if self.seconds is None:
            return self.spent
        elapsed = self.elapsed()
        if elapsed >= self.seconds:
            return math.inf
        if not math.isfinite(self.units):
            return self.spent
        return max(self.spent, self.origin + self.units * elapsed / self.seconds)

    def left(self, deadline: float) -> float:
        """Units of work until `deadline` (never negative)."""
        return max(0.0, min(deadline, self.end) - self.now())

    def seconds_until(self, deadline: float) -> float | None:
        """Wall seconds until `deadline` is reached by the clock; None without a cap."""
        if self.seconds is None:
            return None
        share = 1.0 if not math.isfinite(self.units) else (min(deadline, self.end) - self.origin) / self.units
        return max(0.0, min(self.seconds, self.seconds * share) - self.elapsed())

    def portion(self, units: float, seconds: float | None) -> WorkClock:
        """A clock of its own, from the work spent so far: `units` of work and, when this clock has
        a cap, `seconds` of wall clock (None: no cap)."""
        return WorkClock(units, None if self.seconds is None else seconds, origin=self.spent)


_local = threading.local()


def _active() -> WorkClock:
    clock: WorkClock | None = getattr(_local, "clock", None)
    if clock is None:
        clock = WorkClock()
        _local.clock = clock
    return clock


@contextmanager
def using(clock: WorkClock) -> Iterator[WorkClock]:
    """Make `clock` this thread's clock for the duration of the block."""
    previous = getattr(_local, "clock", None)
    _local.clock = clock
    try:
        yield clock
    finally:
        _local.clock = previous


def clock() -> WorkClock:
    return _active()


def now() -> float:
    return _active().now()


def charge(units: float) -> None:
    _active().charge(units)


def seconds_until(deadline: float) -> float | None:
    return _active().seconds_until(deadline)


def left(deadline: float) -> float:
    return _active().left(deadline)


def milp_options(node_limit: float, deadline: float = math.inf) -> dict[str, object]:
    """HiGHS options for an integer program: a node limit (the deterministic stop) and, under a
    wall-clock cap, the seconds left to `deadline`."""
    options: dict[str, object] = {"mip_max_nodes": max(1, int(min(node_limit, 2**31 - 1)))}
    seconds = seconds_until(deadline)
    if seconds is not None:
        options["time_limit"] = max(seconds, 1e-3)
    return options


def affordable_scans(deadline: float) -> float:
    """Shapes a knapsack search may look at before `deadline`: by the work left and, under a
    wall-clock cap, by the seconds left (the search itself never reads the clock)."""
    scans = left(deadline) * KNAPSACK_SCANS_PER_UNIT
    seconds = seconds_until(deadline)
    if seconds is not None:
        scans = min(scans, seconds * UNITS_PER_SECOND * KNAPSACK_SCANS_PER_UNIT)
    return scans
