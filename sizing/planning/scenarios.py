"""The moments that count against NodePool limits, each simulated as Karpenter would provision it.

1. **peak**: every workload at its HPA maximum, pending at once (a cold start, a restore,
   a Deployment created at scale).
2. **hpa-ramp**: the HPA scales from `minReplicas` to the maximum under its scale-up
   behaviour (default: the larger of +100 % and +4 pods per 15 s, no stabilization
   window). The pods of one HPA step are one Karpenter batch (batchIdleDuration 1 s,
   batchMaxDuration 10 s, steps 15 s apart). A NodeClaim from an earlier step takes pods
   while it is still in flight, and counts against the limits once it has launched and
   its capacity is known, `LAUNCH_SECONDS` (5 s) after its creation, before the next step.
3. **rollout**: at peak, every workload's rollout surge (`maxSurge` extra pods) arrives
   on top of the peak fleet, whose nodes all count.
4. **disruption**: at peak, drift or expiry replaces the largest node of the fleet. The
   replacement (same instance type, same pods) launches before the old node goes.
   Karpenter schedules it as if the old node's capacity were already released and
   creates it unless the NodePool is already over a limit, so a pool at its limits
   replaces a node and runs one node over them for a while. One replacement, as the
   default disruption budget (10 % of the nodes, rounded up) allows at least one.

Within a batch subtractMax takes the largest candidate type of every new NodeClaim off
the limits, so a batch of many NodeClaims on a wide NodePool stops well short of them.
Karpenter retries the pods it left pending with the next batch, when the NodeClaims just
created count at their real capacity; every scenario does the same until a batch places
every pod or launches nothing (at most `MAX_BATCHES_PER_STEP` a step). Pods already
bound to a node count in the topology of the next batch.

`ScenarioRunner(setup).run_all(limits)` runs them under the same limits (the HPA ramp only
when some workload's HPA has steps to take). The planner looks for the smallest limits under
which every scenario decides what it decides without limits (`sizing.planning.decisions`):
the same pods placed, on the same NodePools, with the same soft constraints kept, the same
pods pending (`search_limits`, `sizing.karpenter.limits`).

Units: cpu in millicores, memory in MiB, time in seconds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from sizing.karpenter.limits import (
    NodePoolLimits,
    smallest_limits,
    with_headroom,
)
from sizing.karpenter.simulation import (
    LIMIT_KEYS,
    NodeOption,
    NodePoolModel,
    PendingPods,
    PlacedNode,
    PodGroup,
    ProvisioningResult,
    RunningNode,
    Scenario,
    TypeTables,
    simulate,
)
from sizing.karpenter.simulation.model import DEFAULT_POOL, ZONE, Placement
from sizing.kube.hpa_behavior import HPA_SYNC_SECONDS, replicas_at
from sizing.kube.resources import Resources
from sizing.planning.decisions import Change, Decisions, changes, decisions, same
from sizing.planning.side_by_side import run_side_by_side

PEAK = "peak"
HPA_RAMP = "hpa-ramp"
ROLLOUT = "rollout"
DISRUPTION = "disruption"
SCENARIO_NAMES = (PEAK, HPA_RAMP, ROLLOUT, DISRUPTION)

LAUNCH_SECONDS = 5
# Batches a scenario step may take to settle; each must launch a node, so limits end it long before.
MAX_BATCHES_PER_STEP = 200
DEFAULT_BUDGET_PERCENT = 10


@dataclass(frozen=True)
class ScenarioSetup:
    """What every scenario starts from.

    peak_groups: the pods at the HPA maximum, one group per workload; surge_groups: the
    rollout surge, same order; ramps: per workload, its (seconds, replicas) steps;
    options: the NodePool's types; running: nodes up before any scenario;
    launch_seconds: from a NodeClaim's creation until its capacity counts against the limits.
    """

    options: tuple[NodeOption, ...]
    peak_groups: tuple[PodGroup, ...]
    surge_groups: tuple[PodGroup, ...]
    ramps: tuple[tuple[tuple[int, int], ...], ...]
    zones: frozenset[str] | None
    capacity_types: tuple[str, ...]
    running: tuple[RunningNode, ...] = ()
    launch_seconds: int = LAUNCH_SECONDS
    # The NodePools when there are several or they carry more than types, zones and capacity
    # types (the first is the planned one, whose limits the scenarios vary), and the limits the
    # planned pool keeps whatever is searched (`nodes`, `pods`).
    node_pools: tuple[NodePoolModel, ...] = ()
    pool_limits: Mapping[str, int] = field(default_factory=dict)
    # Built once for the scenarios' many simulations of the same NodePools (a memo, not an input:
    # a setup with other options finds no table of its own there and builds one).
    type_tables: TypeTables = field(default_factory=TypeTables, compare=False, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The scenarios that apply: the HPA ramp only when some workload's HPA has steps to take."""
        ramps = any(len(ramp) > 1 for ramp in self.ramps)
        return tuple(name for name in SCENARIO_NAMES if name != HPA_RAMP or ramps)


@dataclass(frozen=True)
class BatchPoint:
    """The fleet right after one provisioning batch of a scenario.

    seconds: when the batch ran, from the scenario's start (s); wanted: the workload pods
    asked for so far (placed plus pending); placed, pending: pods; nodes: every node of the
    fleet; cpu (millicores), memory (MiB): the capacity of the planned NodePool's nodes, what
    counts against its limits once they have reported it.
    """

    seconds: int
    wanted: int
    placed: int
    pending: int
    nodes: int
    cpu: int
    memory: int


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario under given limits.

    result: the fleet at the scenario's end (nodes, pods still pending); batches: the
    provisioning batches simulated; reserved: what subtractMax took off over all of
    them (cpu m, memory MiB), which bounds the limits the scenario could ever need;
    pods: the workload pods the scenario is about (a drift replacement moves pods, it
    adds none); timeline: the fleet after each batch, in the order simulated (empty for
    the disruption, whose one replacement is not a batch of pods).
    """

    name: str
    description: str
    result: ProvisioningResult
    batches: int
    reserved: Resources = Resources()
    pods: int = 0
    timeline: tuple[BatchPoint, ...] = field(default=(), compare=False)

    @property
    def placed_all(self) -> bool:
        return not self.result.pending

    @property
    def decisions(self) -> Decisions:
        """Per workload, the pods placed (by NodePool and soft constraints relaxed) and pending."""
        return decisions(self.result)

    @property
    def usage(self) -> Resources:
        """Capacity of the NodePool's nodes at the end (cpu m, memory MiB, nodes as pods)."""
        usage = self.result.limit_usage()
        return Resources(usage["cpu"], usage["memory"], usage["nodes"])


def _reserved(result: ProvisioningResult) -> Resources:
    return Resources(result.reserved.get("cpu", 0), result.reserved.get("memory", 0), 0)


def _simulate(
    setup: ScenarioSetup,
    groups: Iterable[PodGroup],
    limits: Mapping[str, int],
    running: Iterable[RunningNode],
    options: Sequence[NodeOption] | None = None,
    idle_running: bool = True,
) -> ProvisioningResult:
    limits = {**setup.pool_limits, **limits}
    if setup.node_pools:
        primary, *others = setup.node_pools
        # setup.options, not the pool's own: a restricted setup (the recommendation's) narrows them.
        primary = replace(primary, node_options=tuple(options or setup.options), limits=limits)
        return simulate(
            Scenario(
                node_options=primary.node_options,
                pod_groups=tuple(groups),
                running_nodes=tuple(running),
                node_pools=(primary, *others),
                idle_running=idle_running,
            ),
            setup.type_tables,
        )
    return simulate(
        Scenario(
            node_options=tuple(options or setup.options),
            pod_groups=tuple(groups),
            limits=limits,
            zones=setup.zones,
            capacity_types=setup.capacity_types,
            running_nodes=tuple(running),
            idle_running=idle_running,
        ),
        setup.type_tables,
    )


def _options_by_pool(setup: ScenarioSetup) -> dict[tuple[str, str], NodeOption]:
    """(NodePool, instance type) -> the option a node of that pool runs as (DaemonSets differ by pool)."""
    pools = setup.node_pools or (NodePoolModel(DEFAULT_POOL, setup.options),)
    by_type = {(pool.name, option.name): option for pool in pools for option in pool.node_options}
    by_type.update(
        {(running.node_pool or pools[0].name, running.option.name): running.option for running in setup.running}
    )
    return by_type


def _option_of(by_type: Mapping[tuple[str, str], NodeOption], node: PlacedNode) -> NodeOption:
    return by_type[(node.node_pool, node.instance_type)]


def _as_running(
    node: PlacedNode,
    option: NodeOption,
    reported: bool = True,
    pods: Mapping[str, int] | None = None,
    host_ports: frozenset[tuple[str, int]] = frozenset(),
    launched: bool = False,
) -> RunningNode:
    return RunningNode(
        name=node.name,
        option=option,
        requested=node.used,
        zone=node.zones[0] if len(node.zones) == 1 else None,
        capacity_type=node.capacity_type,
        in_node_pool=node.in_node_pool,
        capacity_reported=reported,
        node_pool=node.node_pool,
        pods=MappingProxyType(dict(node.pods if pods is None else pods)),
        host_ports=host_ports,
        labels=node.labels,
        launched=launched,
    )


class _Fleet:
    """Nodes accumulated over several batches, renamed so each keeps one name, with the pods
    bound to each (so the next batch counts them in topology)."""

    def __init__(self, setup: ScenarioSetup, prefix: str):
        self.setup = setup
        self.by_type = _options_by_pool(setup)
        self.by_workload = {group.workload: group for group in setup.peak_groups}
        self.relaxed: dict[str, list[str]] = {}
        self.placements: dict[str, dict[Placement, int]] = {}
        self.primary_pool = setup.node_pools[0].name if setup.node_pools else DEFAULT_POOL
        self.running: dict[str, RunningNode] = {node.name: node for node in setup.running}
        self.input_nodes = frozenset(self.running)
        self.placed: dict[str, PlacedNode] = {}
        self.pods: dict[str, dict[str, int]] = {}
        self.launched_at: dict[str, int] = {}
        self.prefix = prefix
        self.count = 0
        self.batches = 0
        self.reserved = Resources()
        self.pending: list[PendingPods] = []
        self.remaining: Mapping[str, int] = {}
        self.pool_remaining: Mapping[str, Mapping[str, int]] = {}
        self.limit_demand: Mapping[str, int] = {}
        self.limit_consumed: Mapping[str, int] = {}
        self.timeline: list[BatchPoint] = []

    @classmethod
    def after(cls, setup: ScenarioSetup, prefix: str, run: ScenarioRun) -> _Fleet:
        """A fleet that starts as `run` ended: its nodes running and counted, its pods bound."""
        fleet = cls(setup, prefix)
        fleet.count = len(run.result.new_nodes)
        fleet.placed = {node.name: node for node in run.result.nodes}
        fleet.pods = {node.name: dict(node.pods) for node in run.result.nodes}
        fleet.running = {node.name: fleet._running(node, True) for node in run.result.nodes}
        fleet.relaxed = {workload: list(items) for workload, items in run.result.relaxed.items()}
        fleet.placements = {workload: dict(by_place) for workload, by_place in run.result.placements.items()}
        fleet.batches = run.batches
        fleet.reserved = run.reserved
        fleet.pending = list(run.result.pending)
        fleet.remaining = run.result.remaining
        fleet.pool_remaining = run.result.pool_remaining
        fleet.limit_demand = run.result.limit_demand
        fleet.limit_consumed = run.result.limit_consumed
        fleet.timeline = list(run.timeline)
        return fleet

    def _running(self, node: PlacedNode, reported: bool) -> RunningNode:
        counts = self.pods.get(node.name, {})
        ports: frozenset[tuple[str, int]] = frozenset()
        for workload in counts:
            group = self.by_workload.get(workload)
            if group is not None:
                ports |= group.host_ports
        # A node an earlier batch launched is matched by its NodePool and labels, not as an input node.
        launched = node.name not in self.input_nodes
        return _as_running(node, _option_of(self.by_type, node), reported, counts, ports, launched)

    def absorb(self, result: ProvisioningResult, moment: int, counted: Callable[[str], bool]) -> None:
        for workload, relaxed in result.relaxed.items():
            known = self.relaxed.setdefault(workload, [])
            known += [constraint for constraint in relaxed if constraint not in known]
        for workload, by_place in result.placements.items():
            mine = self.placements.setdefault(workload, {})
            for key, count in by_place.items():
                mine[key] = mine.get(key, 0) + count
        for node in result.nodes:
            if node.existing and not node.pods and node.name in self.placed:
                continue  # took no pod in this batch: as it was
            if node.existing:
                name = node.name
            else:
                self.count += 1
                name = f"{self.prefix}-{self.count}"
                self.launched_at[name] = moment
            counts = self.pods.setdefault(name, {})
            for workload, count in node.pods.items():
                counts[workload] = counts.get(workload, 0) + count
            previous = self.placed.get(name)
            placed = replace(
                node,
                name=name,
                existing=previous.existing if previous is not None else node.existing,
                reserved=previous.reserved if previous is not None else node.reserved,
                pod_requests=node.used - (previous.reserved if previous is not None else node.reserved),
                pods=MappingProxyType(dict(counts)),
            )
            self.placed[name] = placed
            self.running[name] = self._running(placed, counted(name))

    def refresh(self, counted: Callable[[str], bool]) -> None:
        for name, node in self.running.items():
            if name in self.launched_at and node.capacity_reported != counted(name):
                self.running[name] = replace(node, capacity_reported=counted(name))

    def batch(self, counts: Mapping[str, int]) -> list[PodGroup]:
        """Pods of `counts` (workload -> pods) as groups; every other workload comes with none, so
        the anti-affinity of pods already bound still keeps the new ones away."""
        return [replace(group, count=counts.get(group.workload, 0)) for group in self.setup.peak_groups]

    def settle(
        self,
        counts: Mapping[str, int],
        limits: Mapping[str, int],
        moment: int,
        counted_at: Callable[[int], Callable[[str], bool]],
        until: int | None = None,
    ) -> None:
        """Provision the pods of `counts` from `moment` on: each batch retries what the last left
        pending, `launch_seconds` later (when the NodeClaims it created count), until a batch
        places every pod or launches nothing, or the next batch would start at `until` (the next
        HPA step, whose batch takes the pods still pending)."""
        delay = self.setup.launch_seconds
        for attempt in range(MAX_BATCHES_PER_STEP):
            if not any(counts.values()):
                self.pending = []
                return
            now = moment + attempt * delay
            if attempt and until is not None and now >= until:
                return
            self.refresh(counted_at(now))
            # Running nodes that take no pod stay as the fleet knows them; only a batch's first look needs them all.
            known = all(name in self.placed for name in self.running)
            result = _simulate(self.setup, self.batch(counts), limits, self.running.values(), idle_running=not known)
            self.batches += 1
            self.reserved += _reserved(result)
            self.remaining = result.remaining
            self.pool_remaining = result.pool_remaining
            self.limit_demand = _larger(self.limit_demand, result.limit_demand)
            self.limit_consumed = result.limit_consumed
            self.absorb(result, now, counted_at(now))
            self.pending = list(result.pending)
            self.timeline.append(self.point(now))
            if not result.new_nodes:
                return
            counts = _pending_counts(self.pending)

    def point(self, seconds: int) -> BatchPoint:
        """The fleet as it stands at `seconds` (see `BatchPoint`)."""
        placed = sum(sum(counts.values()) for counts in self.pods.values())
        pending = sum(group.count for group in self.pending)
        counted = [n for n in self.placed.values() if n.in_node_pool and n.node_pool == self.primary_pool]
        capacity = sum((node.capacity for node in counted), Resources())
        return BatchPoint(seconds, placed + pending, placed, pending, len(self.placed), capacity.cpu, capacity.memory)

    def result(self, limits: Mapping[str, int]) -> ProvisioningResult:
        nodes = tuple(self.placed[name] for name in self.placed)
        return ProvisioningResult(
            nodes=nodes,
            pending=tuple(self.pending),
            limits=MappingProxyType(dict(limits)),
            remaining=MappingProxyType(dict(self.remaining)),
            reserved=MappingProxyType({"cpu": self.reserved.cpu, "memory": self.reserved.memory}),
            limit_demand=MappingProxyType(dict(self.limit_demand)),
            limit_consumed=MappingProxyType(dict(self.limit_consumed)),
            primary_pool=self.primary_pool,
            pool_remaining=MappingProxyType(dict(self.pool_remaining)),
            relaxed=MappingProxyType({workload: tuple(items) for workload, items in self.relaxed.items()}),
            placements=MappingProxyType(
                {w: MappingProxyType(dict(sorted(p.items()))) for w, p in sorted(self.placements.items())}
            ),
        )


def _larger(*demands: Mapping[str, int]) -> dict[str, int]:
    """Per limit key, the largest of the demands (see `ProvisioningResult.limit_demand`)."""
    return {key: max(demand.get(key, 0) for demand in demands) for key in LIMIT_KEYS}


def _pending_counts(pending: Sequence[PendingPods]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for group in pending:
        counts[group.workload] = counts.get(group.workload, 0) + group.count
    return counts


def _always(moment: int) -> Callable[[str], bool]:
    return lambda name: True


def run_peak(setup: ScenarioSetup, limits: Mapping[str, int]) -> ScenarioRun:
    fleet = _Fleet(setup, "nodeclaim")
    fleet.settle({group.workload: group.count for group in setup.peak_groups}, limits, 0, _always)
    return ScenarioRun(
        PEAK,
        "every workload at its maximum, pending at once"
        + (f" ({fleet.batches} batches as the limits allow)" if fleet.batches > 1 else ""),
        fleet.result(limits),
        fleet.batches,
        fleet.reserved,
        sum(group.count for group in setup.peak_groups),
        tuple(fleet.timeline),
    )


def run_ramp(setup: ScenarioSetup, limits: Mapping[str, int]) -> ScenarioRun:
    """The HPA ramp, batch by batch (see the module docstring)."""
    fleet = _Fleet(setup, "ramp")
    moments = sorted({moment for ramp in setup.ramps for moment, _ in ramp})
    delay = setup.launch_seconds

    def counted_at(moment: int) -> Callable[[str], bool]:
        return lambda name: name not in fleet.launched_at or fleet.launched_at[name] + delay <= moment

    for index, moment in enumerate(moments):
        counts = _pending_counts(fleet.pending)
        for group, ramp in zip(setup.peak_groups, setup.ramps, strict=False):
            before = replicas_at(ramp, moment - 1) if moment > 0 else 0
            added = replicas_at(ramp, moment) - before
            if added > 0:
                counts[group.workload] = counts.get(group.workload, 0) + added
        fleet.settle(counts, limits, moment, counted_at, moments[index + 1] if index + 1 < len(moments) else None)
    steps = max((len(ramp) - 1 for ramp in setup.ramps), default=0)
    return ScenarioRun(
        HPA_RAMP,
        f"HPA scale-up from minReplicas in {steps} step(s) of {HPA_SYNC_SECONDS} s; "
        f"a NodeClaim takes pods at once and counts against the limits {delay} s after its creation",
        fleet.result(limits),
        fleet.batches,
        fleet.reserved,
        sum(group.count for group in setup.peak_groups),
        tuple(fleet.timeline),
    )


def run_rollout(setup: ScenarioSetup, limits: Mapping[str, int], peak: ScenarioRun) -> ScenarioRun:
    fleet = _Fleet.after(setup, "nodeclaim", peak)
    counts = _pending_counts(peak.result.pending)
    for group in setup.surge_groups:
        counts[group.workload] = counts.get(group.workload, 0) + group.count
    # The surge arrives once the peak has settled: its batches follow the peak's on the timeline.
    start = peak.timeline[-1].seconds + setup.launch_seconds if peak.timeline else 0
    fleet.settle(counts, limits, start, _always)
    return ScenarioRun(
        ROLLOUT,
        "rollout at peak: every workload's maxSurge pods on top of the peak fleet",
        fleet.result(limits),
        fleet.batches,
        fleet.reserved,
        peak.pods + sum(group.count for group in setup.surge_groups),
        tuple(fleet.timeline),
    )


def _largest_node(nodes: Sequence[PlacedNode], pool: str) -> PlacedNode | None:
    """The largest node of the planned NodePool: the replacement that weighs most on its limits."""
    candidates = [node for node in nodes if node.in_node_pool and node.node_pool == pool]
    if not candidates:
        return None
    return max(candidates, key=lambda n: (n.capacity.cpu, n.capacity.memory, n.name))


def _counts_by_zone(group: PodGroup) -> bool:
    """Whether a group's topology (a spread, a pod affinity or anti-affinity, relaxed ones
    included) counts its pods by zone."""
    current: PodGroup | None = group
    while current is not None:
        if any(rule.key == ZONE for rule in current.topology):
            return True
        current = current.fallback
    return False


def run_disruption(setup: ScenarioSetup, limits: Mapping[str, int], peak: ScenarioRun) -> ScenarioRun:
    """The largest node of the peak fleet drifts: its replacement launches while it still runs.

    Karpenter schedules the replacement as if the drifted node's capacity were already released,
    then creates it unless the NodePool is already over a limit (usage strictly above it). So a
    pool at its limits still replaces a node, running one node over them until the old one goes.
    The replacement takes the drifted node's zone when pods on it count by zone (their spread
    stays as at peak); otherwise no pod asks for a zone and it may launch in any.
    """
    description = "drift or expiry at peak: the largest node's replacement launches before it goes"
    node = _largest_node(peak.result.nodes, peak.result.primary_pool)
    if node is None or peak.result.pending:
        return ScenarioRun(DISRUPTION, description, peak.result, 1, peak.reserved, peak.pods)
    option = _option_of(_options_by_pool(setup), node)
    usage = peak.result.limit_usage()
    every = {**setup.pool_limits, **limits}
    released = {"cpu": node.capacity.cpu, "memory": node.capacity.memory, "pods": node.capacity.pods, "nodes": 1}
    over = sorted(key for key, value in every.items() if usage[key] > value)
    left = {key: value - usage[key] + released[key] for key, value in every.items()}
    pods = node.used - option.daemon_overhead
    # One group stands for the node's pods: the replacement must hold all of them.
    group = PodGroup(
        f"pods of {node.name}", Resources(pods.cpu, pods.memory, max(pods.pods, 1), pods.ephemeral_storage), 1
    )
    result = _simulate(setup, [group], left, (), [option])
    # Pods that spread over zones (or follow other pods by zone) keep their zone counts only in the
    # drifted node's zone: the replacement takes that zone. Other pods leave it to EC2 at launch.
    by_zone = {group.workload for group in setup.peak_groups if _counts_by_zone(group)}
    keep_zone = len(node.zones) == 1 and any(workload in by_zone for workload in node.pods)
    replaced = [
        replace(
            new,
            name=f"replacement-of-{node.name}",
            zones=node.zones if keep_zone else new.zones,
            instance_type=node.instance_type,
            pods=node.pods,
            reserved=node.reserved,
            pod_requests=node.pod_requests,
            price=node.price,
            capacity=node.capacity,
            allocatable=node.allocatable,
            node_pool=node.node_pool,
        )
        for new in result.new_nodes
    ]
    reason = result.pending[0].reason if result.pending else None
    if over:
        replaced, reason = [], f"the NodePool is over its {' and '.join(over)} limit, so the replacement is refused"
    pending = [PendingPods(workload, count, reason) for workload, count in node.pods.items()] if reason else []
    # The same decisions under other limits need the peak's, no limit below the usage (else the
    # replacement is refused), and room for the replacement once the old node's capacity is released.
    after_release = {key: usage[key] - released[key] + result.limit_demand.get(key, 0) for key in LIMIT_KEYS}
    combined = ProvisioningResult(
        nodes=peak.result.nodes + tuple(replaced),
        pending=tuple(pending),
        limits=MappingProxyType(dict(limits)),
        remaining=result.remaining,
        limit_demand=MappingProxyType(_larger(peak.result.limit_demand, usage, after_release)),
        limit_consumed=MappingProxyType(
            {key: usage[key] - released[key] + result.limit_consumed.get(key, 0) for key in LIMIT_KEYS}
        ),
        reserved=MappingProxyType(
            {
                "cpu": peak.reserved.cpu + result.reserved.get("cpu", 0),
                "memory": peak.reserved.memory + result.reserved.get("memory", 0),
            }
        ),
        primary_pool=peak.result.primary_pool,
        relaxed=peak.result.relaxed,
        # The replacement takes the old node's pods as they are: where and how they run is the peak's.
        placements=peak.result.placements,
    )
    return ScenarioRun(DISRUPTION, description, combined, 2, peak.reserved + _reserved(result), peak.pods)


def all_at_once(setup: ScenarioSetup) -> ProvisioningResult:
    """Every workload's peak and surge pods pending at once, in one batch, without limits: the
    footing restrictions of the NodePool are compared on."""
    groups = [
        replace(peak, count=peak.count + surge.count)
        for peak, surge in zip(setup.peak_groups, setup.surge_groups, strict=True)
    ]
    return _simulate(setup, groups, {}, setup.running)


_RunKey = tuple[str, tuple[tuple[str, int], ...]]


def _filters_nothing(unlimited: ScenarioRun, limits: Mapping[str, int], setup: ScenarioSetup) -> bool:
    """Whether `limits` on the primary NodePool leave every batch of the scenario's run without
    them unchanged: the input sets none of their keys itself (so that run was truly without them)
    and each is at or above the run's demand."""
    demand = unlimited.result.limit_demand
    return all(key not in setup.pool_limits and value >= demand.get(key, 0) for key, value in limits.items())


def _under_limits(unlimited: ScenarioRun, limits: Mapping[str, int], pool_limits: Mapping[str, int]) -> ScenarioRun:
    """`unlimited` as its simulation under `limits` (which filter nothing in it) reports it: the
    same nodes, pods and batches, with the limits and what is left of them."""
    result = unlimited.result
    remaining: Mapping[str, int] = result.remaining
    pool_remaining: Mapping[str, Mapping[str, int]] = result.pool_remaining
    if result.limit_consumed:
        every = {**pool_limits, **limits}
        consumed = result.limit_consumed
        remaining = MappingProxyType({key: every[key] - consumed[key] for key in LIMIT_KEYS if key in every})
        if result.primary_pool in pool_remaining:
            pool_remaining = MappingProxyType({**pool_remaining, result.primary_pool: remaining})
    return replace(
        unlimited,
        result=replace(
            result, limits=MappingProxyType(dict(limits)), remaining=remaining, pool_remaining=pool_remaining
        ),
    )


def _run_key(name: str, limits: Mapping[str, int]) -> _RunKey:
    return (name, tuple(sorted(limits.items())))


class ScenarioRunner:
    """Runs scenarios under limits, each (scenario, limits) once: the peak, which the rollout and
    disruption start from, and the runs the limit search probes and reports again.

    workers: processes that may simulate side by side (`sizing.planning.side_by_side`) the runs
    `prefetch` is told are likely next; `simulations` counts the runs asked for, whether
    prefetched or not, so it is the same with any number of workers.

    Limits at or above what a scenario demanded without them (`ProvisioningResult.limit_demand`)
    filter nothing in any of its batches, so under them it runs exactly as it did without: that
    run is taken, with the limits and what is left of them put in, instead of a simulation.
    """

    def __init__(self, setup: ScenarioSetup, workers: int = 1):
        self.setup = setup
        self.workers = workers
        self._runs: dict[_RunKey, ScenarioRun] = {}
        self._asked: set[_RunKey] = set()
        self.simulations = 0

    def peak(self, limits: Mapping[str, int]) -> ScenarioRun:
        return self.run(PEAK, limits)

    def run(self, name: str, limits: Mapping[str, int]) -> ScenarioRun:
        key = _run_key(name, limits)
        self._ask(key)
        if name in (ROLLOUT, DISRUPTION):
            self._ask(_run_key(PEAK, limits))  # they start from it, even when prefetched
        found = self._known(name, limits)
        if found is None:
            found = self._runs[key] = self._simulate(name, limits)
        return found

    def _known(self, name: str, limits: Mapping[str, int]) -> ScenarioRun | None:
        """The run of `name` under `limits` if it needs no simulation: run before, or the same
        as its run without limits (see the class docstring)."""
        key = _run_key(name, limits)
        found = self._runs.get(key)
        unlimited = self._runs.get(_run_key(name, {}))
        if found is None and unlimited is not None and limits and _filters_nothing(unlimited, limits, self.setup):
            found = self._runs[key] = _under_limits(unlimited, limits, self.setup.pool_limits)
        return found

    def _ask(self, key: _RunKey) -> None:
        if key not in self._asked:
            self._asked.add(key)
            self.simulations += 1

    def prefetch(self, wanted: Sequence[tuple[str, Mapping[str, int]]]) -> None:
        """Simulate side by side the runs of `wanted` not yet known: first those that start from
        nothing (with the peaks the others start from), then the rollouts and disruptions."""
        if self.workers <= 1:
            return
        first: dict[_RunKey, Mapping[str, int]] = {}
        second: dict[_RunKey, Mapping[str, int]] = {}
        for name, limits in wanted:
            key = _run_key(name, limits)
            if self._known(name, limits) is not None:
                continue
            if name in (ROLLOUT, DISRUPTION):
                second[key] = limits
                if self._known(PEAK, limits) is None:
                    first[_run_key(PEAK, limits)] = limits
            else:
                first[key] = limits
        for stage in (first, second):
            missing = [(key, limits) for key, limits in stage.items() if key not in self._runs]
            if len(missing) < 2:
                continue  # nothing to run side by side; the search asks for it when it needs it
            runs = run_side_by_side(
                [functools.partial(self._simulate, key[0], limits) for key, limits in missing], self.workers
            )
            for (key, _), run in zip(missing, runs, strict=True):
                self._runs[key] = run

    def _simulate(self, name: str, limits: Mapping[str, int]) -> ScenarioRun:
        if name == PEAK:
            return run_peak(self.setup, limits)
        if name == HPA_RAMP:
            return run_ramp(self.setup, limits)
        if name == ROLLOUT:
            return run_rollout(self.setup, limits, self.peak(limits))
        if name == DISRUPTION:
            return run_disruption(self.setup, limits, self.peak(limits))
        raise ValueError(f"unknown scenario {name!r}")

    def run_all(self, limits: Mapping[str, int]) -> dict[str, ScenarioRun]:
        self.prefetch([(name, limits) for name in self.setup.names])
        return {name: self.run(name, limits) for name in self.setup.names}


# Probed in this order: the scenarios that usually need the most come first, so the
# others are mostly checked once at an already raised value.
_PROBE_ORDER = (ROLLOUT, DISRUPTION, HPA_RAMP, PEAK)


def _lower_bound(run: ScenarioRun) -> Resources:
    """No limits below this can place the scenario: requests on new nodes plus running capacity."""
    total = Resources()
    for node in run.result.nodes:
        if node.in_node_pool:
            total += node.used if not node.existing else node.capacity
    return total


class LimitProbe:
    """Whether a scenario under given limits makes the decisions it makes without them
    (`sizing.planning.decisions`): the same pods of each workload placed, on the same NodePools,
    with the same soft constraints relaxed, and the same left pending."""

    def __init__(self, setup: ScenarioSetup, workers: int = 1):
        self.runner = ScenarioRunner(setup, workers)
        self.unlimited = self.runner.run_all({})

    def keeps_decisions(self, name: str, cpu: int, memory: int) -> bool:
        run = self.runner.run(name, {"cpu": cpu, "memory": memory})
        return same(self.unlimited[name].decisions, run.decisions)


@dataclass(frozen=True)
class LimitSearch:
    """The planned limits and what they rest on.

    planned: every scenario under the limits; unlimited: every scenario without them (the
    decisions the limits keep); below: per dimension ("cpu", "memory"), the scenario that sets
    the minimum and what it would decide otherwise one step below it (empty when the pods'
    requests alone set the minimum, or the step below still holds).
    """

    limits: NodePoolLimits
    planned: Mapping[str, ScenarioRun]
    unlimited: Mapping[str, ScenarioRun]
    below: Mapping[str, tuple[str, tuple[Change, ...]]]


def _below(probe: LimitProbe, limits: NodePoolLimits) -> dict[str, tuple[str, tuple[Change, ...]]]:
    """What the binding scenarios decide one step below the minimum, per dimension, at the limits
    the search probed there (so no scenario is simulated again)."""
    found = {}
    for dimension, name, point in zip(("cpu", "memory"), limits.binding, limits.below, strict=True):
        if point is None or name not in probe.unlimited:
            continue
        run = probe.runner.run(name, {"cpu": point[0], "memory": point[1]})
        found[dimension] = (name, changes(probe.unlimited[name].decisions, run.decisions))
    return found


def search_limits(setup: ScenarioSetup, headroom_percent: float, workers: int = 1) -> LimitSearch:
    """The planned limits (see `sizing.karpenter.limits`), and every scenario with and without them.

    workers: processes that may simulate side by side; the result is the same with any number.
    """
    return search_from(LimitProbe(setup, workers), headroom_percent)


def search_from(probe: LimitProbe, headroom_percent: float) -> LimitSearch:
    upper = Resources()
    for run in probe.unlimited.values():
        usage = run.usage
        need = Resources(usage.cpu + run.reserved.cpu, usage.memory + run.reserved.memory)
        upper = Resources(max(upper.cpu, need.cpu), max(upper.memory, need.memory))
    lower = _lower_bound(probe.unlimited[PEAK])
    guesses = {name: run.usage for name, run in probe.unlimited.items()}
    names = [name for name in _PROBE_ORDER if name in probe.unlimited]
    limits = smallest_limits(probe.keeps_decisions, names, lower, upper, headroom_percent, guesses, PEAK)
    planned = probe.runner.run_all(limits.for_simulation())
    return LimitSearch(
        limits,
        MappingProxyType(planned),
        MappingProxyType(dict(probe.unlimited)),
        MappingProxyType(_below(probe, limits)),
    )


def checked_limits(setup: ScenarioSetup, headroom_percent: float, workers: int = 1) -> LimitSearch:
    """Limits for a NodePool the plan only advises (a recommended restriction), at a fraction of
    the search's work: the largest capacity the peak, HPA ramp or rollout uses without limits, plus
    headroom, kept when every scenario keeps its decisions under them (a drift replacement needs
    no room of its own); otherwise the full search."""
    probe = LimitProbe(setup, workers)
    needs = {name: probe.unlimited[name].usage for name in (ROLLOUT, HPA_RAMP, PEAK) if name in probe.unlimited}
    cpu_binder = max(needs, key=lambda name: needs[name].cpu)
    memory_binder = max(needs, key=lambda name: needs[name].memory)
    minimum = Resources(
        math.ceil(needs[cpu_binder].cpu / 1000) * 1000, math.ceil(needs[memory_binder].memory / 1024) * 1024, 0
    )
    cpu, memory = with_headroom(minimum, headroom_percent)
    # Usually every scenario holds there, so all of them are simulated side by side.
    probe.runner.prefetch([(name, {"cpu": cpu, "memory": memory}) for name in _PROBE_ORDER if name in probe.unlimited])
    if all(probe.keeps_decisions(name, cpu, memory) for name in _PROBE_ORDER if name in probe.unlimited):
        limits = NodePoolLimits(
            cpu, memory, minimum, float(headroom_percent), (cpu_binder, memory_binder), probe.runner.simulations
        )
        planned = probe.runner.run_all(limits.for_simulation())
        return LimitSearch(limits, MappingProxyType(planned), MappingProxyType(dict(probe.unlimited)), {})
    return search_from(probe, headroom_percent)
