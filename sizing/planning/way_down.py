"""The way down: from the peak fleet, the HPAs scale in and Karpenter disrupts what is left behind.

1. **Start**: the peak scenario's fleet under the planned limits, every pod bound at 0 s.
2. **HPA scale-in** (`sizing.kube.hpa_scale_down`): at 0 s the load drops; each autoscaled
   workload goes from its peak to its target (its HPA's minReplicas, or the level the user gives,
   a percent of the peak, never below minReplicas) under its `behavior.scaleDown` (Kubernetes'
   defaults where none is given). Pods that no HPA scales stay. The pods deleted at each step are
   the ReplicaSet controller's choice (`sizing.kube.replicaset`).
3. **Karpenter** (`sizing.karpenter.simulation.disruption`): emptiness and consolidation per
   NodePool `disruption` settings, budgets and blocking pods, on the same clock.
4. **At rest**: the fleet left and its cost per hour, against the optimal fleet for the same pods
   (`sizing.planning.fleet`, when the solver runs), and why each node left stays.

Limits: a replacement counts against the NodePool's limits while the nodes it replaces still run.
The way down decides the same under limits at or above its `limit_demand` (every scheduling run of
it filters nothing there). The planned limits are raised to that demand when they would otherwise
keep a dearer node (`keep_way_down`), and the NodePool's current limits are checked against it.

Units: cpu in millicores, memory in MiB, time in seconds, prices per hour.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from sizing.errors import SizingInputError
from sizing.karpenter.limits import with_headroom
from sizing.karpenter.simulation import (
    LIMIT_KEYS,
    NodeOption,
    NodePoolModel,
    PlacedNode,
    PodGroup,
    ProvisioningResult,
)
from sizing.karpenter.simulation.disruption import (
    DisruptionInput,
    DisruptionPolicy,
    DisruptionResult,
    FleetNode,
    ScaleDown,
    simulate_disruption,
)
from sizing.karpenter.simulation.model import DEFAULT_POOL
from sizing.kube.hpa_scale_down import HpaScaleDown, scale_down_steps
from sizing.kube.resources import Resources
from sizing.planning.fleet import optimal_fleet
from sizing.planning.scenarios import PEAK, LimitSearch, ScenarioRunner, ScenarioSetup
from sizing.planning.side_by_side import run_around

MAX_LEVEL_PERCENT = 100.0
WAY_DOWN = "way-down"


@dataclass(frozen=True)
class WayDownSettings:
    """What the way down needs beyond the plan.

    policies: NodePool name -> its `spec.disruption` (a NodePool missing there is never
    disrupted); scale_down: workload name -> its HPA `behavior.scaleDown` (Kubernetes' defaults
    for the others); level_percent: the load left after the peak, in percent of each workload's
    peak replicas (None: every HPA goes to its minReplicas); blocking: workload -> why its pods
    block eviction (`karpenter.sh/do-not-disrupt`, a PodDisruptionBudget allowing no
    disruption); spot_to_spot: Karpenter's SpotToSpotConsolidation feature gate.
    """

    policies: Mapping[str, DisruptionPolicy] = field(default_factory=dict)
    scale_down: Mapping[str, HpaScaleDown] = field(default_factory=dict)
    level_percent: float | None = None
    blocking: Mapping[str, str] = field(default_factory=dict)
    spot_to_spot: bool = False

    def __post_init__(self) -> None:
        level = self.level_percent
        if level is not None and (
            isinstance(level, bool) or not isinstance(level, int | float) or not 0 <= level <= MAX_LEVEL_PERCENT
        ):
            raise SizingInputError(f"way_down.level_percent must be from 0 to 100, got {level!r}")


@dataclass(frozen=True)
class WayDown:
    """The way down under some limits.

    result: the disruption simulation (steps, fleet at rest, why nodes stay, limit demand);
    targets: workload -> replicas at rest; start_cost / start_nodes: the peak fleet's;
    limits: the planned NodePool's limits it ran under (empty: none); changes: the commands
    that differ from the way down without limits (empty when the limits keep every decision).
    """

    result: DisruptionResult
    targets: Mapping[str, int]
    start_cost: float
    start_nodes: int
    limits: Mapping[str, int]
    changes: tuple[str, ...] = ()

    @property
    def cost(self) -> float:
        return self.result.cost


def _pools(setup: ScenarioSetup, limits: Mapping[str, int]) -> tuple[NodePoolModel, ...]:
    every = {**setup.pool_limits, **limits}
    if setup.node_pools:
        primary, *others = setup.node_pools
        return (replace(primary, node_options=setup.options, limits=every), *others)
    return (NodePoolModel(DEFAULT_POOL, setup.options, every, setup.zones, setup.capacity_types),)


def _option(pools: tuple[NodePoolModel, ...], setup: ScenarioSetup, node: PlacedNode) -> NodeOption:
    for pool in pools:
        if pool.name == node.node_pool:
            for option in pool.node_options:
                if option.name == node.instance_type:
                    return option
    for running in setup.running:
        if running.name == node.name:
            return running.option
    raise SizingInputError(f"node {node.name}: instance type {node.instance_type} is not among its NodePool's")


def targets(setup: ScenarioSetup, min_replicas: Mapping[str, int], level_percent: float | None) -> dict[str, int]:
    """Workload -> replicas once the load has dropped (autoscaled workloads only)."""
    found = {}
    for group in setup.peak_groups:
        if group.workload not in min_replicas:
            continue
        floor = min(min_replicas[group.workload], group.count)
        level = floor if level_percent is None else math.ceil(group.count * level_percent / 100)
        found[group.workload] = max(floor, min(level, group.count))
    return found


def run_way_down(
    setup: ScenarioSetup,
    peak: ProvisioningResult,
    settings: WayDownSettings,
    min_replicas: Mapping[str, int],
    limits: Mapping[str, int],
) -> WayDown:
    """The way down from `peak`'s fleet with the planned NodePool under `limits`.

    min_replicas: autoscaled workload -> its HPA's minReplicas (others do not scale in).
    """
    unknown = sorted(set(settings.scale_down) - {group.workload for group in setup.peak_groups})
    if unknown:
        raise SizingInputError(f"way_down.scale_down names {unknown[0]!r}, which is not a workload of the plan")
    pools = _pools(setup, limits)
    names = {pool.name for pool in pools}
    unknown = sorted(set(settings.policies) - names)
    if unknown:
        raise SizingInputError(
            f"way_down.policies names NodePool {unknown[0]!r}; the plan's NodePools are {sorted(names)}"
        )
    nodes = []
    for index, node in enumerate(peak.nodes):
        if not node.pods and not node.existing:
            continue
        nodes.append(
            FleetNode(
                name=node.name,
                option=_option(pools, setup, node),
                node_pool=node.node_pool,
                price=node.price,
                pods=MappingProxyType(dict(node.pods)),
                capacity_type=node.capacity_type,
                zone=node.zones[0] if len(node.zones) == 1 else None,
                labels=MappingProxyType(dict(node.labels)),
                created=index,
                managed=node.in_node_pool and node.node_pool in names,
            )
        )
    wanted = targets(setup, min_replicas, settings.level_percent)
    downs = []
    for group in setup.peak_groups:
        if group.workload not in wanted:
            continue
        placed = sum(node.pods.get(group.workload, 0) for node in peak.nodes)
        behaviour = settings.scale_down.get(group.workload, HpaScaleDown())
        steps = scale_down_steps(placed, min(wanted[group.workload], placed), behaviour)
        for (_, before), (time, after) in zip(steps, steps[1:], strict=False):
            downs.append(ScaleDown(time, group.workload, before - after))
    given = DisruptionInput(
        nodes=tuple(nodes),
        groups=MappingProxyType({group.workload: group for group in setup.peak_groups}),
        pools=pools,
        policies=MappingProxyType(dict(settings.policies)),
        blocking=MappingProxyType(dict(settings.blocking)),
        scale_downs=tuple(downs),
        spot_to_spot=settings.spot_to_spot,
    )
    result = simulate_disruption(given, setup.type_tables)
    return WayDown(
        result,
        MappingProxyType(wanted),
        sum(node.price for node in peak.nodes),
        len(nodes),
        MappingProxyType(dict(limits)),
    )


def compared(under: WayDown, unlimited: WayDown) -> WayDown:
    """`under` with the commands that differ from the way down without limits listed."""
    expected = unlimited.result.decisions
    actual = under.result.decisions
    changes = []
    for index in range(max(len(expected), len(actual))):
        before = expected[index] if index < len(expected) else None
        after = actual[index] if index < len(actual) else None
        if before != after:
            changes.append(f"command {index + 1}: {_describe(after)} instead of {_describe(before)}")
    return replace(under, changes=tuple(changes))


def _describe(decision: tuple[int, str, tuple[str, ...], str | None] | None) -> str:
    if decision is None:
        return "nothing"
    time, method, removed, launched = decision
    what = f"{method} at {time} s removes {', '.join(removed)}"
    return what + (f" for one {launched}" if launched else "")


def demand(way_down: WayDown) -> dict[str, int]:
    """The limits (cpu m, memory MiB, ...) at or above which the way down decides as without them."""
    return {key: way_down.result.limit_demand.get(key, 0) for key in LIMIT_KEYS}


@dataclass(frozen=True)
class WayDownPlan:
    """The way down as the plan reports it.

    planned: under the planned limits; unlimited: from the same peak fleet without limits;
    current: under the NodePool's current limits (from their own peak fleet), None when it sets
    no cpu or memory limit; raised: per dimension ("cpu", "memory"), the limit the way down
    needed above what the other scenarios needed (cpu m, memory MiB), empty when none.
    """

    planned: WayDown
    unlimited: WayDown
    current: WayDown | None
    raised: Mapping[str, int]
    optimal_cost: float | None = None
    optimal_nodes: int | None = None

    @property
    def pods_at_rest(self) -> dict[str, int]:
        """Workload -> pods on the fleet at rest (planned limits)."""
        found: dict[str, int] = {}
        for node in self.planned.result.nodes:
            for workload, count in node.pods.items():
                found[workload] = found.get(workload, 0) + count
        return dict(sorted(found.items()))


# How often the limits may be raised for the way down before the plan says they do not settle.
MAX_RAISES = 4
# Steps of the search between the other scenarios' minimum and the way down's demand.
SEARCH_STEPS = 64


def _whole(cpu: float, memory: float) -> tuple[int, int]:
    return math.ceil(cpu / 1000) * 1000, math.ceil(memory / 1024) * 1024


def _smallest_keeping(
    keeps: Callable[[int, int], bool], base: tuple[int, int], top: tuple[int, int]
) -> tuple[int, int]:
    """The smallest whole-core, whole-GiB limits on the line from `base` to `top` under which
    `keeps` holds (it holds at `top`: limits there filter nothing), by bisection."""

    def point(step: int) -> tuple[int, int]:
        return _whole(
            base[0] + (top[0] - base[0]) * step / SEARCH_STEPS, base[1] + (top[1] - base[1]) * step / SEARCH_STEPS
        )

    low, high = 0, SEARCH_STEPS
    while low < high:
        middle = (low + high) // 2
        if keeps(*point(middle)):
            high = middle
        else:
            low = middle + 1
    return point(high)


def keep_way_down(
    setup: ScenarioSetup,
    search: LimitSearch,
    runner: ScenarioRunner,
    settings: WayDownSettings,
    min_replicas: Mapping[str, int],
    headroom_percent: float,
    current_limits: Mapping[str, int] | None,
    workers: int = 1,
) -> tuple[LimitSearch, WayDownPlan]:
    """The way down from the planned peak fleet, and the planned limits raised where they would
    change its decisions: to the smallest whole cores and GiB (plus headroom) between the other
    scenarios' minimum and the way down's demand that keep them; the planned scenarios then run
    again under the raised limits, and the way down from their peak is checked again."""
    raised: dict[str, int] = {}
    # The runs of the current peak by (cpu, memory): the last check is the way down as planned.
    runs: dict[tuple[int, int], WayDown] = {}
    for _ in range(MAX_RAISES + 1):
        peak = search.planned[PEAK].result
        limits = search.limits
        # With a second worker, the way down under the limits runs in a forked child beside the
        # one without: the first check below then only compares them.
        unlimited, beside = run_around(
            functools.partial(run_way_down, setup, peak, settings, min_replicas, {}),
            [functools.partial(run_way_down, setup, peak, settings, min_replicas, limits.for_simulation())],
            workers,
        )
        runs.clear()
        if beside is not None:
            runs[(limits.cpu_millicores, limits.memory_mib)] = beside[0]

        def keeps(cpu: int, memory: int, peak: ProvisioningResult = peak, unlimited: WayDown = unlimited) -> bool:
            run = runs.get((cpu, memory)) or run_way_down(
                setup, peak, settings, min_replicas, {"cpu": cpu, "memory": memory}
            )
            runs[(cpu, memory)] = run
            return run.result.decisions == unlimited.result.decisions

        if keeps(limits.cpu_millicores, limits.memory_mib):
            break
        need = demand(unlimited)
        base = (limits.minimum.cpu, limits.minimum.memory)
        top = _whole(max(base[0], need["cpu"]), max(base[1], need["memory"]))
        cpu, memory = _smallest_keeping(keeps, base, top)
        minimum = Resources(max(cpu, base[0]), max(memory, base[1]), 0)
        planned_cpu, planned_memory = with_headroom(minimum, headroom_percent)
        bigger = replace(
            limits,
            cpu_millicores=max(planned_cpu, limits.cpu_millicores),
            memory_mib=max(planned_memory, limits.memory_mib),
            minimum=minimum,
            binding=(
                WAY_DOWN if minimum.cpu > base[0] else limits.binding[0],
                WAY_DOWN if minimum.memory > base[1] else limits.binding[1],
            ),
        )
        if (bigger.cpu_millicores, bigger.memory_mib) == (limits.cpu_millicores, limits.memory_mib):
            bigger = replace(bigger, cpu_millicores=top[0], memory_mib=top[1])
        for key, before, after in (("cpu", base[0], minimum.cpu), ("memory", base[1], minimum.memory)):
            if after > before:
                raised[key] = after
        # What the other scenarios decide one step below their own minimum no longer says why
        # the limits stand where they do in a raised dimension: the way down's section does.
        below = tuple(
            None if key in raised else point for key, point in zip(("cpu", "memory"), bigger.below, strict=True)
        )
        bigger = replace(bigger, below=(below[0], below[1]))
        search = replace(
            search,
            limits=bigger,
            planned=MappingProxyType(runner.run_all(bigger.for_simulation())),
            below=MappingProxyType({key: found for key, found in search.below.items() if key not in raised}),
        )
    else:
        raise SizingInputError("the way down's limits did not settle; plan without way_down")
    limits = search.limits
    already = runs.get((limits.cpu_millicores, limits.memory_mib))
    as_planned = already or run_way_down(setup, peak, settings, min_replicas, limits.for_simulation())
    planned = compared(as_planned, unlimited)
    current = None
    if current_limits is not None:
        current_peak = runner.run(PEAK, current_limits).result
        current = compared(
            run_way_down(setup, current_peak, settings, min_replicas, current_limits),
            run_way_down(setup, current_peak, settings, min_replicas, {}),
        )
    return search, WayDownPlan(planned, unlimited, current, MappingProxyType(raised))


def with_optimum(
    plan: WayDownPlan,
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: frozenset[str] | None,
    capacity_types: Sequence[str],
    work_limit: int,
) -> WayDownPlan:
    """`plan` with the optimal fleet for the pods its managed nodes hold at rest."""
    at_rest: dict[str, int] = {}
    for node in plan.planned.result.nodes:
        if node.managed:
            for workload, count in node.pods.items():
                at_rest[workload] = at_rest.get(workload, 0) + count
    wanted = [replace(group, count=at_rest.get(group.workload, 0)) for group in groups]
    if not any(group.count for group in wanted):
        return replace(plan, optimal_cost=0.0, optimal_nodes=0)
    solved = optimal_fleet(options, wanted, zones, capacity_types, work_limit)
    return replace(plan, optimal_cost=solved.cost, optimal_nodes=solved.node_count)
