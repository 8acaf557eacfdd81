"""Karpenter v1's provisioning of one batch of pending pods, simulated.

This follows the scheduler of kubernetes-sigs/karpenter v1.14
(`pkg/controllers/provisioning/scheduling/scheduler.go`, `nodeclaim.go`):

1. Pods are taken by cpu request descending, then memory descending, then
   creation time (here: the order of the pod groups, all pods of a group
   together).
2. A pod goes to the first running node (in the given order) with room for
   it; otherwise to the in-flight NodeClaim with the fewest pods that can take
   it (Karpenter re-sorts its claims by pod count before every pod; Go's
   sort is not stable, this simulation breaks ties by creation order);
   otherwise it opens a new NodeClaim.
3. A NodeClaim keeps every instance type that still holds its pods:
   sum of pod requests + DaemonSet overhead <= allocatable in cpu, memory and
   pod slots, and that matches every pod's instance, zone and capacity-type
   constraints. Each added pod narrows that set.
4. A new NodeClaim only considers types whose capacity (not allocatable) fits
   in what is left of the NodePool limits, and then subtracts from what is
   left the largest capacity among its candidate types (`subtractMax`). When
   no type is left, the pod stays pending.
5. At the end each NodeClaim launches its cheapest remaining type (ties by
   name). Karpenter sends the cheapest 60 types to EC2 Fleet, and for
   on-demand the lowest-price strategy takes the cheapest of them.
   For spot Karpenter asks for price-capacity-optimized, which weighs
   capacity pools and is not strictly the cheapest; this simulation models
   the cheapest.

Within one batch subtractMax keeps the launched capacity within the limits.
The overshoot Karpenter's documentation warns about comes from successive
batches: a NodeClaim launched by an earlier batch counts as zero until its
capacity is reported. Model such a claim as a running node with
`capacity_reported=False`.

Not modelled: taints and tolerations, topology spread, pod (anti-)affinity,
host ports, volumes, several NodePools, instance-type offerings missing in a
zone, minValues, and the retry/relaxation loop (which changes nothing when
pods have no preferences).

Units: cpu in millicores, memory in MiB, pods as a count, prices in
USD/hour (or whatever unit the caller's prices use).

Speed: identical pods come in runs. For a run the simulation computes, per
NodeClaim, how many more such pods it can take (one vectorised pass over its
candidate types) and then hands pods out by fewest-pods-first with a heap,
several at a time when the order cannot change in between.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from sizing.errors import SizingInputError
from sizing.kube.resources import Resources

CAPACITY_TYPE_PRIORITY = ("reserved", "spot", "on-demand")
LIMIT_KEYS = ("cpu", "memory", "pods", "nodes")
_RESOURCE_DIMENSIONS = 3  # cpu, memory, pods
_NO_ROOM = (-1, -1, -1)
_NEVER = (2**62, 2**62, 2**62)
# Up to this many candidate types a claim keeps them in a tuple and loops in Python.
_SMALL_CANDIDATE_SET = 16
_Candidates = Tuple[int, ...] | np.ndarray


@dataclass(frozen=True)
class NodeOption:
    """An instance type the NodePool may launch, as the simulation sees it.

    capacity: what Karpenter counts against limits (cpu m, memory MiB, pods);
    allocatable: what pods may request, before DaemonSets; daemon_overhead:
    requests of the DaemonSet pods a node of this type runs, one pod slot
    each; price: on-demand cost per hour; spot_price: spot cost per hour, or
    None to price spot like on-demand.
    """

    name: str
    capacity: Resources
    allocatable: Resources
    price: float
    daemon_overhead: Resources = Resources()
    spot_price: Optional[float] = None

    def price_for(self, capacity_type: str) -> float:
        """Cost per hour of one node launched with this capacity type."""
        if capacity_type == "spot" and self.spot_price is not None:
            return self.spot_price
        return self.price

    @property
    def room(self) -> Resources:
        """Allocatable left for workload pods once the DaemonSets run."""
        return self.allocatable - self.daemon_overhead


@dataclass(frozen=True)
class PodGroup:
    """`count` identical pending pods of one workload.

    requests: per pod (cpu m, memory MiB, pod slots, normally 1);
    allowed_types: instance-type names the pod may run on (None: any);
    zones / capacity_types: values the pod requires (None: no constraint).
    """

    workload: str
    requests: Resources
    count: int
    allowed_types: Optional[FrozenSet[str]] = None
    zones: Optional[FrozenSet[str]] = None
    capacity_types: Optional[FrozenSet[str]] = None


@dataclass(frozen=True)
class RunningNode:
    """A node (or launched NodeClaim) that exists before the batch.

    requested: requests already bound to it, DaemonSet pods included;
    in_node_pool: False for a node of another NodePool or node group (pods may
    still land on it, its capacity is not the NodePool's usage);
    capacity_reported: False for a NodeClaim launched so recently that the
    cluster state has no capacity for it yet, so the scheduler counts it as
    zero against the limits (the source of limit overshoot).
    """

    name: str
    option: NodeOption
    requested: Resources = Resources()
    zone: Optional[str] = None
    capacity_type: str = "on-demand"
    in_node_pool: bool = True
    capacity_reported: bool = True


@dataclass(frozen=True)
class Scenario:
    """One provisioning batch for one NodePool.

    node_options: the types the NodePool's requirements allow; pod_groups: the
    pending pods in creation order; limits: NodePool `spec.limits` as
    integers (cpu m, memory MiB, pods, nodes), absent keys unlimited; zones:
    zones the NodePool allows (None when zones are not modelled);
    capacity_types: capacity types the NodePool allows.
    """

    node_options: Tuple[NodeOption, ...]
    pod_groups: Tuple[PodGroup, ...]
    limits: Mapping[str, int] = field(default_factory=dict)
    zones: Optional[FrozenSet[str]] = None
    capacity_types: Tuple[str, ...] = ("on-demand",)
    running_nodes: Tuple[RunningNode, ...] = ()


@dataclass(frozen=True)
class PlacedNode:
    """A node of the resulting fleet.

    reserved: DaemonSet requests on a new node, or everything bound before the
    batch on a running node; pod_requests: requests of the pods this batch
    placed; pods: workload -> pods placed; zones: zones it may still launch in;
    options: how many instance types still fitted at launch; in_node_pool:
    whether its capacity counts towards the NodePool's limits.
    """

    name: str
    instance_type: str
    capacity_type: str
    price: float
    capacity: Resources
    allocatable: Resources
    reserved: Resources
    pod_requests: Resources
    pods: Mapping[str, int]
    zones: Tuple[str, ...] = ()
    options: int = 1
    existing: bool = False
    in_node_pool: bool = True

    @property
    def used(self) -> Resources:
        """Requests on the node: reserved plus the batch's pods."""
        return self.reserved + self.pod_requests

    @property
    def pod_count(self) -> int:
        """Workload pods this batch placed on the node."""
        return sum(self.pods.values())


@dataclass(frozen=True)
class PendingPods:
    workload: str
    count: int
    reason: str


@dataclass(frozen=True)
class ProvisioningResult:
    """Running nodes first (in the order tried), then new NodeClaims in creation order.

    remaining: what Karpenter's scheduler believes is left of each limit after
    the batch (after subtractMax), for the limited keys only; reserved: what
    subtractMax took off for the batch's new NodeClaims, for every key (cpu m,
    memory MiB, pods, nodes), limited or not. Limits at least `reserved` above
    the reported usage never filter an instance type out.
    """

    nodes: Tuple[PlacedNode, ...]
    pending: Tuple[PendingPods, ...]
    limits: Mapping[str, int]
    remaining: Mapping[str, int]
    reserved: Mapping[str, int] = field(default_factory=dict)

    @property
    def new_nodes(self) -> Tuple[PlacedNode, ...]:
        return tuple(node for node in self.nodes if not node.existing)

    @property
    def cost(self) -> float:
        """Cost per hour of every node of the fleet, running ones included."""
        return sum(node.price for node in self.nodes)

    @property
    def pending_count(self) -> int:
        return sum(group.count for group in self.pending)

    @property
    def placed_count(self) -> int:
        return sum(node.pod_count for node in self.nodes)

    def limit_usage(self) -> Mapping[str, int]:
        """The NodePool's usage once every node has reported its capacity (cpu m, memory MiB)."""
        counted = [node for node in self.nodes if node.in_node_pool]
        total = sum((node.capacity for node in counted), Resources())
        return {"cpu": total.cpu, "memory": total.memory, "pods": total.pods, "nodes": len(counted)}


@dataclass
class _Run:
    """Consecutive pending pods that schedule identically."""

    requests: Tuple[int, int, int]
    allowed_types: Optional[FrozenSet[str]]
    mask: Optional[np.ndarray]
    mask_list: Optional[List[bool]]
    zones: Optional[FrozenSet[str]]
    capacity_types: Optional[FrozenSet[str]]
    segments: List[Tuple[int, int]]  # (pod group index, count)


class _Claim:
    """An in-flight NodeClaim: its pods' requests and the instance types still possible."""

    __slots__ = (
        "index", "pod_count", "requests", "candidates", "headroom",
        "zones", "capacity_types", "placed", "run_stamp", "room_in_run", "touched_stamp",
    )

    def __init__(self, index, candidates, zones, capacity_types):
        self.index = index
        self.pod_count = 0
        self.requests = [0, 0, 0]
        self.candidates = candidates
        self.headroom = _NO_ROOM
        self.zones = zones
        self.capacity_types = capacity_types
        self.placed: Dict[int, int] = {}
        self.run_stamp = -1
        self.room_in_run = 0
        self.touched_stamp = -1


def _check_scenario(scenario: Scenario) -> None:
    if not scenario.node_options:
        raise SizingInputError("scenario.node_options is empty; the NodePool needs at least one instance type")
    names = [option.name for option in scenario.node_options]
    if len(set(names)) != len(names):
        raise SizingInputError(f"scenario.node_options lists an instance type twice: {names}")
    for group in scenario.pod_groups:
        if group.count < 0 or min(group.requests.as_dict().values()) < 0 or group.requests.pods < 1:
            raise SizingInputError(
                f"pod group {group.workload!r}: count must be >= 0 and requests non-negative with "
                f"at least one pod slot, got count {group.count} and {group.requests}"
            )
    for key, value in scenario.limits.items():
        if key not in LIMIT_KEYS:
            raise SizingInputError(f"limits key {key!r} is not supported; allowed keys are {list(LIMIT_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise SizingInputError(f"limits[{key!r}] must be an integer, got {value!r}")


class _Simulator:
    def __init__(self, scenario: Scenario):
        _check_scenario(scenario)
        self.scenario = scenario
        options = scenario.node_options
        self.options = options
        self.names = [option.name for option in options]
        self.room = np.array(
            [[o.room.cpu, o.room.memory, o.room.pods] for o in options], dtype=np.int64
        )
        self.room_rows = [tuple(row) for row in self.room.tolist()]
        self.capacity = np.array(
            [[o.capacity.cpu, o.capacity.memory, o.capacity.pods, 1] for o in options], dtype=np.int64
        )
        self.limit_columns = [LIMIT_KEYS.index(key) for key in LIMIT_KEYS if key in scenario.limits]
        self.limit_keys = [LIMIT_KEYS[column] for column in self.limit_columns]
        self.remaining = np.array([scenario.limits[key] for key in self.limit_keys], dtype=np.int64)
        self.reserved = np.zeros(len(LIMIT_KEYS), dtype=np.int64)
        self.pool_zones = scenario.zones
        self.pool_capacity_types = frozenset(scenario.capacity_types)
        self.masks: Dict[FrozenSet[str], np.ndarray] = {}
        self.claims: List[_Claim] = []
        self.heap: List[Tuple[int, int, _Claim]] = []
        self.pending: List[PendingPods] = []
        self.running = list(scenario.running_nodes)
        self.running_free = [
            [node.option.allocatable.cpu - node.requested.cpu,
             node.option.allocatable.memory - node.requested.memory,
             node.option.allocatable.pods - node.requested.pods]
            for node in self.running
        ]
        self.running_placed: List[Dict[int, int]] = [{} for _ in self.running]
        for node in self.running:
            if node.in_node_pool and node.capacity_reported and self.limit_columns:
                usage = np.array(
                    [node.option.capacity.cpu, node.option.capacity.memory, node.option.capacity.pods, 1],
                    dtype=np.int64,
                )
                self.remaining -= usage[self.limit_columns]

    # -- pods ------------------------------------------------------------------------------

    def _mask(self, allowed: Optional[FrozenSet[str]]) -> Optional[np.ndarray]:
        if allowed is None:
            return None
        if allowed not in self.masks:
            self.masks[allowed] = np.array([name in allowed for name in self.names], dtype=bool)
        return self.masks[allowed]

    def _runs(self) -> List[_Run]:
        groups = self.scenario.pod_groups
        order = sorted(
            range(len(groups)),
            key=lambda i: (-groups[i].requests.cpu, -groups[i].requests.memory, i),
        )
        runs: List[_Run] = []
        previous_key = None
        for index in order:
            group = groups[index]
            if group.count == 0:
                continue
            requests = (group.requests.cpu, group.requests.memory, group.requests.pods)
            key = (requests, group.allowed_types, group.zones, group.capacity_types)
            if key != previous_key:
                runs.append(
                    _Run(
                        requests,
                        group.allowed_types,
                        self._mask(group.allowed_types),
                        None if group.allowed_types is None else self._mask(group.allowed_types).tolist(),
                        group.zones,
                        group.capacity_types,
                        [],
                    )
                )
                previous_key = key
            runs[-1].segments.append((index, group.count))
        return runs

    # -- how many pods of a run fit --------------------------------------------------------

    @staticmethod
    def _pods_that_fit(free: np.ndarray, requests: Tuple[int, int, int]) -> np.ndarray:
        """Per row of `free` (cpu, memory, pods), how many pods of `requests` fit (may be < 0)."""
        dims = [d for d in range(_RESOURCE_DIMENSIONS) if requests[d] > 0]
        counts = free[:, dims[0]] // requests[dims[0]]
        for d in dims[1:]:
            counts = np.minimum(counts, free[:, d] // requests[d])
        if len(dims) < _RESOURCE_DIMENSIONS:
            # A dimension the pod does not use still has to be non-negative for the type to fit.
            fits = (free >= 0).all(axis=1)
            counts = np.where(fits, counts, -1)
        return counts

    def _compatible(self, zones, capacity_types, run: _Run) -> bool:
        if run.zones is not None and zones is not None and not (zones & run.zones):
            return False
        return run.capacity_types is None or bool(capacity_types & run.capacity_types)

    def _matching(self, candidates: _Candidates, run: _Run) -> _Candidates:
        """The candidates a pod of this run may use."""
        if run.mask is None:
            return candidates
        if isinstance(candidates, tuple):
            return tuple(t for t in candidates if run.mask_list[t])
        return candidates[run.mask[candidates]]

    def _most_pods(self, candidates: _Candidates, used: Sequence[int], requests: Tuple[int, int, int]) -> int:
        """The most pods of `requests` any candidate still holds on top of `used` (0 if none)."""
        if isinstance(candidates, tuple):
            # Few candidates: plain Python beats numpy's per-call overhead.
            best = 0
            for t in candidates:
                row = self.room_rows[t]
                fit = None
                for d in range(_RESOURCE_DIMENSIONS):
                    free = row[d] - used[d]
                    if free < 0:
                        fit = -1
                        break
                    if requests[d] > 0:
                        count = free // requests[d]
                        if fit is None or count < fit:
                            fit = count
                if fit is not None and fit > best:
                    best = fit
            return best
        if not len(candidates):
            return 0
        free = self.room[candidates] - np.array(used, dtype=np.int64)
        return max(int(self._pods_that_fit(free, requests).max()), 0)

    def _room_in_claim(self, claim: _Claim, run: _Run) -> int:
        requests = run.requests
        headroom = claim.headroom
        if headroom[0] < requests[0] or headroom[1] < requests[1] or headroom[2] < requests[2]:
            return 0
        if not self._compatible(claim.zones, claim.capacity_types, run):
            return 0
        return self._most_pods(self._matching(claim.candidates, run), claim.requests, requests)

    def _set_candidates(self, claim: _Claim, candidates: _Candidates) -> None:
        """Keep the candidates that hold the claim's pods, and the largest room left per resource."""
        used = claim.requests
        if isinstance(candidates, np.ndarray) and len(candidates) > _SMALL_CANDIDATE_SET:
            free = self.room[candidates] - np.array(used, dtype=np.int64)
            fits = (free >= 0).all(axis=1)
            claim.candidates = candidates[fits]
            claim.headroom = tuple(int(x) for x in free[fits].max(axis=0))
            if len(claim.candidates) > _SMALL_CANDIDATE_SET:
                return
            candidates = claim.candidates
        kept = []
        headroom = [-1, -1, -1]
        for t in (int(t) for t in candidates):
            row = self.room_rows[t]
            free = (row[0] - used[0], row[1] - used[1], row[2] - used[2])
            if free[0] >= 0 and free[1] >= 0 and free[2] >= 0:
                kept.append(t)
                for d in range(_RESOURCE_DIMENSIONS):
                    if free[d] > headroom[d]:
                        headroom[d] = free[d]
        claim.candidates = tuple(kept)
        claim.headroom = tuple(headroom)

    def _narrow(self, claim: _Claim, run: _Run) -> None:
        """Keep the claim's types that hold its pods and match the run's constraints."""
        self._set_candidates(claim, self._matching(claim.candidates, run))
        if run.zones is not None:
            claim.zones = run.zones if claim.zones is None else claim.zones & run.zones
        if run.capacity_types is not None:
            claim.capacity_types = claim.capacity_types & run.capacity_types

    # -- placing a run ---------------------------------------------------------------------

    def _place_on_running_nodes(self, run: _Run, group_index: int, count: int) -> int:
        """First fit over the running nodes; returns the pods left over."""
        requests = run.requests
        for node_index, node in enumerate(self.running):
            if count == 0:
                break
            if run.allowed_types is not None and node.option.name not in run.allowed_types:
                continue
            if run.zones is not None and node.zone not in run.zones:
                continue
            if run.capacity_types is not None and node.capacity_type not in run.capacity_types:
                continue
            free = self.running_free[node_index]
            fit = min(free[d] // requests[d] for d in range(_RESOURCE_DIMENSIONS) if requests[d] > 0)
            if min(free) < 0 or fit <= 0:
                continue
            taken = min(fit, count)
            for d in range(_RESOURCE_DIMENSIONS):
                free[d] -= taken * requests[d]
            placed = self.running_placed[node_index]
            placed[group_index] = placed.get(group_index, 0) + taken
            count -= taken
        return count

    def _fresh_candidates(self, run: _Run) -> np.ndarray:
        """Types a new NodeClaim for this run could use, before the limits filter."""
        fits = (self.room >= np.array(run.requests, dtype=np.int64)).all(axis=1)
        if run.mask is not None:
            fits &= run.mask
        if not self._compatible(self.pool_zones, self.pool_capacity_types, run):
            fits[:] = False
        return np.flatnonzero(fits)

    def _open_claim(self, fresh: np.ndarray, template: Dict[str, object]) -> Optional[_Claim]:
        """A new NodeClaim for the run's next pod, or None when the limits leave no type.

        template caches, per run, what every unfiltered new claim of the run starts with.
        """
        if "largest" not in template:
            template["largest"] = self.capacity[fresh].max(axis=0)
            template["largest_limited"] = template["largest"][self.limit_columns]
        candidates = fresh
        largest = template["largest"]
        filtered = False
        if self.limit_columns and (template["largest_limited"] > self.remaining).any():
            within = (self.capacity[np.ix_(candidates, self.limit_columns)] <= self.remaining).all(axis=1)
            candidates = candidates[within]
            if not len(candidates):
                return None
            largest = self.capacity[candidates].max(axis=0)
            filtered = True
        self.reserved += largest
        if self.limit_columns:
            self.remaining = self.remaining - largest[self.limit_columns]
        claim = _Claim(len(self.claims), (), self.pool_zones, self.pool_capacity_types)
        if not filtered and "start" in template:
            claim.candidates, claim.headroom = template["start"]
        else:
            self._set_candidates(claim, candidates)
            if not filtered:
                template["start"] = (claim.candidates, claim.headroom)
        self.claims.append(claim)
        return claim

    def _limit_reason(self) -> str:
        left = ", ".join(
            f"{key} {int(value)}" for key, value in zip(self.limit_keys, self.remaining, strict=True)
        )
        if "nodes" in self.limit_keys and self.remaining[self.limit_keys.index("nodes")] < 1:
            return f"node limits have been exhausted for the NodePool (left: {left})"
        return (
            "all available instance types exceed the NodePool limits "
            f"(left after subtractMax: {left}; cpu in m, memory in MiB)"
        )

    def _place_run(self, run: _Run, stamp: int, smallest_later: Tuple[int, int, int]) -> None:
        heap = self.heap
        set_aside: List[Tuple[int, int, _Claim]] = []
        touched: List[_Claim] = []
        fresh: Optional[np.ndarray] = None
        template: Dict[str, object] = {}
        pending_reason: Optional[str] = None
        requests = run.requests
        for group_index, count in run.segments:
            count = self._place_on_running_nodes(run, group_index, count) if self.running else count
            while count > 0 and pending_reason is None:
                if heap:
                    pod_count, index, claim = heap[0]
                    if claim.run_stamp != stamp:
                        claim.run_stamp = stamp
                        claim.room_in_run = self._room_in_claim(claim, run)
                    if claim.room_in_run <= 0:
                        set_aside.append(heapq.heappop(heap))
                        continue
                    take = min(count, claim.room_in_run)
                    if len(heap) > 1:
                        runner_up = heap[1] if len(heap) == 2 else min(heap[1], heap[2])
                        # The claim stays first while (pods, index) sorts before the runner-up's.
                        lead = runner_up[0] - pod_count + (1 if index < runner_up[1] else 0)
                        take = min(take, max(lead, 1))
                else:
                    if fresh is None:
                        fresh = self._fresh_candidates(run)
                    if not len(fresh):
                        pending_reason = "no instance type of the NodePool fits the pod and its node selector"
                        break
                    claim = self._open_claim(fresh, template)
                    if claim is None:
                        pending_reason = self._limit_reason()
                        break
                    claim.run_stamp = stamp
                    # Room for pods of this run on the claim's best type, counting this first pod.
                    claim.room_in_run = self._most_pods(claim.candidates, (0, 0, 0), requests)
                    if claim.room_in_run < 1:
                        raise RuntimeError("a new NodeClaim has no room for the pod that opened it")
                    heapq.heappush(heap, (0, claim.index, claim))
                    continue
                claim.room_in_run -= take
                claim.pod_count += take
                for d in range(_RESOURCE_DIMENSIONS):
                    claim.requests[d] += take * requests[d]
                if claim.touched_stamp != stamp:
                    claim.touched_stamp = stamp
                    touched.append(claim)
                claim.placed[group_index] = claim.placed.get(group_index, 0) + take
                heapq.heapreplace(heap, (claim.pod_count, claim.index, claim))
                count -= take
            if count > 0:
                self._add_pending(group_index, count, pending_reason)
        for claim in touched:
            self._narrow(claim, run)
        later_cpu, later_memory, later_pods = smallest_later
        for entry in set_aside:
            headroom = entry[2].headroom
            # A claim without room for the smallest pod still to come is done for this batch.
            if headroom[0] >= later_cpu and headroom[1] >= later_memory and headroom[2] >= later_pods:
                heapq.heappush(heap, entry)

    def _add_pending(self, group_index: int, count: int, reason: Optional[str]) -> None:
        workload = self.scenario.pod_groups[group_index].workload
        self.pending.append(PendingPods(workload, count, reason or "no node could take the pod"))

    # -- launch ----------------------------------------------------------------------------

    def _launch(self, claim: _Claim) -> PlacedNode:
        capacity_type = next(
            (kind for kind in CAPACITY_TYPE_PRIORITY if kind in claim.capacity_types and kind != "reserved"),
            "on-demand",
        )
        candidates = claim.candidates
        if len(candidates) == 1:
            best = int(candidates[0])
        else:
            best = min(
                (int(t) for t in candidates),
                key=lambda t: (self.options[t].price_for(capacity_type), self.names[t]),
            )
        option = self.options[best]
        zones = claim.zones if claim.zones is not None else frozenset()
        return PlacedNode(
            name=f"nodeclaim-{claim.index + 1}",
            instance_type=option.name,
            capacity_type=capacity_type,
            price=option.price_for(capacity_type),
            capacity=option.capacity,
            allocatable=option.allocatable,
            reserved=option.daemon_overhead,
            pod_requests=Resources(*claim.requests),
            pods=self._by_workload(claim.placed),
            zones=tuple(sorted(zones)),
            options=len(candidates),
        )

    def _by_workload(self, placed: Mapping[int, int]) -> Mapping[str, int]:
        counts: Dict[str, int] = {}
        for group_index, count in sorted(placed.items()):
            workload = self.scenario.pod_groups[group_index].workload
            counts[workload] = counts.get(workload, 0) + count
        return MappingProxyType(counts)

    def _running_result(self, node_index: int) -> PlacedNode:
        node = self.running[node_index]
        placed = self.running_placed[node_index]
        groups = self.scenario.pod_groups
        pod_requests = sum(
            (groups[g].requests.scaled(count) for g, count in placed.items()), Resources()
        )
        return PlacedNode(
            name=node.name,
            instance_type=node.option.name,
            capacity_type=node.capacity_type,
            price=node.option.price_for(node.capacity_type),
            capacity=node.option.capacity,
            allocatable=node.option.allocatable,
            reserved=node.requested,
            pod_requests=pod_requests,
            pods=self._by_workload(placed),
            zones=(node.zone,) if node.zone else (),
            options=1,
            existing=True,
            in_node_pool=node.in_node_pool,
        )

    def run(self) -> ProvisioningResult:
        runs = self._runs()
        smallest_later = [_NEVER] * (len(runs) + 1)
        for index in range(len(runs) - 1, -1, -1):
            smallest_later[index] = tuple(
                min(a, b) for a, b in zip(runs[index].requests, smallest_later[index + 1], strict=True)
            )
        for stamp, run in enumerate(runs):
            self._place_run(run, stamp, smallest_later[stamp + 1])
        nodes = [self._running_result(i) for i in range(len(self.running))]
        nodes += [self._launch(claim) for claim in self.claims]
        return ProvisioningResult(
            nodes=tuple(nodes),
            pending=tuple(self.pending),
            limits=MappingProxyType(dict(self.scenario.limits)),
            remaining=MappingProxyType(
                {key: int(value) for key, value in zip(self.limit_keys, self.remaining, strict=True)}
            ),
            reserved=MappingProxyType({key: int(value) for key, value in zip(LIMIT_KEYS, self.reserved, strict=True)}),
        )


def simulate(scenario: Scenario) -> ProvisioningResult:
    """The fleet Karpenter launches for `scenario`'s pending pods, and the pods left pending."""
    return _Simulator(scenario).run()
