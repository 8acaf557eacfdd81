"""Integer programs with HiGHS (highspy), bounded by the solver's work clock.

    minimise cost . x   s.t.  row_lower <= A x <= row_upper,  lower <= x <= upper,  x integer

The deterministic stop is a node limit, derived by the caller from the work the program may
take. Under a wall-clock cap HiGHS also gets the seconds left to the deadline. The clock of
the calling task is watched from HiGHS's interrupt callback: a task stopped from outside
(`sizing.binpack.work.WorkClock.stop`, see `sizing.binpack.portfolio`) ends its program
at the next callback, and so does a program past its deadline under a wall-clock cap. HiGHS
releases Python's lock while it runs, so programs of tasks on other threads run at the same
time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from highspy import Highs, HighsLp, HighsModelStatus, HighsSolution, HighsVarType, MatrixFormat
from scipy.sparse import csc_matrix

from sizing.binpack import work


@dataclass(frozen=True)
class MilpResult:
    """x: the best solution found (None if none); optimal: proven optimal; infeasible: proven to
    have no solution; dual_bound: a lower bound on the optimum (-inf if unknown); nodes: branch-
    and-bound nodes HiGHS explored; iterations: simplex iterations of all its LPs (heuristics
    and cut rounds included)."""

    x: np.ndarray | None
    optimal: bool
    infeasible: bool
    dual_bound: float
    nodes: int
    iterations: int
    callbacks: int = 0

    def work(self, setup: float, per_node: float) -> float:
        """Units to charge: the largest of the node-based estimate, the LP iterations (which
        count the root's cut rounds and heuristics that nodes miss) and the interrupt checks."""
        return max(
            setup + self.nodes * per_node,
            self.iterations * work.MILP_ITERATION_UNITS,
            self.callbacks * work.MILP_CALLBACK_UNITS,
        )


def solve_milp(
    cost: np.ndarray,
    matrix: Any,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    node_limit: float,
    deadline: float = math.inf,
    relative_gap: float = 1e-6,
    start: np.ndarray | None = None,
    callback_limit: float = math.inf,
    short_root: bool = False,
) -> MilpResult:
    """Solve the integer program (see the module docstring); all variables are integer.

    start: a feasible solution HiGHS begins from (its improvement heuristics search near it).
    callback_limit: HiGHS is stopped at its interrupt check after this many. The node limit
    leaves the root unbounded (cut rounds, strong branching, sub-MIP heuristics); HiGHS checks
    for interrupts at the same points of its search on every run, so this stop is deterministic.
    short_root: branch on pseudo-costs from the start and run no sub-MIP heuristics (RINS,
    RENS): HiGHS spends most of a hard root on those, and programs used as heuristics must
    stay close to their share of the work."""
    highs = Highs()
    highs.setOptionValue("output_flag", False)
    for name, value in work.milp_options(node_limit, deadline).items():
        highs.setOptionValue(name, value)
    highs.setOptionValue("mip_rel_gap", relative_gap)
    if short_root:
        highs.setOptionValue("mip_pscost_minreliable", 0)
        highs.setOptionValue("mip_heuristic_run_rins", False)
        highs.setOptionValue("mip_heuristic_run_rens", False)
    inf = highs.getInfinity()
    a = csc_matrix(matrix, dtype=float)
    columns = a.shape[1]
    model = HighsLp()
    model.num_col_ = columns
    model.num_row_ = a.shape[0]
    model.col_cost_ = np.asarray(cost, dtype=float)
    model.col_lower_ = np.asarray(lower, dtype=float)
    model.col_upper_ = np.where(np.isinf(upper), inf, np.asarray(upper, dtype=float))
    model.row_lower_ = np.where(np.isinf(row_lower), -inf, np.asarray(row_lower, dtype=float))
    model.row_upper_ = np.where(np.isinf(row_upper), inf, np.asarray(row_upper, dtype=float))
    model.a_matrix_.format_ = MatrixFormat.kColwise
    model.a_matrix_.start_ = a.indptr
    model.a_matrix_.index_ = a.indices
    model.a_matrix_.value_ = a.data
    model.integrality_ = [HighsVarType.kInteger] * columns
    highs.passModel(model)
    if start is not None:
        solution = HighsSolution()
        solution.col_value = np.asarray(start, dtype=float).tolist()
        solution.value_valid = True
        highs.setSolution(solution)
    clock = work.clock()
    checks = 0

    def interrupt(event: Any) -> None:
        nonlocal checks
        checks += 1
        # Under a wall-clock cap, HiGHS's own time limit is checked less often than this.
        if checks > callback_limit or clock.stopped or (clock.seconds is not None and clock.now() > deadline):
            event.interrupt()

    highs.cbMipInterrupt.subscribe(interrupt)
    highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    nodes = max(0, int(info.mip_node_count))
    iterations = max(0, int(info.simplex_iteration_count))
    if status == HighsModelStatus.kInfeasible:
        return MilpResult(None, False, True, math.inf, nodes, iterations, checks)
    dual = float(info.mip_dual_bound)
    dual = dual if math.isfinite(dual) else -math.inf
    solution = highs.getSolution()
    x = np.array(solution.col_value) if solution.value_valid else None
    return MilpResult(x, status == HighsModelStatus.kOptimal, False, dual, nodes, iterations, checks)
