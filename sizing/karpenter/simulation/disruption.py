"""Karpenter v1's disruption of a running fleet (emptiness and consolidation), simulated on a clock.

This follows kubernetes-sigs/karpenter v1.14 `pkg/controllers/disruption/` (`controller.go`,
`emptiness.go`, `consolidation.go`, `multinodeconsolidation.go`, `singlenodeconsolidation.go`,
`helpers.go`, `types.go`) and the NodePool budgets of `pkg/apis/v1/nodepool.go`. Every "do these
pods fit elsewhere" question is one run of the provisioning simulation (`scheduler`): the
candidates' pods pending, every other node running, the NodePools' limits charged with the
candidates' capacity (they still run while a replacement launches).

1. **Candidates.** A node of a NodePool whose `consolidateAfter` is not `Never`, that no pod
   blocks (a pod annotated `karpenter.sh/do-not-disrupt`, or one whose PodDisruptionBudget allows
   no disruption: Karpenter's `ValidatePodsDisruptable`), and that is *consolidatable*: no pod
   arrived on or left it for `consolidateAfter` seconds (`IsUnderConsolidateAfter`).
2. **Methods, in Karpenter's order**; each poll runs the first that finds a command:
   emptiness (every empty candidate, reason `Empty`, both policies), multi-node consolidation
   and single-node consolidation (non-empty candidates of `WhenEmptyOrUnderutilized` pools,
   reason `Underutilized`). Drift is not simulated here.
3. **Order.** Candidates are sorted by savings per unit of disruption, descending:
   price / (1 + reschedulable pods) (`SavingsRatio`; every pod's eviction cost is taken as 1,
   pod priority and `controller.kubernetes.io/pod-deletion-cost` are not read); ties by node
   name (Go's sort is not stable). Single-node consolidation takes the NodePools in turn.
4. **Consolidation** (`computeConsolidation`): the candidates' pods are scheduled without them.
   Any pod left pending: no command. No new NodeClaim: delete. One: replace when its cheapest
   type costs less than the candidates together; when every candidate is spot and the claim may
   be spot, only with the SpotToSpotConsolidation feature gate, and a single candidate needs at
   least 15 cheaper types (Karpenter then launches among the 15 cheapest; this simulation takes
   the cheapest). Multi-node consolidation binary-searches the longest prefix of the sorted
   candidates (at most 100) that deletes or replaces; a replacement there must be cheaper than
   every candidate of its own type (`filterOutSameInstanceType`). The other nodes are tried in
   name order (`sortExistingNodes`), and none still under a non-zero consolidateAfter takes a
   candidate's pod (`IsConsolidationSimulation`). A replacement's instance-type options (for the
   price rules) are re-derived: the NodePool's types whose room holds its pods and that its
   pods allow, priced in its capacity type and zones.
5. **Budgets.** Per NodePool and reason, the fewest nodes any active budget allows (`nodes` a
   count, or a percent of the pool's nodes rounded up; a budget with `schedule` is active from
   each cron hit, UTC, for `duration`); budgets left out: Karpenter's default of 10 %, an empty list:
   no bound. A method takes candidates in order
   while its pool's budget lasts.
6. **Time.** A command is validated 15 s after it is computed (`commandValidationDelay`) and is
   dropped if a candidate stopped being consolidatable meanwhile; a deletion then takes effect,
   a replacement first waits for its node to be ready (`replacement_ready_seconds`). With
   nothing to do the controller polls again 10 s later; the clock jumps to the next moment
   something can change (a node becoming consolidatable, a budget window opening or closing, a
   scale-down step), on that 10 s grid. Commands run one at a time (Karpenter's queue may
   overlap a command with the next one's validation). Pods moved by a command count as a pod
   event on the node they land on, which restarts its `consolidateAfter`.

Units: cpu in millicores, memory in MiB, time in seconds, prices in USD/hour.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

from croniter import croniter

from sizing.errors import SizingInputError
from sizing.karpenter.simulation.model import (
    LIMIT_KEYS,
    NodeOption,
    NodePoolModel,
    PlacedNode,
    PodGroup,
    ProvisioningResult,
    RunningNode,
    Scenario,
)
from sizing.karpenter.simulation.scheduler import Simulator
from sizing.karpenter.simulation.state import TypeTables
from sizing.kube.replicaset import pods_to_delete
from sizing.kube.resources import Resources

WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
CONSOLIDATION_POLICIES = (WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED)
EMPTY = "Empty"
DRIFTED = "Drifted"
UNDERUTILIZED = "Underutilized"
REASONS = (EMPTY, DRIFTED, UNDERUTILIZED)
EMPTINESS = "emptiness"
MULTI_NODE = "multi-node consolidation"
SINGLE_NODE = "single-node consolidation"
VALIDATION_SECONDS = 15
POLLING_SECONDS = 10
MIN_SPOT_TO_SPOT_TYPES = 15
MULTI_NODE_MAX_CANDIDATES = 100
REPLACEMENT_READY_SECONDS = 60
# A fixed Monday noon, UTC: the clock's start when none is given, so plans do not depend on today.
DEFAULT_START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
MAX_HORIZON_SECONDS = 30 * 86400
_NODES_VALUE = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")


@dataclass(frozen=True)
class Budget:
    """One entry of a NodePool's `spec.disruption.budgets`.

    nodes: a count ("3") or a percent of the pool's nodes ("10%", rounded up); reasons: the
    disruption reasons it bounds (None: all); schedule: a cron expression in UTC (also `@daily`
    and the like) from whose hits it is active for `duration_seconds`; without both it is
    always active.
    """

    nodes: str = "10%"
    reasons: tuple[str, ...] | None = None
    schedule: str | None = None
    duration_seconds: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.nodes, str) or not _NODES_VALUE.match(self.nodes):
            raise SizingInputError(
                f"disruption budget nodes must be a count or a percent from 0% to 100% (e.g. '3' or '10%'), "
                f"got {self.nodes!r}"
            )
        if self.reasons is not None:
            unknown = [reason for reason in self.reasons if reason not in REASONS]
            if unknown:
                raise SizingInputError(f"disruption budget reasons must be among {list(REASONS)}, got {unknown[0]!r}")
        if (self.schedule is None) != (self.duration_seconds is None):
            raise SizingInputError("disruption budget schedule and duration must be set together, or neither")
        if self.schedule is not None and not croniter.is_valid(self.schedule):
            raise SizingInputError(f"disruption budget schedule {self.schedule!r} is not a valid cron expression")
        if self.duration_seconds is not None and (
            isinstance(self.duration_seconds, bool)
            or not isinstance(self.duration_seconds, int)
            or self.duration_seconds < 0
        ):
            raise SizingInputError(
                f"disruption budget duration must be a whole number of seconds >= 0, got {self.duration_seconds!r}"
            )

    def active(self, moment: datetime) -> bool:
        """Whether the budget bounds disruption at `moment` (Karpenter's `Budget.IsActive`)."""
        if self.schedule is None or self.duration_seconds is None:
            return True
        since = moment - timedelta(seconds=self.duration_seconds)
        hit: datetime = croniter(self.schedule, since).get_next(datetime)
        return hit <= moment

    def allowed(self, moment: datetime, nodes: int) -> int:
        """Nodes it lets go at once out of `nodes` (a large number when inactive)."""
        if not self.active(moment):
            return 2**31 - 1
        if self.nodes.endswith("%"):
            return math.ceil(int(self.nodes[:-1]) * nodes / 100)
        return int(self.nodes)

    def changes_after(self, moment: datetime) -> datetime | None:
        """The next moment after `moment` the budget turns active or inactive (None: never)."""
        if self.schedule is None or self.duration_seconds is None:
            return None
        start: datetime = croniter(self.schedule, moment).get_next(datetime)
        last: datetime = croniter(self.schedule, moment + timedelta(seconds=1)).get_prev(datetime)
        end = last + timedelta(seconds=self.duration_seconds)
        return min(start, end) if end > moment else start


DEFAULT_BUDGETS = (Budget("10%"),)


@dataclass(frozen=True)
class DisruptionPolicy:
    """A NodePool's `spec.disruption`.

    consolidation_policy: WhenEmpty or WhenEmptyOrUnderutilized; consolidate_after_seconds: how
    long a node must see no pod arrive or leave before it is a candidate (None: `Never`, no
    consolidation at all); budgets: as listed (Karpenter's default: 10 % of the nodes).
    """

    consolidation_policy: str = WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after_seconds: int | None = 0
    budgets: tuple[Budget, ...] = DEFAULT_BUDGETS

    def __post_init__(self) -> None:
        if self.consolidation_policy not in CONSOLIDATION_POLICIES:
            raise SizingInputError(
                f"disruption.consolidationPolicy must be one of {list(CONSOLIDATION_POLICIES)} (Balanced is not "
                f"modelled), got {self.consolidation_policy!r}"
            )
        after = self.consolidate_after_seconds
        if after is not None and (isinstance(after, bool) or not isinstance(after, int) or after < 0):
            raise SizingInputError(f"disruption.consolidateAfter must be Never or a duration >= 0 s, got {after!r} s")

    def allowed(self, moment: datetime, nodes: int, reason: str) -> int:
        """Nodes of a pool of `nodes` nodes that may go at once for `reason`
        (`GetAllowedDisruptionsByReason`: the smallest of the budgets that apply)."""
        allowed = 2**31 - 1
        for budget in self.budgets:
            if budget.reasons is None or reason in budget.reasons:
                allowed = min(allowed, budget.allowed(moment, nodes))
        return allowed


@dataclass(frozen=True)
class FleetNode:
    """A running node: its type, NodePool, capacity type, zone, price (USD/hour) and its workload
    pods (workload -> count; DaemonSet pods are in the type's `daemon_overhead`); created and
    last_pod_event: seconds on the simulation's clock (negative: before it started); managed:
    False for a node outside every NodePool (a managed node group's), which pods may use but
    Karpenter never disrupts."""

    name: str
    option: NodeOption
    node_pool: str
    price: float
    pods: Mapping[str, int] = field(default_factory=dict)
    capacity_type: str = "on-demand"
    zone: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    created: int = 0
    last_pod_event: int = 0
    managed: bool = True

    @property
    def pod_count(self) -> int:
        return sum(self.pods.values())


@dataclass(frozen=True)
class ScaleDown:
    """At `time` (seconds), `count` pods of `workload` are deleted (an HPA step)."""

    time: int
    workload: str
    count: int


@dataclass(frozen=True)
class DisruptionInput:
    """What the way down starts from.

    nodes: the fleet; groups: per workload, its pods' scheduling (requests, constraints; count
    unused); pools: the NodePools (types, limits, capacity types), the first one the planned
    pool whose limit demand is reported; policies: NodePool name -> its disruption settings
    (a pool missing there is never disrupted); blocking: workload -> why its pods block
    eviction (e.g. "karpenter.sh/do-not-disrupt"), keeping their node; scale_downs: pod
    deletions on the way; spot_to_spot: Karpenter's SpotToSpotConsolidation feature gate;
    start: the clock's start (UTC, for budget schedules); horizon_seconds: when to stop at the
    latest; replacement_ready_seconds: from a replacement's creation until its node is ready.
    """

    nodes: tuple[FleetNode, ...]
    groups: Mapping[str, PodGroup]
    pools: tuple[NodePoolModel, ...]
    policies: Mapping[str, DisruptionPolicy]
    blocking: Mapping[str, str] = field(default_factory=dict)
    scale_downs: tuple[ScaleDown, ...] = ()
    spot_to_spot: bool = False
    start: datetime = DEFAULT_START
    horizon_seconds: int = 7 * 86400
    replacement_ready_seconds: int = REPLACEMENT_READY_SECONDS

    def __post_init__(self) -> None:
        names = [node.name for node in self.nodes]
        if len(set(names)) != len(names):
            raise SizingInputError("fleet nodes must have distinct names")
        pools = {pool.name for pool in self.pools}
        for node in self.nodes:
            missing = sorted(set(node.pods) - set(self.groups))
            if missing:
                raise SizingInputError(f"node {node.name!r} runs pods of {missing[0]!r}, which has no pod group")
            if node.managed and node.node_pool not in pools:
                raise SizingInputError(f"node {node.name!r} names NodePool {node.node_pool!r}, which is not given")
        if not 0 <= self.horizon_seconds <= MAX_HORIZON_SECONDS:
            raise SizingInputError(
                f"way-down horizon must be from 0 to {MAX_HORIZON_SECONDS} s, got {self.horizon_seconds!r}"
            )
        if self.start.tzinfo is None:
            raise SizingInputError("way-down start must carry a time zone")


@dataclass(frozen=True)
class DisruptionStep:
    """One command carried out: at `time` (s), `method` removed `removed` (node names) for
    `reason`, launching `replacement` (or none), moving `moved` pods; `cost` is the fleet's
    USD/hour after it; nodes: how many nodes run after it."""

    time: int
    method: str
    reason: str
    removed: tuple[str, ...]
    replacement: PlacedNode | None
    moved: int
    cost: float
    nodes: int


@dataclass(frozen=True)
class PodStep:
    """At `time` (s) the HPA deleted `count` pods of `workload`; `pods` left in the fleet."""

    time: int
    workload: str
    count: int
    pods: int


@dataclass(frozen=True)
class DisruptionResult:
    """The way down: the commands in order, the fleet at rest and why each node left stays.

    steps / pod_steps: Karpenter's commands and the HPA's deletions, by time; nodes: the fleet at
    the end; stays: node name -> why Karpenter keeps it; end: seconds until the last change;
    limit_demand: per key of LIMIT_KEYS, the smallest limit of the first NodePool under which
    every scheduling run of the way down decides as without limits (the candidates' capacity
    included, as they still run while a replacement launches); blocked_by_limits: commands
    refused because a replacement did not fit the limits (by candidate names).
    """

    steps: tuple[DisruptionStep, ...]
    pod_steps: tuple[PodStep, ...]
    nodes: tuple[FleetNode, ...]
    stays: Mapping[str, str]
    end: int
    limit_demand: Mapping[str, int]
    blocked_by_limits: tuple[tuple[str, ...], ...] = ()

    @property
    def cost(self) -> float:
        """USD/hour of the fleet at rest."""
        return sum(node.price for node in self.nodes)

    @property
    def decisions(self) -> tuple[tuple[int, str, tuple[str, ...], str | None], ...]:
        """What was done, for comparison across limits: (time, method, nodes removed, type launched)."""
        return tuple(
            (step.time, step.method, step.removed, step.replacement.instance_type if step.replacement else None)
            for step in self.steps
        )


@dataclass
class _Command:
    method: str
    reason: str
    candidates: list[FleetNode]
    result: ProvisioningResult | None
    replacement: PlacedNode | None


@dataclass
class _Outcome:
    """What one consolidation attempt found: a command, or why not."""

    command: _Command | None
    why: str
    limited: bool = False


def by_savings(nodes: Sequence[FleetNode]) -> list[FleetNode]:
    """Candidates in Karpenter's order (`sortCandidates`): price / (1 + pods to reschedule), highest
    first (USD/hour per pod); ties by name."""
    return sorted(nodes, key=lambda n: (-n.price / (1 + n.pod_count), n.name))


def _usage(nodes: Sequence[FleetNode], pool: str) -> dict[str, int]:
    counted = [node for node in nodes if node.managed and node.node_pool == pool]
    total = sum((node.option.capacity for node in counted), Resources())
    return {"cpu": total.cpu, "memory": total.memory, "pods": total.pods, "nodes": len(counted)}


class _Way:
    def __init__(self, given: DisruptionInput, tables: TypeTables | None):
        self.given = given
        self.tables = tables or TypeTables()
        self.nodes: dict[str, FleetNode] = {node.name: node for node in given.nodes}
        self.pools = {pool.name: pool for pool in given.pools}
        self.steps: list[DisruptionStep] = []
        self.pod_steps: list[PodStep] = []
        self.reasons: dict[str, str] = {}
        self.demand = dict.fromkeys(LIMIT_KEYS, 0)
        self.blocked_by_limits: list[tuple[str, ...]] = []
        self.replacements = 0
        self.pending_downs = sorted(given.scale_downs, key=lambda s: (s.time, s.workload))
        self.budget_bound = False

    # -- the clock ------------------------------------------------------------------------------

    def moment(self, time: int) -> datetime:
        return self.given.start + timedelta(seconds=time)

    def apply_scale_downs(self, until: int) -> None:
        while self.pending_downs and self.pending_downs[0].time <= until:
            down = self.pending_downs.pop(0)
            on_nodes = [
                (node.name, node.created, node.pods.get(down.workload, 0))
                for node in self.nodes.values()
                if node.pods.get(down.workload, 0)
            ]
            taken = pods_to_delete(on_nodes, down.count)
            for name, count in taken.items():
                node = self.nodes[name]
                pods = dict(node.pods)
                pods[down.workload] -= count
                if not pods[down.workload]:
                    del pods[down.workload]
                self.nodes[name] = replace(node, pods=MappingProxyType(pods), last_pod_event=down.time)
            left = sum(node.pods.get(down.workload, 0) for node in self.nodes.values())
            self.pod_steps.append(PodStep(down.time, down.workload, sum(taken.values()), left))

    def policy(self, node: FleetNode) -> DisruptionPolicy | None:
        return self.given.policies.get(node.node_pool) if node.managed else None

    def blocker(self, node: FleetNode) -> str | None:
        for workload in sorted(node.pods):
            if workload in self.given.blocking:
                return f"a pod of {workload} blocks eviction ({self.given.blocking[workload]})"
        return None

    def consolidatable_at(self, node: FleetNode) -> int | None:
        policy = self.policy(node)
        if policy is None or policy.consolidate_after_seconds is None:
            return None
        return node.last_pod_event + policy.consolidate_after_seconds

    def candidates(self, time: int) -> list[FleetNode]:
        found = []
        for node in sorted(self.nodes.values(), key=lambda n: n.name):
            at = self.consolidatable_at(node)
            if at is None:
                policy = self.policy(node)
                self.reasons[node.name] = (
                    "outside every NodePool"
                    if not node.managed
                    else f"NodePool {node.node_pool} has no disruption settings"
                    if policy is None
                    else f"NodePool {node.node_pool} has consolidateAfter Never"
                )
                continue
            blocker = self.blocker(node)
            if blocker is not None:
                self.reasons[node.name] = blocker
                continue
            if at > time:
                self.reasons[node.name] = f"not consolidatable until {at} s (consolidateAfter)"
                continue
            found.append(node)
        return found

    def budgets(self, time: int, reason: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes.values():
            if node.managed:
                counts[node.node_pool] = counts.get(node.node_pool, 0) + 1
        moment = self.moment(time)
        return {
            name: policy.allowed(moment, counts.get(name, 0), reason)
            for name, policy in sorted(self.given.policies.items())
        }

    # -- the methods ----------------------------------------------------------------------------

    @staticmethod
    def savings_order(nodes: Sequence[FleetNode]) -> list[FleetNode]:
        return by_savings(nodes)

    def take_budget(self, ordered: Sequence[FleetNode], budget: dict[str, int]) -> list[FleetNode]:
        taken = []
        for node in ordered:
            if budget.get(node.node_pool, 0) <= 0:
                self.budget_bound = True
                self.reasons[node.name] = f"NodePool {node.node_pool}'s disruption budget allows no more now"
                continue
            budget[node.node_pool] -= 1
            taken.append(node)
        return taken

    def emptiness(self, time: int, candidates: Sequence[FleetNode]) -> _Command | None:
        empty = self.take_budget(self.savings_order([n for n in candidates if not n.pods]), self.budgets(time, EMPTY))
        return _Command(EMPTINESS, EMPTY, empty, None, None) if empty else None

    def underutilized(self, candidates: Sequence[FleetNode]) -> list[FleetNode]:
        chosen = []
        for node in candidates:
            policy = self.policy(node)
            if not node.pods:
                continue
            if policy is None or policy.consolidation_policy != WHEN_EMPTY_OR_UNDERUTILIZED:
                self.reasons[node.name] = f"NodePool {node.node_pool} consolidates only empty nodes (WhenEmpty)"
                continue
            chosen.append(node)
        return chosen

    def multi_node(self, time: int, candidates: Sequence[FleetNode]) -> _Command | None:
        ordered = self.take_budget(self.savings_order(candidates), self.budgets(time, UNDERUTILIZED))
        ordered = ordered[:MULTI_NODE_MAX_CANDIDATES]
        if len(ordered) < 2:
            return None
        low, high = 1, len(ordered) - 1
        best = None
        while low <= high:
            middle = (low + high) // 2
            prefix = ordered[: middle + 1]
            outcome = self.consolidate(prefix, MULTI_NODE, time)
            command = outcome.command
            if command is not None and command.replacement is not None:
                command = self.without_same_type(command)
            if command is not None:
                best = command
                low = middle + 1
            else:
                high = middle - 1
        return best

    def single_node(self, time: int, candidates: Sequence[FleetNode]) -> _Command | None:
        budget = self.budgets(time, UNDERUTILIZED)
        by_pool: dict[str, list[FleetNode]] = {}
        for node in self.savings_order(candidates):
            by_pool.setdefault(node.node_pool, []).append(node)
        turns = [
            by_pool[name][i]
            for i in range(max(map(len, by_pool.values()), default=0))
            for name in sorted(by_pool)
            if i < len(by_pool[name])
        ]
        for node in turns:
            if budget.get(node.node_pool, 0) <= 0:
                self.budget_bound = True
                self.reasons[node.name] = f"NodePool {node.node_pool}'s disruption budget allows no more now"
                continue
            outcome = self.consolidate([node], SINGLE_NODE, time)
            if outcome.command is not None:
                return outcome.command
            self.reasons[node.name] = outcome.why
            if outcome.limited:
                self.blocked_by_limits.append((node.name,))
        return None

    # -- one consolidation attempt --------------------------------------------------------------

    def settling(self, node: FleetNode, time: int) -> bool:
        """`IsUnderConsolidateAfter`: a pod event less than a non-zero consolidateAfter ago."""
        policy = self.policy(node)
        if policy is None or not policy.consolidate_after_seconds:
            return False
        return time - node.last_pod_event < policy.consolidate_after_seconds

    def pending_group(self, workload: str, count: int, open_nodes: frozenset[str]) -> PodGroup:
        group = self.given.groups[workload]
        allowed = open_nodes if group.nodes is None else open_nodes & group.nodes
        return replace(group, count=count, nodes=allowed)

    def simulate(self, candidates: Sequence[FleetNode], time: int) -> ProvisioningResult:
        gone = {node.name for node in candidates}
        kept = [node for node in sorted(self.nodes.values(), key=lambda n: n.name) if node.name not in gone]
        # Pods of candidates do not move onto a node still under its consolidateAfter.
        open_nodes = frozenset(node.name for node in kept if not self.settling(node, time))
        pods: dict[str, int] = {}
        for node in candidates:
            for workload, count in node.pods.items():
                pods[workload] = pods.get(workload, 0) + count
        groups = tuple(self.pending_group(w, count, open_nodes) for w, count in sorted(pods.items()))
        running = [self.running(node) for node in kept]
        pools = []
        for pool in self.given.pools:
            charged = _usage(candidates, pool.name)
            limits = {key: value - charged[key] for key, value in pool.limits.items()}
            pools.append(replace(pool, limits=limits))
        scenario = Scenario((), groups, running_nodes=tuple(running), node_pools=tuple(pools), idle_running=False)
        return Simulator(scenario, self.tables).run()

    def running(self, node: FleetNode) -> RunningNode:
        requested = node.option.daemon_overhead
        for workload, count in node.pods.items():
            requested = requested + self.given.groups[workload].requests.scaled(count)
        return RunningNode(
            name=node.name,
            option=node.option,
            requested=requested,
            zone=node.zone,
            capacity_type=node.capacity_type,
            node_pool=node.node_pool,
            in_node_pool=node.managed,
            pods=dict(node.pods),
            labels=dict(node.labels),
        )

    def consolidate(self, candidates: Sequence[FleetNode], method: str, time: int) -> _Outcome:
        result = self.simulate(candidates, time)
        outcome = self.judge(candidates, method, result)
        if outcome.command is not None:
            self.count_demand(candidates, result)
        return outcome

    def count_demand(self, candidates: Sequence[FleetNode], result: ProvisioningResult) -> None:
        """Raise the limit demand to what this run needed, the candidates' capacity counted again
        (the run was charged with it). Only runs that found a command count: limits only take
        types away from a replacement, so a run that found none without limits finds none with."""
        charged = _usage(candidates, self.given.pools[0].name)
        for key in LIMIT_KEYS:
            if result.limit_demand.get(key, 0) > 0:
                self.demand[key] = max(self.demand[key], result.limit_demand[key] + charged[key])

    def judge(self, candidates: Sequence[FleetNode], method: str, result: ProvisioningResult) -> _Outcome:
        if result.pending:
            reason = result.pending[0].reason
            limited = "limit" in reason
            why = (
                f"its pods' replacement does not fit the NodePool's limits ({reason})"
                if limited
                else f"its pods fit on no other node and no single new node ({reason})"
            )
            return _Outcome(None, why, limited)
        new = result.new_nodes
        if not new:
            return _Outcome(_Command(method, UNDERUTILIZED, list(candidates), result, None), "")
        if len(new) > 1:
            return _Outcome(None, f"its pods would need {len(new)} new nodes")
        claim = new[0]
        price = sum(node.price for node in candidates)
        cheaper = self.cheaper_types(claim, candidates, price)
        all_spot = all(node.capacity_type == "spot" for node in candidates)
        if all_spot and claim.capacity_type == "spot":
            if not self.given.spot_to_spot:
                return _Outcome(None, "a spot node is replaced by spot only with the SpotToSpotConsolidation gate")
            if not cheaper:
                return _Outcome(None, "no cheaper instance type holds its pods")
            if len(candidates) == 1 and len(cheaper) < MIN_SPOT_TO_SPOT_TYPES:
                return _Outcome(
                    None,
                    f"spot-to-spot needs {MIN_SPOT_TO_SPOT_TYPES} cheaper instance types, {len(cheaper)} hold its pods",
                )
        elif not cheaper or claim.price >= price:
            return _Outcome(None, "no cheaper instance type holds its pods")
        return _Outcome(_Command(method, UNDERUTILIZED, list(candidates), result, claim), "")

    def type_price(self, option: NodeOption, claim: PlacedNode) -> float | None:
        zones = claim.zones or None
        return option.offered_price(claim.capacity_type, zones)

    def claim_types(self, claim: PlacedNode, candidates: Sequence[FleetNode]) -> list[tuple[float, str]]:
        """(price, type) of every type of the claim's NodePool that holds its pods, as the claim's
        instance-type options (re-derived from its pods' requests and allowed types)."""
        pool = self.pools[claim.node_pool]
        allowed: frozenset[str] | None = None
        for node in candidates:
            for workload in node.pods:
                types = self.given.groups[workload].allowed_types
                if types is not None:
                    allowed = types if allowed is None else allowed & types
        found = []
        for option in pool.node_options:
            if allowed is not None and option.name not in allowed:
                continue
            if not claim.pod_requests.fits_in(option.room):
                continue
            price = self.type_price(option, claim)
            if price is not None:
                found.append((price, option.name))
        return sorted(found)

    def cheaper_types(self, claim: PlacedNode, candidates: Sequence[FleetNode], price: float) -> list[str]:
        return [name for cost, name in self.claim_types(claim, candidates) if cost < price]

    def without_same_type(self, command: _Command) -> _Command | None:
        """`filterOutSameInstanceType`: a replacement must cost less than any candidate of a type it could be."""
        assert command.replacement is not None
        options = {name: cost for cost, name in self.claim_types(command.replacement, command.candidates)}
        ceiling = min((node.price for node in command.candidates if node.option.name in options), default=math.inf)
        return command if command.replacement.price < ceiling else None

    # -- carrying a command out -----------------------------------------------------------------

    def execute(self, command: _Command, time: int) -> None:
        removed = {node.name for node in command.candidates}
        moved = 0
        for node in command.candidates:
            del self.nodes[node.name]
        if command.result is not None:
            for placed in command.result.nodes:
                if not placed.pods:
                    continue
                moved += placed.pod_count
                if placed.existing:
                    node = self.nodes[placed.name]
                    pods = dict(node.pods)
                    for workload, count in placed.pods.items():
                        pods[workload] = pods.get(workload, 0) + count
                    self.nodes[placed.name] = replace(node, pods=MappingProxyType(pods), last_pod_event=time)
        new = None
        if command.replacement is not None:
            self.replacements += 1
            claim = command.replacement
            new = replace(claim, name=f"replacement-{self.replacements}")
            pool = self.pools[claim.node_pool]
            option = next(o for o in pool.node_options if o.name == claim.instance_type)
            self.nodes[new.name] = FleetNode(
                new.name,
                option,
                claim.node_pool,
                claim.price,
                MappingProxyType(dict(claim.pods)),
                claim.capacity_type,
                claim.zones[0] if claim.zones else None,
                MappingProxyType(dict(claim.labels)),
                created=time,
                last_pod_event=time,
            )
        for name in removed:
            self.reasons.pop(name, None)
        self.steps.append(
            DisruptionStep(
                time,
                command.method,
                command.reason,
                tuple(sorted(removed)),
                new,
                moved,
                sum(node.price for node in self.nodes.values()),
                len(self.nodes),
            )
        )

    def still_valid(self, command: _Command, time: int) -> bool:
        for node in command.candidates:
            now = self.nodes.get(node.name)
            if now is None or now.pods != node.pods:
                return False
            at = self.consolidatable_at(now)
            if at is None or at > time:
                return False
        return True

    def compute(self, time: int) -> _Command | None:
        self.budget_bound = False
        candidates = self.candidates(time)
        command = self.emptiness(time, candidates)
        if command is not None:
            return command
        busy = self.underutilized(candidates)
        return self.multi_node(time, busy) or self.single_node(time, busy)

    def next_change(self, time: int) -> int | None:
        moments = []
        if self.pending_downs:
            moments.append(self.pending_downs[0].time)
        for node in self.nodes.values():
            at = self.consolidatable_at(node)
            if at is not None and at > time and self.blocker(node) is None:
                moments.append(at)
        if self.budget_bound:
            moment = self.moment(time)
            for policy in self.given.policies.values():
                for budget in policy.budgets:
                    change = budget.changes_after(moment)
                    if change is not None:
                        moments.append(math.ceil((change - self.given.start).total_seconds()))
        later = [m for m in moments if m > time]
        if not later:
            return None
        # The controller polls every 10 s: the first poll at or after the change.
        return time + math.ceil((min(later) - time) / POLLING_SECONDS) * POLLING_SECONDS

    def run(self) -> DisruptionResult:
        time = 0
        end = 0
        horizon = self.given.horizon_seconds
        while time <= horizon:
            self.apply_scale_downs(time)
            command = self.compute(time)
            if command is not None:
                done = time + VALIDATION_SECONDS
                self.apply_scale_downs(done)
                if not self.still_valid(command, done):
                    time = done
                    continue
                if command.replacement is not None:
                    done += self.given.replacement_ready_seconds
                    self.apply_scale_downs(done)
                self.execute(command, done)
                end = time = done
                continue
            upcoming = self.next_change(time)
            if upcoming is None:
                break
            time = upcoming
        if self.pod_steps:
            end = max(end, self.pod_steps[-1].time)
        stays = {name: self.reasons.get(name, "nothing cheaper found") for name in sorted(self.nodes)}
        return DisruptionResult(
            steps=tuple(self.steps),
            pod_steps=tuple(self.pod_steps),
            nodes=tuple(sorted(self.nodes.values(), key=lambda n: n.name)),
            stays=MappingProxyType(stays),
            end=end,
            limit_demand=MappingProxyType(dict(self.demand)),
            blocked_by_limits=tuple(self.blocked_by_limits),
        )


def simulate_disruption(given: DisruptionInput, tables: TypeTables | None = None) -> DisruptionResult:
    """The way down of `given`'s fleet (see the module docstring)."""
    return _Way(given, tables).run()
