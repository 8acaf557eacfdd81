"""`plan_capacity(PlanInput) -> CapacityPlan`: NodePool sizing from the workloads at peak.

Steps: the NodePool's requirements filter the catalog; Karpenter's capacity
and allocatable model (with the EC2NodeClass kubelet settings) and the
DaemonSets give each type its room; every workload contributes replicas +
surge pods. Then:

1. the fleet Karpenter would launch for those pods (`sizing.karpenter.simulation`),
   under the limits of step 3;
2. the cheapest fleet for the same pods (`sizing.planning.fleet`, the solver);
3. NodePool limits covering fleet 1 (`sizing.karpenter.limits`);
4. the instance-type restriction under which Karpenter comes closest to the
   optimum within the blast-radius cap (`sizing.planning.recommendation`).

`plan_capacity` reads as those steps; each has its own module: the input and result types
(`plan_types`, named here too as the planner's public face), the input resolved into node options
and pod groups (`resolution`, `pool_options`, `input_checks`), the scenarios' setup
(`scenario_setup`), the limit search and its side-by-side tasks (`limit_search`).

Units: cpu in millicores, memory in MiB, pods as a count, costs per hour in
the price table's unit (USD/hour, or capacity units when the region has no
prices).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from sizing.karpenter.limits import NodePoolLimits
from sizing.karpenter.simulation import NodeOption, ProvisioningResult
from sizing.planning.fleet import OptimalFleet, optimal_fleet, solver_available
from sizing.planning.limit_search import (
    EarlyFleet,
    check_limits,
    findings_of,
    fleet_types_limits,
    limit_search,
    requested,
    solver_groups,
    way_down_of,
)
from sizing.planning.plan_types import (
    GETTING_STARTED_REQUIREMENTS,
    CapacityPlan,
    Finding,
    FleetGap,
    LimitsCheck,
    NeverRunning,
    NodePoolSpec,
    PlanInput,
    pool_types,
)
from sizing.planning.progress import Progress, StderrProgress
from sizing.planning.recommendation import Outcome, Recommendation, confirmed, likely_outcomes, recommend
from sizing.planning.resolution import PlanContext, resolve, runnable_input
from sizing.planning.scenario_setup import scenario_setup
from sizing.planning.scenarios import ROLLOUT, LimitProbe, LimitSearch, ScenarioSetup, all_at_once, checked_limits
from sizing.planning.side_by_side import can_fork, run_around, run_beside
from sizing.planning.way_down import WayDownPlan, with_optimum

# The planner's public face: its input and result types live in `plan_types`, and are named here too.
__all__ = [
    "CONSTRAINED_NOTE",
    "GETTING_STARTED_REQUIREMENTS",
    "SOLVER_MISSING_NOTE",
    "CapacityPlan",
    "Finding",
    "FleetGap",
    "LimitsCheck",
    "NeverRunning",
    "NodePoolSpec",
    "PlanInput",
    "Progress",
    "node_options",
    "plan_capacity",
    "pool_types",
]

SOLVER_MISSING_NOTE = (
    "the optimal fleet was not computed: the bin-packing solver (sizing.binpack.solver) is not installed"
)
CONSTRAINED_NOTE = (
    "the optimal fleet was not computed: the bin-packing solver does not model topology spread, pod "
    "affinity or anti-affinity, host ports, several NodePools or a choice among a custom label's values, "
    "which these workloads use"
)


def plan_capacity(plan_input: PlanInput, progress: Progress | None = None, workers: int = 1) -> CapacityPlan:
    """Plan the NodePool for `plan_input`; raises SizingInputError on input that cannot be planned.

    A workload whose pods can never run is left out and listed in `never_running` with its reason
    (the plan is that of the input without it); an input whose every workload can never run is refused.

    progress: told as each phase ends (by default, a line on stderr once a plan takes a few seconds);
    workers: processes that may simulate side by side (`sizing.planning.side_by_side`: forked, so
    only where the caller has no threads that a fork would break); the plan is byte-identical with
    any number.
    """
    progress = progress or StderrProgress(sum(workload.peak_pods for workload in plan_input.workloads))
    plan_input, context, never_running = runnable_input(plan_input)
    setup = scenario_setup(plan_input, context, context.options)
    progress.step("instance types and pods")

    notes = list(context.notes)
    probe = LimitProbe(setup, workers)
    solves = plan_input.solver_work_limit is not None and not context.constrained and solver_available()
    early_fleet = _early_fleet(plan_input, context, setup, probe, solves, workers)
    search, solved_early = _search_limits(plan_input, probe, early_fleet, progress, workers)
    way_down = None
    if plan_input.way_down is not None:
        search, way_down = way_down_of(plan_input, setup, search, probe, workers)
    fleet = search.planned[ROLLOUT].result

    optimum = _optimum(plan_input, context, setup, fleet, early_fleet, solved_early, solves, way_down, notes, workers)
    if optimum.optimal is not None:
        progress.step("optimal fleet")
    recommendation, recommended_limits = _recommendation(plan_input, context, setup, fleet, optimum, workers)
    progress.step("recommendation")
    if recommendation.left_by_budget:
        notes.append(
            f"the recommendation simulated the {recommendation.evaluated - 1} instance-type restrictions with the "
            f"lowest cost bounds; {recommendation.left_by_budget} more were left unsimulated (a fixed budget of work)"
        )

    current = None
    if plan_input.node_pool.limits and {"cpu", "memory"} & set(plan_input.node_pool.limits):
        current = check_limits(setup, plan_input.node_pool.limits, search.unlimited, workers)
    findings = findings_of(plan_input, setup, search.unlimited, workers)
    narrower = fleet_types_limits(setup, search, pool_types(fleet), plan_input.headroom_percent, workers)
    progress.step("current limits and findings")

    return CapacityPlan(
        input=plan_input,
        prices=context.prices,
        instance_types=tuple(o.name for o in context.options),
        node_options=context.options,
        fleet=fleet,
        limits=search.limits,
        optimal=optimum.optimal,
        gap=optimum.gap,
        recommendation=recommendation,
        recommended_limits=recommended_limits,
        current_limits=current,
        notes=tuple(notes),
        scenarios=search.planned,
        unlimited=search.unlimited,
        limits_below=search.below,
        findings=findings,
        daemon_set_pools=context.daemon_set_pools,
        fleet_types_limits=narrower,
        ramps=MappingProxyType(
            {group.workload: ramp for group, ramp in zip(setup.peak_groups, setup.ramps, strict=True)}
        ),
        offerings=context.offerings,
        never_running=never_running,
        way_down=optimum.way_down,
    )


def node_options(plan_input: PlanInput) -> tuple[NodeOption, ...]:
    """The NodePool's instance types with capacity, allocatable, DaemonSet overhead and price."""
    return resolve(plan_input).options


def _all_at_once_on(setup: ScenarioSetup) -> Callable[[Sequence[NodeOption]], ProvisioningResult]:
    """The rollout of `setup`'s pods all at once, simulated on the given node options instead of its own."""

    def all_at_once_on(types: Sequence[NodeOption]) -> ProvisioningResult:
        return all_at_once(replace(setup, options=tuple(types)))

    return all_at_once_on


def _early_fleet(
    plan_input: PlanInput, context: PlanContext, setup: ScenarioSetup, probe: LimitProbe, solves: bool, workers: int
) -> EarlyFleet | None:
    """What can be worked out beside the limit search: with a core to spare, the optimal fleet and
    the likely candidates are worked out while the limits are searched (None: nothing)."""
    if not (workers > 1 and can_fork()):
        return None
    return EarlyFleet(
        context,
        probe.unlimited[ROLLOUT].result,
        plan_input.max_pods_per_node,
        plan_input.solver_work_limit if solves else None,
        _all_at_once_on(setup),
    )


def _search_limits(
    plan_input: PlanInput, probe: LimitProbe, early_fleet: EarlyFleet | None, progress: Progress, workers: int
) -> tuple[LimitSearch, Any]:
    """The limit search, with the early fleet's tasks side by side; the tasks' results (or None)."""
    early_tasks = early_fleet.tasks() if early_fleet is not None else []
    return run_around(
        functools.partial(limit_search, probe, plan_input.headroom_percent, progress, bool(early_tasks)),
        early_tasks,
        workers,
    )


@dataclass(frozen=True)
class _Optimum:
    """The optimal fleet and Karpenter's gap to it (None where not computed), the outcomes of the
    recommendation's likely restrictions already simulated (None: none), and the way down with the
    optimum's nodes where it was computed."""

    optimal: OptimalFleet | None
    gap: FleetGap | None
    known_outcomes: dict[frozenset[str], Outcome] | None
    way_down: WayDownPlan | None


def _optimum(
    plan_input: PlanInput,
    context: PlanContext,
    setup: ScenarioSetup,
    fleet: ProvisioningResult,
    early_fleet: EarlyFleet | None,
    solved_early: Any,
    solves: bool,
    way_down: WayDownPlan | None,
    notes: list[str],
    workers: int,
) -> _Optimum:
    """The cheapest fleet for the pods `fleet` places on new nodes, where the solver applies; else a
    note of why it was not computed."""
    options = context.options
    groups = solver_groups(context, fleet)
    early: dict[frozenset[str], Outcome] | None = None
    if not solves and early_fleet is not None and solved_early is not None:
        early = early_fleet.outcomes(solved_early)
    if plan_input.solver_work_limit is not None and context.constrained:
        notes.append(CONSTRAINED_NOTE)
        return _Optimum(None, None, early, way_down)
    if plan_input.solver_work_limit is not None and not solver_available():
        notes.append(SOLVER_MISSING_NOTE)
        return _Optimum(None, None, early, way_down)
    if plan_input.solver_work_limit is None:
        return _Optimum(None, None, early, way_down)
    solve = functools.partial(
        optimal_fleet,
        options,
        groups,
        context.zones,
        context.capacity_types,
        plan_input.solver_work_limit,
        known=fleet,
    )
    if early_fleet is not None and solved_early is not None and groups == early_fleet.groups:
        # The planned fleet places the pods the fleet without limits placed: what was
        # computed beside the limit search is what would be computed now.
        early = early_fleet.outcomes(solved_early)
        solved = solve(solved=early_fleet.solved(solved_early))
    else:
        # The solver in a forked process, while this one simulates the candidates the
        # recommendation will most likely rank (all but the optimum's own types).
        solved, early = run_beside(
            solve,
            functools.partial(
                likely_outcomes,
                options,
                context.labels,
                _all_at_once_on(setup),
                requested(groups),
                plan_input.max_pods_per_node,
            ),
            workers,
        )
    if way_down is not None:
        way_down = with_optimum(
            way_down, options, context.groups, context.zones, context.capacity_types, plan_input.solver_work_limit
        )
    karpenter_cost = sum(node.price for node in fleet.new_nodes)
    percent = (karpenter_cost / solved.cost - 1) * 100 if solved.cost > 0 else None
    gap = FleetGap(len(fleet.new_nodes) - solved.node_count, karpenter_cost - solved.cost, percent)
    return _Optimum(solved, gap, early, way_down)


def _recommendation(
    plan_input: PlanInput,
    context: PlanContext,
    setup: ScenarioSetup,
    fleet: ProvisioningResult,
    optimum: _Optimum,
    workers: int,
) -> tuple[Recommendation, NodePoolLimits | None]:
    """The instance-type restriction under which Karpenter comes closest to the optimum, confirmed
    by the rollout under its own limits, and those limits (None: the restriction changes nothing)."""
    options = context.options
    optimal = optimum.optimal
    recommendation = recommend(
        options,
        context.labels,
        _all_at_once_on(setup),
        requested(solver_groups(context, fleet)),
        max_pods_per_node=plan_input.max_pods_per_node,
        optimum_cost=optimal.cost if optimal else None,
        optimal_types=optimal.instance_types if optimal else (),
        price_unit=context.prices.unit,
        current=fleet,
        workers=workers,
        known_outcomes=optimum.known_outcomes,
    )
    if not recommendation.changes_anything:
        return recommendation, None
    chosen = tuple(o for o in options if o.name in recommendation.chosen.restriction.type_names)
    advised = checked_limits(replace(setup, options=chosen), plan_input.headroom_percent, workers)
    recommendation = confirmed(recommendation, advised.planned[ROLLOUT].result)
    return recommendation, advised.limits if recommendation.changes_anything else None
