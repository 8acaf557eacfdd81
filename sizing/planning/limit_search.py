"""The limit search and what is checked beside and after it.

`limit_search` runs the smallest-limits search (`sizing.planning.scenarios`); `EarlyFleet` holds the
tasks worked out side by side with it (the optimal fleet and the recommendation's likely outcomes);
`check_limits` and `findings_of` simulate the NodePool's current limits and the input's own;
`fleet_types_limits` the narrower limits of the fleet's own types; `way_down_of` the way down after
the peak under the planned limits.

Units: cpu in millicores, memory in MiB, pods as a count, costs per hour in the price table's unit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from sizing.karpenter.limits import NodePoolLimits, parse_limits
from sizing.karpenter.simulation import NodeOption, PodGroup, ProvisioningResult
from sizing.kube.resources import Resources
from sizing.planning.decisions import Change, changes
from sizing.planning.fleet import solved_fleet
from sizing.planning.plan_types import Finding, LimitsCheck, PlanInput
from sizing.planning.progress import Progress
from sizing.planning.recommendation import Outcome, likely_restrictions, outcome_on
from sizing.planning.resolution import PlanContext
from sizing.planning.scenario_setup import workload_scale_up
from sizing.planning.scenarios import (
    LimitProbe,
    LimitSearch,
    ScenarioRun,
    ScenarioRunner,
    ScenarioSetup,
    checked_limits,
    search_from,
)
from sizing.planning.way_down import WayDownPlan, keep_way_down


def scenario_changes(
    reference: Mapping[str, ScenarioRun], runs: Mapping[str, ScenarioRun]
) -> dict[str, tuple[Change, ...]]:
    return {name: changes(reference[name].decisions, run.decisions) for name, run in runs.items()}


def check_limits(
    setup: ScenarioSetup, spec: Mapping[str, Any], unlimited: Mapping[str, ScenarioRun], workers: int
) -> LimitsCheck:
    runs = ScenarioRunner(setup, workers).run_all(parse_limits(spec))
    return LimitsCheck(
        MappingProxyType(dict(spec)), MappingProxyType(runs), MappingProxyType(scenario_changes(unlimited, runs))
    )


def own_limits(plan_input: PlanInput) -> str:
    """The limits the input sets that every scenario keeps: the planned NodePool's `nodes` and `pods`,
    the other NodePools' limits."""
    named = []
    primary = {k: v for k, v in plan_input.node_pool.limits.items() if k in ("pods", "nodes")}
    for spec, limits in [(plan_input.node_pool, primary)] + [(p, dict(p.limits)) for p in plan_input.other_node_pools]:
        if limits:
            shown = ", ".join(f"{key}: {limits[key]}" for key in sorted(limits))
            named.append(f"NodePool {spec.name or 'default'!r} limits ({shown})")
    return "; ".join(named)


def findings_of(
    plan_input: PlanInput, setup: ScenarioSetup, unlimited: Mapping[str, ScenarioRun], workers: int
) -> tuple[Finding, ...]:
    """What the input's own limits change, against the same scenarios with no limits at all."""
    subject = own_limits(plan_input)
    if not subject:
        return ()
    free = replace(setup, pool_limits={}, node_pools=tuple(replace(pool, limits={}) for pool in setup.node_pools))
    found = {name: c for name, c in scenario_changes(ScenarioRunner(free, workers).run_all({}), unlimited).items() if c}
    return (Finding(subject, MappingProxyType(found)),) if found else ()


# Planned limits this many times above the most capacity any scenario uses come from subtractMax
# reserving the largest candidate of a wide NodePool; the plan then works out narrower ones.
WIDE_LIMITS_FACTOR = 2


def fleet_types_limits(
    setup: ScenarioSetup, search: LimitSearch, types: Sequence[str], headroom_percent: float, workers: int
) -> NodePoolLimits | None:
    """The limits the NodePool would need if restricted to `types` (the fleet's own), when the
    planned ones are far above what any scenario uses and the restriction decides as the NodePool
    does without limits; else None."""
    used = [run.usage for run in search.planned.values()]
    most = Resources(max(u.cpu for u in used), max(u.memory for u in used), 0)
    limits = search.limits
    wide = limits.cpu_millicores > WIDE_LIMITS_FACTOR * most.cpu or limits.memory_mib > WIDE_LIMITS_FACTOR * most.memory
    if not wide or not types or len(types) == len(setup.options):
        return None
    narrowed = replace(setup, options=tuple(o for o in setup.options if o.name in types))
    advised = checked_limits(narrowed, headroom_percent, workers)
    keeps = all(not changes(search.unlimited[name].decisions, run.decisions) for name, run in advised.unlimited.items())
    narrower = (advised.limits.cpu_millicores, advised.limits.memory_mib) < (limits.cpu_millicores, limits.memory_mib)
    return advised.limits if keeps and narrower else None


def way_down_of(
    plan_input: PlanInput, setup: ScenarioSetup, search: LimitSearch, probe: LimitProbe, workers: int
) -> tuple[LimitSearch, WayDownPlan]:
    settings = plan_input.way_down
    assert settings is not None
    min_replicas = {
        workload.name: workload_scale_up(workload, plan_input.hpa_scale_up).min_replicas
        for workload in plan_input.workloads
        if workload.autoscaled or workload.name in plan_input.hpa_scale_up
    }
    spec = plan_input.node_pool.limits
    current = parse_limits(spec) if spec and {"cpu", "memory"} & set(spec) else None
    return keep_way_down(
        setup, search, probe.runner, settings, min_replicas, plan_input.headroom_percent, current, workers
    )


def limit_search(probe: LimitProbe, headroom_percent: float, progress: Progress, beside_tasks: bool) -> LimitSearch:
    if beside_tasks:
        # The other processes are the tasks': the search keeps to this one.
        probe.runner.workers = 1
    search = search_from(probe, headroom_percent)
    progress.step("limits and scenarios")
    return search


class EarlyFleet:
    """The optimal fleet (where the solver applies) and the recommendation's likely outcomes for
    the pods the rollout places on new nodes without limits, worked out beside the limit search:
    the planned rollout places the same pods (the limits keep Karpenter's decisions), and where it
    places exactly these on new nodes the results are the ones the plan would compute after the
    search. An outcome depends only on the restriction's types, so the recommendation takes those
    of the restrictions it ranks whatever pods they were ranked for."""

    def __init__(
        self,
        context: PlanContext,
        unlimited: ProvisioningResult,
        max_pods_per_node: int | None,
        work_limit: int | None,
        simulate_on: Callable[[Sequence[NodeOption]], ProvisioningResult],
    ):
        self.context = context
        self.work_limit = work_limit
        self.simulate_on = simulate_on
        self.groups = solver_groups(context, unlimited)
        self.restrictions = likely_restrictions(
            context.options, context.labels, requested(self.groups), max_pods_per_node
        )

    def tasks(self) -> list[Callable[[], Any]]:
        """The solver first (the longest) when it runs, then each likely restriction's simulation."""
        context = self.context
        outcomes = [functools.partial(outcome_on, r, context.options, self.simulate_on) for r in self.restrictions]
        if self.work_limit is None:
            return list(outcomes)
        solve = functools.partial(
            solved_fleet,
            context.options,
            self.groups,
            context.zones,
            context.capacity_types,
            self.work_limit,
        )
        return [solve, *outcomes]

    def solved(self, found: Sequence[Any]) -> Any:
        """The solver's result among the tasks' results `found`."""
        if self.work_limit is None:
            raise ValueError("no solver ran beside the search")
        return found[0]

    def outcomes(self, found: Sequence[Any]) -> dict[frozenset[str], Outcome]:
        """The likely outcomes among the tasks' results `found`, by their restriction's types."""
        own = found if self.work_limit is None else found[1:]
        return {restriction.type_names: outcome for restriction, outcome in zip(self.restrictions, own, strict=True)}


def requested(groups: Sequence[PodGroup]) -> Resources:
    """What the groups' pods request together (cpu m, memory MiB, pod slots)."""
    return sum((g.requests.scaled(g.count) for g in groups), Resources())


def solver_groups(context: PlanContext, fleet: ProvisioningResult) -> tuple[PodGroup, ...]:
    """The pods `fleet` places on new nodes, as groups: what the optimal fleet must hold too."""
    on_new: dict[str, int] = {}
    for node in fleet.new_nodes:
        for workload, count in node.pods.items():
            on_new[workload] = on_new.get(workload, 0) + count
    return tuple(replace(group, count=on_new.get(group.workload, 0)) for group in context.groups)
