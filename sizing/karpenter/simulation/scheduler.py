"""One scheduling pass over a batch of pending pods (see the package docstring for the rules).

Pods come in runs of identical pods. An unconstrained run is handed out with a heap of claims
ordered by (pods, creation), several pods at a time when the order cannot change in between.
A constrained run (topology, host ports, or the target of another workload's anti-affinity)
keeps one heap per combination of domains the claims are committed to (one per topology key) and
takes one pod at a time whenever domain counts decide where the next pod may go.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from sizing.errors import SizingInputError
from sizing.karpenter.labels import LabelRequirement, compatible
from sizing.karpenter.simulation.domains import Domains
from sizing.karpenter.simulation.memo import IdentityMemo
from sizing.karpenter.simulation.model import (
    AFFINITY,
    CAPACITY_TYPE,
    HOSTNAME,
    LIMIT_KEYS,
    OUTSIDE_NODE_POOLS,
    ZONE,
    NodeOption,
    PendingPods,
    PlacedNode,
    Placement,
    PodGroup,
    ProvisioningResult,
    Scenario,
)
from sizing.karpenter.simulation.nodes import keeps_min_values, launch, most_pods, set_candidates
from sizing.karpenter.simulation.rounds import fewest_first
from sizing.karpenter.simulation.state import (
    DIMENSIONS,
    NOTHING,
    Candidates,
    Claim,
    LimitsLeft,
    TopologyCounts,
    TypeTable,
    TypeTables,
    Vector,
    apply_mask,
    weight_order,
)
from sizing.karpenter.simulation.topology import (
    Inverse,
    OwnSpread,
    block_reason,
    commit_domain,
    domain_keys,
    hostname_bootstrap,
    hostname_cap,
    hostname_excluders,
    valid_domains,
)
from sizing.kube.resources import Resources

_NEVER = (2**62, 2**62, 2**62, 2**62)
_ANY = "*"
# Narrowed claims, and pods that fit candidate sets, remembered for claims that narrow alike
# (see Simulator._narrow and Simulator._most_pods).
NARROWINGS_KEPT = 4096
# A bucket of NodeClaims: per domain key of the run, the domain they are committed to, or _ANY.
Bucket = tuple[str, ...]
Valid = Mapping[str, frozenset[str]]
# What committing a NodeClaim to domains narrows: zones, capacity types, candidates, headroom, labels.
_Snapshot = tuple[frozenset[str] | None, frozenset[str], Candidates, Vector, dict[str, LabelRequirement]]


@dataclass
class _Run:
    """Consecutive pending pods that schedule identically."""

    group: PodGroup
    requests: Vector
    mask: np.ndarray | None
    mask_list: list[bool] | None
    segments: list[tuple[int, int]] = field(default_factory=list)  # (pod group index, count)

    @property
    def zones(self) -> frozenset[str] | None:
        return self.group.zones

    @property
    def capacity_types(self) -> frozenset[str] | None:
        return self.group.capacity_types


# Identifies one placement attempt (a run, a relaxed retry, a queue retry) so that the NodeClaim
# templates worked out for it are reused within it.
Stamp = int | tuple[str | int, ...]


@dataclass
class _Template:
    """What a new NodeClaim for one placement attempt starts from in one NodePool."""

    fresh: np.ndarray
    largest: np.ndarray | None = None
    largest_limited: np.ndarray | None = None
    start: tuple[Candidates, Vector] | None = None


_ZONE_ONLY = (ZONE,)


def _bucket_valid(name: Bucket, keys: tuple[str, ...], valid: Valid) -> bool:
    """Whether claims of this bucket may be committed, or are, to valid domains on every key."""
    if len(keys) == 1:
        return name[0] == _ANY or name[0] in valid[keys[0]]
    return all(domain == _ANY or domain in valid[key] for key, domain in zip(keys, name, strict=True))


def _labels_fit(labels: Mapping[str, LabelRequirement], group: PodGroup) -> bool:
    """Whether a NodeClaim (or NodePool) whose labels must meet `labels` can take the group's pods."""
    for requirement in group.labels:
        existing = labels.get(requirement.key)
        if existing is not None and not compatible(existing, requirement):
            return False
    return True


def _check_scenario(scenario: Scenario) -> None:
    pools = scenario.pools
    names = [pool.name for pool in pools]
    if len(set(names)) != len(names):
        raise SizingInputError(f"scenario NodePools must have distinct names, got {names}")
    for pool in pools:
        if not pool.node_options:
            raise SizingInputError(
                f"NodePool {pool.name!r} has no instance type; the NodePool needs at least one instance type"
            )
        types = [option.name for option in pool.node_options]
        if len(set(types)) != len(types):
            raise SizingInputError(f"NodePool {pool.name!r} lists an instance type twice: {types}")
        for key, value in pool.limits.items():
            if key not in LIMIT_KEYS:
                raise SizingInputError(f"limits key {key!r} is not supported; allowed keys are {list(LIMIT_KEYS)}")
            if isinstance(value, bool) or not isinstance(value, int):
                raise SizingInputError(f"limits[{key!r}] must be an integer, got {value!r}")
    for group in scenario.pod_groups:
        if group.count < 0 or min(group.requests.vector) < 0 or group.requests.pods < 1:
            raise SizingInputError(
                f"pod group {group.workload!r}: count must be >= 0 and requests non-negative with "
                f"at least one pod slot, got count {group.count} and {group.requests}"
            )


class Simulator:
    def __init__(self, scenario: Scenario, tables: TypeTables | None = None):
        _check_scenario(scenario)
        self.scenario = scenario
        self.pools = scenario.pools
        self.primary = scenario.primary_pool
        self.order = weight_order(self.pools)
        self.table = TypeTable(self.pools) if tables is None else tables.for_pools(self.pools)
        self.limits = LimitsLeft(self.pools, scenario.running_nodes, self.primary)
        self.groups: list[PodGroup] = list(scenario.pod_groups)
        self.inverse = Inverse(self.groups)
        self.counts = TopologyCounts()
        self.claims: list[Claim] = []
        self.heap: list[tuple[int, int, Claim]] = []
        # Claims out of the heap for now: no room for the pods of the last run, perhaps for later ones.
        self.aside: list[tuple[int, int, Claim]] = []
        self.pending: list[PendingPods] = []
        # (group index, pods) that failed, in the order they failed: Karpenter's queue retries them.
        self.failed: list[tuple[int, int]] = []
        self.placed: dict[str, int] = {}
        self.relaxed: dict[str, list[str]] = {}
        self.running = list(scenario.running_nodes)
        self.running_free = [
            [
                node.option.allocatable.cpu - node.requested.cpu,
                node.option.allocatable.memory - node.requested.memory,
                node.option.allocatable.pods - node.requested.pods,
                node.option.allocatable.ephemeral_storage - node.requested.ephemeral_storage,
            ]
            for node in self.running
        ]
        # The same, as one array: first fit over thousands of running nodes is one vectorised pass.
        self.running_free_array = np.array(self.running_free, dtype=np.int64).reshape(-1, DIMENSIONS)
        self.running_placed: list[dict[int, int]] = [{} for _ in self.running]
        # The nodes' own pods and ports, copied only when this batch adds to them (most nodes it does not touch).
        self.running_workloads: list[Mapping[str, int]] = [node.pods for node in self.running]
        self.running_ports: list[AbstractSet[tuple[str, int]]] = [node.host_ports for node in self.running]
        self.domains = Domains(self.table, self.pools, self.running, self.groups)
        self._narrowings: IdentityMemo[tuple[Candidates, Vector]] = IdentityMemo(NARROWINGS_KEPT)
        self._most: IdentityMemo[int] = IdentityMemo(NARROWINGS_KEPT)
        for node in self.running:
            # Pods already bound count in topology as Karpenter's cluster state counts them.
            for workload, count in sorted(node.pods.items()):
                self.placed[workload] = self.placed.get(workload, 0) + count
                self.domains.record_node(self.counts, workload, node, count)
        self.pool_capacity_types = [frozenset(pool.capacity_types) for pool in self.pools]
        self.templates: dict[tuple[object, ...], _Template] = {}
        # Why the last constrained pass left pods over, for their PendingPods.
        self.reason: str | None = None

    # -- runs ------------------------------------------------------------------------------

    def _run_for(self, group: PodGroup) -> _Run:
        mask = self.table.mask(group.allowed_types)
        ports = self.table.port_mask(group.host_ports)
        if ports is not None:
            mask = ports if mask is None else mask & ports
        return _Run(
            group,
            group.requests.vector,
            mask,
            None if mask is None else mask.tolist(),
        )

    def _runs(self) -> list[_Run]:
        groups = self.groups
        order = sorted(range(len(groups)), key=lambda i: (-groups[i].requests.cpu, -groups[i].requests.memory, i))
        runs: list[_Run] = []
        previous_key: tuple[object, ...] | None = None
        for index in order:
            group = groups[index]
            if group.count == 0:
                continue
            key: tuple[object, ...]
            if self._careful(group):
                key = ("group", index)
            else:
                key = (
                    group.requests,
                    group.allowed_types,
                    group.zones,
                    group.capacity_types,
                    group.pools,
                    group.nodes,
                    group.labels,
                )
            if key != previous_key:
                runs.append(self._run_for(group))
                previous_key = key
            runs[-1].segments.append((index, group.count))
        return runs

    def _careful(self, group: PodGroup) -> bool:
        return group.constrained or self.inverse.targets(group.workload) or group.fallback is not None

    # -- what a claim or pool can take -----------------------------------------------------

    def _compatible(self, zones: frozenset[str] | None, capacity_types: frozenset[str], run: _Run) -> bool:
        if run.zones is not None and zones is not None and not (zones & run.zones):
            return False
        return not (run.capacity_types is not None and not capacity_types & run.capacity_types)

    def _pool_allowed(self, pool: int, run: _Run) -> bool:
        return run.group.pools is None or self.pools[pool].name in run.group.pools

    def _matching(self, candidates: Candidates, run: _Run) -> Candidates:
        """The candidates a pod of this run may use."""
        if run.mask is None or run.mask_list is None:
            return candidates
        if isinstance(candidates, tuple):
            mask_list = run.mask_list
            return tuple(t for t in candidates if mask_list[t])
        selected: np.ndarray = candidates[run.mask[candidates]]
        return selected

    def _room_in_claim(self, claim: Claim, run: _Run) -> int:
        requests = run.requests
        headroom = claim.headroom
        if (
            headroom[0] < requests[0]
            or headroom[1] < requests[1]
            or headroom[2] < requests[2]
            or headroom[3] < requests[3]
        ):
            return 0
        if not self._pool_allowed(claim.pool, run) or not self._compatible(claim.zones, claim.capacity_types, run):
            return 0
        if run.group.labels and not _labels_fit(claim.labels, run.group):
            return 0
        candidates = self._matching(claim.candidates, run)
        if self.table.partial and (run.zones is not None or run.capacity_types is not None):
            zones, kinds = self._narrowed(claim, run)
            candidates = apply_mask(candidates, self.table.offer_mask(zones, kinds))
        return self._most_pods(claim.pool, candidates, claim.requests, requests)

    def _most_pods(self, pool: int, candidates: Candidates, used: Sequence[int], requests: Vector) -> int:
        """`most_pods`, remembered for the last few thousand candidate sets: claims that narrow
        alike share theirs (see `_narrow`), so a fleet of one type and content asks once."""
        values = (pool, *used, *requests)
        found = self._most.get((candidates,), values)
        if found is None:
            found = most_pods(self.table, pool, candidates, used, requests)
            self._most.put((candidates,), values, found)
        return found

    @staticmethod
    def _narrowed(claim: Claim, run: _Run) -> tuple[frozenset[str] | None, frozenset[str]]:
        """The claim's zones and capacity types once it takes a pod of the run."""
        zones = claim.zones
        if run.zones is not None:
            zones = run.zones if zones is None else zones & run.zones
        kinds = claim.capacity_types if run.capacity_types is None else claim.capacity_types & run.capacity_types
        return zones, kinds

    def _narrow(self, claim: Claim, run: _Run) -> None:
        """Keep the claim's types that hold its pods and match the run's constraints and, where
        offerings differ, that are offered in the zones and capacity types left to it.

        Claims opened alike and holding the same pods narrow alike (a fleet of hundreds of one
        type and content), so the last few thousand outcomes are kept by what they depend on.
        """
        objects = (claim.candidates, run.mask)
        zones, kinds = self._narrowed(claim, run)
        used = claim.requests
        values = (zones, kinds, *used)
        claim.zones, claim.capacity_types = zones, kinds
        known = self._narrowings.get(objects, values)
        if known is not None:
            claim.candidates, claim.headroom = known
            return
        candidates = self._matching(claim.candidates, run)
        if self.table.partial:
            candidates = apply_mask(candidates, self.table.offer_mask(zones, kinds))
        set_candidates(self.table, claim, candidates)
        self._narrowings.put(objects, values, (claim.candidates, claim.headroom))

    def _fresh_candidates(self, run: _Run, pool: int, offered: np.ndarray | None = None) -> np.ndarray:
        """Rows of `pool` a new NodeClaim for this run could use, before the limits filter;
        offered: the rows offered in the claim's zones and capacity types (None: all)."""
        rows = self.table.pool_rows[pool]
        if not self._pool_allowed(pool, run) or not self._compatible(
            self.pools[pool].zones, self.pool_capacity_types[pool], run
        ):
            return rows[:0]
        if run.group.labels and not _labels_fit(self.domains.pool_labels[pool], run.group):
            return rows[:0]
        fits = (self.table.room[rows] >= np.array(run.requests, dtype=np.int64)).all(axis=1)
        if run.mask is not None:
            fits &= run.mask[rows]
        if offered is not None:
            fits &= offered[rows]
        return rows[fits]

    def _open_claim(
        self, run: _Run, stamp: Stamp, wanted: Valid | None = None
    ) -> tuple[Claim, None] | tuple[None, str]:
        """A new NodeClaim for the run's next pod from the first NodePool that can launch one, or
        (None, reason). wanted: the domains per topology key the pod may go to."""
        reasons = []
        for pool in self.order:
            pool_zones = self.pools[pool].zones
            zones = pool_zones if run.zones is None else (run.zones if pool_zones is None else pool_zones & run.zones)
            wanted_zones = wanted.get(ZONE) if wanted is not None else None
            if wanted_zones is not None:
                zones = wanted_zones if zones is None else zones & wanted_zones
            kinds = self.pool_capacity_types[pool]
            if run.capacity_types is not None:
                kinds = kinds & run.capacity_types
            # The capacity types a pod with topology on them may commit the claim to.
            wanted_kinds = wanted.get(CAPACITY_TYPE) if wanted is not None else None
            offer_kinds = kinds if wanted_kinds is None else kinds & wanted_kinds
            # Where offerings differ, the types a new claim starts from depend on its zones and capacity types.
            offered = self.table.partial and (zones is None or bool(zones)) and bool(offer_kinds)
            key: tuple[object, ...] = (stamp, pool, zones, offer_kinds) if offered else (stamp, pool)
            template = self.templates.get(key)
            if template is None:
                mask = self.table.offer_mask(zones, offer_kinds) if offered else None
                template = self.templates[key] = _Template(self._fresh_candidates(run, pool, mask))
            fresh = template.fresh
            if not len(fresh):
                if self._pool_allowed(pool, run):
                    reasons.append(self._where(pool) + self._no_type_reason(run, pool, zones if offered else None))
                continue
            if wanted is not None:
                missing = self._missing_domain(pool, fresh, zones, wanted)
                if missing is not None:
                    reasons.append(self._where(pool) + f"no {missing} of the NodePool satisfies the pod's topology")
                    continue
                fresh, template = self._within_wanted(pool, fresh, template, wanted)
            claim = self._claim_from(pool, fresh, template, reasons)
            if claim is None:
                continue
            claim.zones = zones
            claim.capacity_types = kinds
            return claim, None
        return None, "; ".join(reasons) or "no NodePool can take the pod (taints, labels or NodePool selector)"

    def _missing_domain(self, pool: int, fresh: np.ndarray, zones: frozenset[str] | None, wanted: Valid) -> str | None:
        """The first topology key (readable) for which a new NodeClaim of `pool` has no wanted domain."""
        for key, values in sorted(wanted.items()):
            if key == ZONE:
                if zones is not None and not zones:
                    return "zone"
            elif key == CAPACITY_TYPE:
                if not (self.pool_capacity_types[pool] & values):
                    return "capacity type"
            elif key in self.domains.instance_keys:
                column = self.domains.column(key)
                if not any(column[row] in values for row in fresh):
                    return f"instance type with a {key} label"
            else:
                requirement = self.domains.pool_labels[pool].get(key)
                if requirement is None or not any(requirement.has(value) for value in values):
                    return f"{key} label value"
        return None

    def _within_wanted(
        self, pool: int, fresh: np.ndarray, template: _Template, wanted: Valid
    ) -> tuple[np.ndarray, _Template]:
        """The fresh rows whose instance-type labels are wanted (a template of their own when some go)."""
        keep = np.ones(len(fresh), dtype=bool)
        for key, values in wanted.items():
            if key in self.domains.instance_keys and key not in (ZONE, CAPACITY_TYPE):
                keep &= np.array([value in values for value in self.domains.column(key)[fresh]], dtype=bool)
        if keep.all():
            return fresh, template
        kept = fresh[keep]
        return kept, _Template(kept)

    def _no_type_reason(self, run: _Run, pool: int, zones: frozenset[str] | None = None) -> str:
        ports = self.table.port_mask(run.group.host_ports)
        if ports is not None and not ports[self.table.pool_rows[pool]].any():
            taken = sorted({p for o in self.pools[pool].node_options for p in o.daemon_ports} & run.group.host_ports)
            listed = ", ".join(f"{port}/{protocol}" for protocol, port in taken)
            return f"a DaemonSet on every node of the NodePool binds the pod's host port {listed}"
        if self.table.partial and len(self._fresh_candidates(run, pool)):
            where = f"zone {', '.join(sorted(zones))}" if zones else "any zone"
            return f"no instance type of the NodePool that fits the pod is offered in {where}"
        return "no instance type of the NodePool fits the pod and its node selector"

    def _where(self, pool: int) -> str:
        return f"NodePool {self.pools[pool].name!r}: " if len(self.pools) > 1 else ""

    def _claim_from(self, pool: int, fresh: np.ndarray, template: _Template, reasons: list[str]) -> Claim | None:
        limits = self.limits
        columns = limits.columns[pool]
        if template.largest is None or template.largest_limited is None:
            template.largest = self.table.capacity[fresh].max(axis=0)
            template.largest_limited = template.largest[columns]
        candidates = fresh
        largest = template.largest
        limits.consider(pool, largest)
        filtered = False
        remaining = limits.remaining[pool]
        if "nodes" in limits.keys[pool] and remaining[limits.keys[pool].index("nodes")] < 1:
            reasons.append(
                self._where(pool) + f"node limits have been exhausted for the NodePool (left: {limits.describe(pool)})"
            )
            return None
        if columns and (template.largest_limited > remaining).any():
            within = (self.table.capacity[np.ix_(candidates, np.array(columns, dtype=np.int64))] <= remaining).all(
                axis=1
            )
            candidates = candidates[within]
            if not len(candidates):
                reasons.append(
                    self._where(pool) + "all available instance types exceed the NodePool limits "
                    f"(left after subtractMax: {limits.describe(pool)}; cpu in m, memory in MiB)"
                )
                return None
            largest = self.table.capacity[candidates].max(axis=0)
            filtered = True
        if self.table.min_values[pool] and not keeps_min_values(self.table, pool, candidates):
            reasons.append(self._where(pool) + "fewer instance types than the NodePool's minValues require fit the pod")
            return None
        limits.reserved[pool] += largest
        if columns:
            limits.remaining[pool] = remaining - largest[columns]
        claim = Claim(len(self.claims), pool, self.pools[pool].zones, self.pool_capacity_types[pool])
        claim.labels = dict(self.domains.pool_labels[pool])
        if not filtered and template.start is not None:
            claim.candidates, claim.headroom = template.start
        else:
            set_candidates(self.table, claim, candidates)
            if not filtered:
                template.start = (claim.candidates, claim.headroom)
        self.claims.append(claim)
        return claim

    # -- recording -------------------------------------------------------------------------

    def _add(self, claim: Claim, run: _Run, group_index: int, take: int) -> None:
        requests = run.requests
        claim.pod_count += take
        held = claim.requests
        held[0] += take * requests[0]
        held[1] += take * requests[1]
        held[2] += take * requests[2]
        held[3] += take * requests[3]
        claim.placed[group_index] = claim.placed.get(group_index, 0) + take
        group = run.group
        workload = group.workload
        claim.workloads[workload] += take
        self.placed[workload] = self.placed.get(workload, 0) + take
        if group.host_ports:
            claim.ports |= group.host_ports
        for requirement in group.labels:
            # Karpenter adds each pod's requirements to its NodeClaim's.
            existing = claim.labels.get(requirement.key)
            claim.labels[requirement.key] = requirement if existing is None else existing.intersection(requirement)

    def _record_domains(self, claims: Iterable[Claim], run: _Run) -> None:
        if not self.domains.tracked:
            return
        for claim in claims:
            placed = claim.placed.get(run.segments[0][0], 0) if len(run.segments) == 1 else None
            if placed is None:
                for group_index, _ in run.segments:
                    workload = self.groups[group_index].workload
                    self.domains.record_claim(self.counts, workload, claim, claim.placed.get(group_index, 0))
            else:
                self.domains.record_claim(self.counts, run.group.workload, claim, placed)

    # -- running nodes ---------------------------------------------------------------------

    def _running_fit(self, index: int, run: _Run, valid: Valid | None) -> int:
        free = self.running_free[index]
        requests = run.requests
        if free[0] < requests[0] or free[1] < requests[1] or free[2] < requests[2] or free[3] < requests[3]:
            return 0  # the common case once a node is full, so it is checked first
        node = self.running[index]
        group = run.group
        if group.allowed_types is not None and node.option.name not in group.allowed_types:
            return 0
        if group.zones is not None and node.zone not in group.zones:
            return 0
        if valid is not None and any(self.domains.node_value(node, key) not in values for key, values in valid.items()):
            return 0
        if group.capacity_types is not None and node.capacity_type not in group.capacity_types:
            return 0
        if node.launched:
            if group.pools is not None and node.node_pool not in group.pools:
                return 0
            if any(
                not requirement.admits(node.labels.get(requirement.key))
                for requirement in group.labels
                if requirement.key not in self.domains.instance_keys
            ):
                return 0
        elif group.nodes is not None and node.name not in group.nodes:
            return 0
        if group.host_ports & node.option.daemon_ports:
            return 0
        free = self.running_free[index]
        if min(free) < 0:
            return 0
        requests = run.requests
        fit = min(free[d] // requests[d] for d in range(DIMENSIONS) if requests[d] > 0)
        if fit > 0 and self._careful(group):
            fit = min(
                fit,
                hostname_cap(
                    group, self.running_workloads[index], self.running_ports[index], self.inverse, self.placed
                ),
            )
        return max(fit, 0)

    def _place_on_running(self, index: int, run: _Run, group_index: int, taken: int) -> None:
        free = self.running_free[index]
        for d in range(DIMENSIONS):
            free[d] -= taken * run.requests[d]
        self.running_free_array[index] = free
        placed = self.running_placed[index]
        placed[group_index] = placed.get(group_index, 0) + taken
        workloads = dict(self.running_workloads[index])
        workloads[run.group.workload] = workloads.get(run.group.workload, 0) + taken
        self.running_workloads[index] = workloads
        self.placed[run.group.workload] = self.placed.get(run.group.workload, 0) + taken
        if run.group.host_ports:
            self.running_ports[index] = self.running_ports[index] | run.group.host_ports
        self.domains.record_node(self.counts, run.group.workload, self.running[index], taken)

    def _fill_running(self, run: _Run, group_index: int, count: int) -> int:
        """First fit over the running nodes; returns the pods left over."""
        if self._fits_anywhere(run.group):
            # No rule of the pod tells nodes apart: how many pods each takes is free room over the
            # requests, for every node at once, and a node takes pods at most once per run.
            requests = run.requests
            free = self.running_free_array
            dims = [d for d in range(DIMENSIONS) if requests[d] > 0]
            room = free[:, dims[0]] // requests[dims[0]]
            for d in dims[1:]:
                room = np.minimum(room, free[:, d] // requests[d])
            fits = np.where((free >= 0).all(axis=1), room, 0)
            for index in np.flatnonzero(fits > 0).tolist():
                taken = min(int(fits[index]), count)
                self._place_on_running(index, run, group_index, taken)
                count -= taken
                if count == 0:
                    break
            return count
        for index in range(len(self.running)):
            if count == 0:
                break
            fit = self._running_fit(index, run, None)
            if fit > 0:
                taken = min(fit, count)
                self._place_on_running(index, run, group_index, taken)
                count -= taken
        return count

    def _fits_anywhere(self, group: PodGroup) -> bool:
        """Whether only room decides which running node takes the group's pods."""
        return (
            group.allowed_types is None
            and group.zones is None
            and group.capacity_types is None
            and group.pools is None
            and group.nodes is None
            and not group.labels
            and not group.host_ports
            and not self._careful(group)
        )

    # -- an unconstrained run --------------------------------------------------------------

    def _place_run(self, run: _Run, stamp: Stamp, smallest_later: Vector) -> None:
        heap = self.heap
        requests = run.requests
        # Claims set aside by earlier runs come back when their headroom might hold this run's pod;
        # the others stay aside without a look at the heap (thousands of claims, dozens of runs),
        # and a claim without room for the smallest pod of this run or a later one is done for the batch.
        floor = [min(requests[d], smallest_later[d]) for d in range(DIMENSIONS)]
        kept: list[tuple[int, int, Claim]] = []
        for entry in self.aside:
            headroom = entry[2].headroom
            if (
                headroom[0] >= requests[0]
                and headroom[1] >= requests[1]
                and headroom[2] >= requests[2]
                and headroom[3] >= requests[3]
            ):
                heapq.heappush(heap, entry)
            elif (
                headroom[0] >= floor[0]
                and headroom[1] >= floor[1]
                and headroom[2] >= floor[2]
                and headroom[3] >= floor[3]
            ):
                kept.append(entry)
        set_aside = kept
        touched: list[Claim] = []
        pending_reason: str | None = None
        for group_index, count in run.segments:
            count = self._fill_running(run, group_index, count) if self.running else count
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
                    opened, pending_reason = self._open_claim(run, stamp)
                    if opened is None:
                        break
                    claim = opened
                    claim.run_stamp = stamp
                    # Room for pods of this run on the claim's best type, counting this first pod.
                    claim.room_in_run = self._most_pods(claim.pool, claim.candidates, NOTHING, requests)
                    if claim.room_in_run < 1:
                        raise RuntimeError("a new NodeClaim has no room for the pod that opened it")
                    heapq.heappush(heap, (0, claim.index, claim))
                    continue
                claim.room_in_run -= take
                self._add(claim, run, group_index, take)
                if claim.touched_stamp != stamp:
                    claim.touched_stamp = stamp
                    touched.append(claim)
                heapq.heapreplace(heap, (claim.pod_count, claim.index, claim))
                count -= take
            if count > 0:
                self._add_pending(group_index, count, pending_reason)
        for claim in touched:
            self._narrow(claim, run)
        self._record_domains(touched, run)
        self.aside = set_aside

    # -- a constrained run -----------------------------------------------------------------

    def _pool_names(self, group: PodGroup) -> list[str]:
        return [pool.name for pool in self.pools if group.pools is None or pool.name in group.pools]

    def _place_constrained(self, run: _Run, stamp: Stamp, group_index: int, count: int) -> int:
        """Place `count` pods of a constrained group; returns the pods left over (self.reason says why)."""
        if count > 0 and hostname_bootstrap(run.group, self.placed):
            # The first pod picks the node for the others; where they may go changes once it is placed.
            if self._place_pass(run, stamp, group_index, 1):
                return count
            count -= 1
        return self._place_pass(run, stamp, group_index, count) if count > 0 else 0

    def _bucket(self, claim: Claim, keys: tuple[str, ...]) -> Bucket:
        """Per key, the domain the claim is committed to, or _ANY."""
        if keys == _ZONE_ONLY:
            return (claim.zone or _ANY,)
        bucket = []
        for key in keys:
            values = self.domains.claim_values(claim, key)
            bucket.append(next(iter(values)) if values is not None and len(values) == 1 else _ANY)
        return tuple(bucket)

    def _place_pass(self, run: _Run, stamp: Stamp, group_index: int, count: int) -> int:
        group = run.group
        keys = domain_keys(group, self.inverse)
        domains = {key: self.domains.for_group(group, key) for key in keys}
        for key in keys:
            if not domains[key]:
                self.reason = (
                    "the pod's zone topology needs zones; none are known for its NodePools"
                    if key == ZONE
                    else f"the pod's topology on {key} has no domain: no NodePool it may use gives that label a "
                    "value (a requirement with In or a template label) and no running node carries it"
                )
                return count
        buckets: dict[Bucket, list[tuple[int, int, Claim]]] = {}
        room: dict[int, int] = {}
        requests = run.requests
        for claim in self.claims:
            headroom = claim.headroom
            if (
                headroom[0] < requests[0]
                or headroom[1] < requests[1]
                or headroom[2] < requests[2]
                or headroom[3] < requests[3]
            ):
                continue  # full for this pod: the common case once a fleet is large
            claim_room = self._room_in_claim(claim, run)
            if claim_room > 0:
                claim_room = min(
                    claim_room, hostname_cap(group, claim.workloads, claim.ports, self.inverse, self.placed)
                )
            if claim_room > 0:
                room[claim.index] = claim_room
                buckets.setdefault(self._bucket(claim, keys), []).append((claim.pod_count, claim.index, claim))
        for heap in buckets.values():
            heapq.heapify(heap)
        touched: dict[int, Claim] = {}
        self.reason = None
        first_running = _FirstRunning(self, run, keys)
        own_spread = OwnSpread.of(group, domains, self.counts, self.inverse) if keys else None
        # Rounds are tried again only once a claim has opened: until then the bucket that ran
        # out of room still has none.
        rounds_ready = own_spread is not None
        while count > 0:
            if rounds_ready and own_spread is not None and not first_running.nodes and own_spread.in_rounds():
                rounds_ready = False
                count -= self._place_rounds(own_spread, buckets, room, run, group_index, count, touched)
                if count == 0:
                    break
            valid: Valid | None
            if own_spread is not None:
                valid = own_spread.valid()
            elif keys:
                valid = {key: valid_domains(group, key, domains[key], self.counts, self.inverse) for key in keys}
            else:
                valid = None
            if valid is not None and not all(valid.values()):
                blocked = next(key for key in keys if not valid[key])
                self.reason = block_reason(
                    group, blocked, domains[blocked], self.counts, self.inverse, self._pool_names(group)
                )
                break
            # Running nodes come first, in order.
            index, fit = first_running.find(valid)
            if index is not None:
                take = 1 if keys else min(fit, count)
                self._place_on_running(index, run, group_index, take)
                if own_spread is not None:
                    own_spread.add(self.domains.node_value(self.running[index], own_spread.key), take)
                count -= take
                continue
            best = self._best_claim(buckets, room, valid, run, keys)
            just_opened = False
            if best is None:
                if hostname_cap(group, {}, frozenset(), self.inverse, self.placed) < 1:
                    # Pod affinity by hostname: an empty new node never holds the pods it needs.
                    self.reason = "no node with room holds a pod its hostname pod affinity selects"
                    break
                opened, reason = self._open_claim(run, stamp, valid)
                if opened is None:
                    self.reason = reason
                    break
                claim = opened
                just_opened = rounds_ready = True
                claim_room = most_pods(self.table, claim.pool, claim.candidates, NOTHING, run.requests)
                claim_room = min(
                    claim_room, hostname_cap(group, claim.workloads, claim.ports, self.inverse, self.placed)
                )
                if claim_room < 1:
                    raise RuntimeError("a new NodeClaim has no room for the pod that opened it")
                room[claim.index] = claim_room
                best = claim
            elif not keys:
                heapq.heappop(buckets[()])
            if valid is not None and not self._commit(best, run, valid, keys, room, just_opened):
                continue  # the claim's types with a valid domain have no room left: try another
            take = 1 if keys else min(count, room[best.index], self._lead(buckets, best))
            self._add(best, run, group_index, take)
            if keys:
                self.domains.record_claim(self.counts, group.workload, best, take)
                if own_spread is not None:
                    values = self.domains.claim_values(best, own_spread.key)
                    if values is not None and len(values) == 1:
                        own_spread.add(next(iter(values)), take)
            room[best.index] -= take
            touched[best.index] = best
            count -= take
            if room[best.index] > 0:
                heapq.heappush(buckets.setdefault(self._bucket(best, keys), []), (best.pod_count, best.index, best))
        for claim in touched.values():
            self._narrow(claim, run)
        if not keys:
            single = _Run(run.group, run.requests, run.mask, run.mask_list, [(group_index, 0)])
            self._record_domains(touched.values(), single)
        return count

    def _place_rounds(
        self,
        own_spread: OwnSpread,
        buckets: dict[Bucket, list[tuple[int, int, Claim]]],
        room: dict[int, int],
        run: _Run,
        group_index: int,
        count: int,
        touched: dict[int, Claim],
    ) -> int:
        """Whole rounds of a maxSkew-1 spread over its own pods at once; returns the pods placed.

        With every domain level, the next pods go one to each domain in turn, and each domain's
        pod goes to the claim of its bucket with the fewest pods: what one domain takes does not
        change where another's go. So while no running node can take a pod, no claim with room is
        still uncommitted (open to every domain), and every domain's claims have room for them, R
        rounds are R pods per domain, handed out in each bucket fewest-pods-first (`fewest_first`),
        as one pod at a time would."""
        domains = sorted(own_spread.per_domain)
        if (_ANY,) in buckets and any(self._live(entry, room) for entry in buckets[(_ANY,)]):
            return 0
        # One entry per claim: its latest, with room left.
        live = {
            domain: list({entry[1]: entry for entry in buckets.get((domain,), ()) if self._live(entry, room)}.values())
            for domain in domains
        }
        rounds = min([count // len(domains), *(sum(room[index] for _, index, _ in live[d]) for d in domains)])
        if rounds < 1:
            return 0
        workload = run.group.workload
        for domain in domains:
            claims = {index: claim for _, index, claim in live[domain]}
            taken = fewest_first([(held, index, room[index]) for held, index, _ in live[domain]], rounds)
            for index, take in taken.items():
                claim = claims[index]
                self._add(claim, run, group_index, take)
                self.domains.record_claim(self.counts, workload, claim, take)
                room[index] -= take
                touched[index] = claim
            heap = [(claim.pod_count, index, claim) for index, claim in claims.items() if room[index] > 0]
            heapq.heapify(heap)
            buckets[(domain,)] = heap
            own_spread.add(domain, rounds)
        return rounds * len(domains)

    @staticmethod
    def _live(entry: tuple[int, int, Claim], room: Mapping[int, int]) -> bool:
        """Whether a bucket's entry is its claim's latest, with room left (older ones are skipped)."""
        pod_count, index, claim = entry
        return room.get(index, 0) > 0 and pod_count == claim.pod_count

    def _commit(
        self, claim: Claim, run: _Run, valid: Valid, keys: tuple[str, ...], room: dict[int, int], just_opened: bool
    ) -> bool:
        """Commit the claim, per key it is not committed on, to a valid domain (the fewest pods of the
        group's spread on the key first); False, the claim as it was, when no valid domain leaves room
        for the pod. Where offerings differ, a zone or capacity type is one where some type of the
        claim is offered and holds the pod (a claim just opened for the pod always gets one), and the
        claim then keeps only the types offered there."""
        before: _Snapshot | None = None
        narrowed = False
        for key in keys:
            values = self.domains.claim_values(claim, key)
            if values is not None and len(values) == 1:
                continue  # committed already, to a domain its bucket showed valid
            options = self.domains.claim_options(
                claim, key, run.group, self._matching(claim.candidates, run), run.requests
            )
            options = valid[key] if options is None else options & valid[key]
            offered = self.table.partial and key in (ZONE, CAPACITY_TYPE)
            if offered and options:
                # Its types with room for the pod may be offered only in domains the topology rules out.
                options = self._offered_with_room(claim, run, key, options, just_opened)
            if not options:
                self._restore(claim, before)
                room[claim.index] = 0
                return False
            if before is None:
                before = (claim.zones, claim.capacity_types, claim.candidates, claim.headroom, dict(claim.labels))
            self.domains.commit(claim, key, commit_domain(run.group, key, options, self.counts))
            if offered:
                offer = self.table.offer_mask(claim.zones, claim.capacity_types)
                set_candidates(self.table, claim, apply_mask(claim.candidates, offer))
            narrowed = narrowed or offered or key in self.domains.instance_keys
        if narrowed:
            left = min(
                self._room_in_claim(claim, run),
                hostname_cap(run.group, claim.workloads, claim.ports, self.inverse, self.placed),
            )
            if left < 1 and not just_opened:
                # Not committed after all: the claim keeps its domains for other pods.
                self._restore(claim, before)
                room[claim.index] = 0
                return False
            room[claim.index] = max(min(room[claim.index], left), 1)
        return True

    @staticmethod
    def _restore(claim: Claim, before: _Snapshot | None) -> None:
        """Undo `_commit`'s narrowing of the claim (`before`: what it had; None: nothing was narrowed)."""
        if before is not None:
            claim.zones, claim.capacity_types, claim.candidates, claim.headroom, claim.labels = before

    def _offered_with_room(
        self, claim: Claim, run: _Run, key: str, options: frozenset[str], opener: bool
    ) -> frozenset[str]:
        """The zones (key ZONE) or capacity types among `options` where some type of the claim is
        offered and holds one more pod of the run (keeping minValues). A claim just opened for the
        pod always gets one: its types all fit the pod and are offered in one of its zones and
        capacity types, though minValues may not hold in one zone."""
        candidates = self._matching(claim.candidates, run)
        by_option = {}
        for option in sorted(options):
            one = frozenset({option})
            mask = (
                self.table.offer_mask(one, claim.capacity_types)
                if key == ZONE
                else self.table.offer_mask(claim.zones, one)
            )
            by_option[option] = apply_mask(candidates, mask)
        found = frozenset(
            option
            for option, rows in by_option.items()
            if most_pods(self.table, claim.pool, rows, claim.requests, run.requests) > 0
        )
        if found or not opener:
            return found
        return frozenset(option for option, rows in by_option.items() if len(rows))

    @staticmethod
    def _lead(buckets: Mapping[Bucket, list[tuple[int, int, Claim]]], best: Claim) -> int:
        heap = buckets.get(())
        if not heap:
            return 2**62
        runner_up = heap[0]
        return max(runner_up[0] - best.pod_count + (1 if best.index < runner_up[1] else 0), 1)

    def _fits_valid(self, claim: Claim, valid: Valid, keys: tuple[str, ...], run: _Run) -> bool:
        """Whether an uncommitted claim can still reach a valid domain on every key."""
        for key in keys:
            options = self.domains.claim_options(
                claim, key, run.group, self._matching(claim.candidates, run), run.requests
            )
            if options is not None and not (options & valid[key]):
                return False
        return True

    def _best_claim(
        self,
        buckets: dict[Bucket, list[tuple[int, int, Claim]]],
        room: Mapping[int, int],
        valid: Valid | None,
        run: _Run,
        keys: tuple[str, ...],
    ) -> Claim | None:
        """The claim with the fewest pods (then the oldest) that may take the next pod."""
        best = None
        best_key = None
        for name, heap in buckets.items():
            if valid is not None and not _bucket_valid(name, keys, valid):
                continue
            held = []
            while heap:
                pod_count, index, claim = heap[0]
                # A claim that took a pod since it was pushed is in the heap of its bucket again.
                if room.get(index, 0) <= 0 or pod_count != claim.pod_count:
                    heapq.heappop(heap)
                    continue
                if valid is not None and _ANY in name and not self._fits_valid(claim, valid, keys, run):
                    held.append(heapq.heappop(heap))
                    continue
                break
            if heap:
                head = heap[0]
                if best_key is None or (head[0], head[1]) < best_key:
                    best, best_key = head[2], (head[0], head[1])
            for entry in held:
                heapq.heappush(heap, entry)
        return best

    def _place_careful(self, run: _Run, stamp: Stamp) -> None:
        for group_index, count in run.segments:
            left = self._place_constrained(run, stamp, group_index, count)
            group = self.groups[group_index]
            while left > 0 and group.fallback is not None:
                self.groups.append(replace(group.fallback, count=left))
                fallback_index = len(self.groups) - 1
                group = self.groups[fallback_index]
                self.relaxed.setdefault(group.workload, [])
                for step in group.relaxed:
                    if step not in self.relaxed[group.workload]:
                        self.relaxed[group.workload].append(step)
                relaxed_run = self._run_for(group)
                relaxed_run.segments.append((fallback_index, left))
                left = self._place_constrained(relaxed_run, ("relaxed", fallback_index), fallback_index, left)
            if left > 0:
                self._add_pending(group_index, left, self.reason)
        self._rebuild_heap()

    def _rebuild_heap(self) -> None:
        self.aside = []
        self.heap = [(c.pod_count, c.index, c) for c in self.claims if c.headroom[0] >= 0]
        heapq.heapify(self.heap)

    def _add_pending(self, group_index: int, count: int, reason: str | None) -> None:
        workload = self.groups[group_index].workload
        self.pending.append(PendingPods(workload, count, reason or "no node could take the pod"))
        self.failed.append((group_index, count))

    def _retry_failed(self) -> None:
        """Karpenter's queue: pods that failed go to the back and are tried again, with their soft
        constraints back, while a round places any of them (pod affinity to pods scheduled later)."""
        round_number = 0
        while self.failed:
            round_number += 1
            failed, self.failed, self.pending = self.failed, [], []
            before = sum(count for _, count in failed)
            self._rebuild_heap()
            for position, (group_index, count) in enumerate(failed):
                run = self._run_for(self.groups[group_index])
                run.segments.append((group_index, count))
                stamp = ("retry", round_number, position)
                if self._careful(run.group):
                    self._place_careful(run, stamp)
                else:
                    self._place_run(run, stamp, NOTHING)
            if sum(count for _, count in self.failed) >= before:
                break

    # -- results ---------------------------------------------------------------------------

    def _by_workload(self, placed: Mapping[int, int]) -> Mapping[str, int]:
        counts: dict[str, int] = {}
        for group_index, count in sorted(placed.items()):
            workload = self.groups[group_index].workload
            counts[workload] = counts.get(workload, 0) + count
        return MappingProxyType(counts)

    def _running_result(self, index: int) -> PlacedNode:
        node = self.running[index]
        placed = self.running_placed[index]
        pod_requests = sum((self.groups[g].requests.scaled(count) for g, count in placed.items()), Resources())
        return PlacedNode(
            name=node.name,
            instance_type=node.option.name,
            capacity_type=node.capacity_type,
            price=self._running_price(node.option, node.capacity_type, node.zone),
            capacity=node.option.capacity,
            allocatable=node.option.allocatable,
            reserved=node.requested,
            pod_requests=pod_requests,
            pods=self._by_workload(placed),
            zones=(node.zone,) if node.zone else (),
            options=1,
            existing=True,
            in_node_pool=node.in_node_pool,
            node_pool=node.node_pool or self.primary,
            labels=node.labels,
        )

    @staticmethod
    def _running_price(option: NodeOption, capacity_type: str, zone: str | None) -> float:
        """What a running node costs: its offering in its zone when known, else its type's price."""
        found = option.offered_price(capacity_type, None if zone is None else (zone,))
        return found if found is not None else option.price_for(capacity_type)

    def run(self) -> ProvisioningResult:
        runs = self._runs()
        smallest_later = [_NEVER] * (len(runs) + 1)
        for index in range(len(runs) - 1, -1, -1):
            requests = runs[index].requests
            later = smallest_later[index + 1]
            smallest_later[index] = (
                min(requests[0], later[0]),
                min(requests[1], later[1]),
                min(requests[2], later[2]),
                min(requests[3], later[3]),
            )
        for stamp, run in enumerate(runs):
            if self._careful(run.group):
                self._place_careful(run, stamp)
            else:
                self._place_run(run, stamp, smallest_later[stamp + 1])
        self._retry_failed()
        idle = self.scenario.idle_running
        nodes = [self._running_result(i) for i in range(len(self.running)) if idle or self.running_placed[i]]
        nodes += [
            launch(
                self.table,
                claim,
                self._by_workload(claim.placed),
                self.pools[claim.pool].name,
                self.domains.launched_labels(claim),
            )
            for claim in self.claims
        ]
        limits = self.limits
        pool_remaining = {
            pool.name: MappingProxyType(
                {key: int(value) for key, value in zip(limits.keys[i], limits.remaining[i], strict=False)}
            )
            for i, pool in enumerate(self.pools)
        }
        return ProvisioningResult(
            nodes=tuple(nodes),
            pending=tuple(self.pending),
            limits=MappingProxyType(dict(self.pools[0].limits)),
            remaining=pool_remaining[self.primary],
            limit_demand=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.demand[0], strict=True)}
            ),
            limit_consumed=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.used[0] + limits.reserved[0], strict=True)}
            ),
            reserved=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.reserved[0], strict=False)}
            ),
            primary_pool=self.primary,
            pool_remaining=MappingProxyType(pool_remaining),
            relaxed=MappingProxyType({w: tuple(steps) for w, steps in self.relaxed.items()}),
            placements=self._placements(),
        )

    def _placements(self) -> Mapping[str, Mapping[Placement, int]]:
        """Per workload, the pods this batch placed, by NodePool and soft constraints relaxed."""
        found: dict[str, dict[Placement, int]] = {}

        def add(where: str, placed: Mapping[int, int]) -> None:
            for group_index, count in placed.items():
                group = self.groups[group_index]
                by_place = found.setdefault(group.workload, {})
                key = (where, group.relaxed)
                by_place[key] = by_place.get(key, 0) + count

        for node, placed in zip(self.running, self.running_placed, strict=True):
            add((node.node_pool or self.primary) if node.in_node_pool else OUTSIDE_NODE_POOLS, placed)
        for claim in self.claims:
            add(self.pools[claim.pool].name, claim.placed)
        return MappingProxyType(
            {workload: MappingProxyType(dict(sorted(by_place.items()))) for workload, by_place in sorted(found.items())}
        )


class _FirstRunning:
    """The first running node (in order) that can take a pod of a run, per pass.

    While a pass places one group's pods, a node that cannot take one never can again unless the
    group needs a pod it selects on the node (hostname pod affinity): room, host ports, spread and
    anti-affinity only shrink. So each set of domains keeps a cursor past the nodes already found
    full, and a pass costs the pods plus the nodes instead of their product.
    """

    def __init__(self, simulator: Simulator, run: _Run, keys: tuple[str, ...]):
        self.simulator = simulator
        self.run = run
        self.monotone = not any(rule.kind == AFFINITY and rule.key == HOSTNAME for rule in run.group.topology)
        self.keys = keys
        self.nodes = dict(simulator.domains.running_by_domains(keys))
        excluders = hostname_excluders(run.group, simulator.inverse) if self.monotone else frozenset()
        if excluders:
            # Nodes holding a pod the group keeps away from stay closed to it for the whole pass;
            # left out at once, so that a fleet of one pod per node is not weighed node by node.
            workloads = simulator.running_workloads
            self.nodes = {
                domains: kept
                for domains, indices in self.nodes.items()
                if (kept := [i for i in indices if not any(workloads[i].get(w) for w in excluders)])
            }
        self.cursor = {domains: 0 for domains in self.nodes}

    def find(self, valid: Valid | None) -> tuple[int | None, int]:
        """(node index, pods it can take), or (None, 0)."""
        fit_of = self.simulator._running_fit
        if not self.monotone:
            for index in range(len(self.simulator.running)):
                fit = fit_of(index, self.run, valid)
                if fit > 0:
                    return index, fit
            return None, 0
        best: tuple[int | None, int] = (None, 0)
        exhausted = []
        for domains, indices in self.nodes.items():
            if valid is not None and any(
                domain not in valid[key] for key, domain in zip(self.keys, domains, strict=True)
            ):
                continue
            cursor = self.cursor[domains]
            while cursor < len(indices):
                fit = fit_of(indices[cursor], self.run, valid)
                if fit > 0:
                    if best[0] is None or indices[cursor] < best[0]:
                        best = (indices[cursor], fit)
                    break
                cursor += 1
            self.cursor[domains] = cursor
            if cursor == len(indices):
                exhausted.append(domains)
        # Nodes past the cursor never take a pod of this pass again: their domains are not looked at.
        for domains in exhausted:
            del self.nodes[domains]
        return best
