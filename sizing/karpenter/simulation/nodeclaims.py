"""The NodeClaims a batch opens, in flight until it ends (Karpenter's `nodeclaim.go`): opening
one from the first NodePool (by weight) that can launch it within its limits, how many more pods
of a run one can take, and narrowing its instance types as pods join it.

Claims opened alike and holding the same pods narrow alike (a fleet of hundreds of one type and
content), so the last few thousand narrowings, and the pods that fit candidate sets, are kept
by what they depend on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sizing.karpenter.labels import LabelRequirement, compatible
from sizing.karpenter.simulation.domains import Domains
from sizing.karpenter.simulation.memo import IdentityMemo
from sizing.karpenter.simulation.model import CAPACITY_TYPE, ZONE, NodePoolModel, PodGroup
from sizing.karpenter.simulation.nodes import keeps_min_values, most_pods, set_candidates
from sizing.karpenter.simulation.queue import PodRun, Stamp
from sizing.karpenter.simulation.state import (
    Candidates,
    Claim,
    LimitsLeft,
    TypeTable,
    Valid,
    Vector,
    apply_mask,
    weight_order,
)

# Narrowed claims, and pods that fit candidate sets, remembered for claims that narrow alike.
NARROWINGS_KEPT = 4096


@dataclass
class ClaimTemplate:
    """What a new NodeClaim for one placement attempt starts from in one NodePool."""

    fresh: np.ndarray
    largest: np.ndarray | None = None
    largest_limited: np.ndarray | None = None
    start: tuple[Candidates, Vector] | None = None


def labels_fit(labels: Mapping[str, LabelRequirement], group: PodGroup) -> bool:
    """Whether a NodeClaim (or NodePool) whose labels must meet `labels` can take the group's pods."""
    for requirement in group.labels:
        existing = labels.get(requirement.key)
        if existing is not None and not compatible(existing, requirement):
            return False
    return True


class NodeClaims:
    """The batch's new NodeClaims, in the order they opened, and what opening them takes."""

    def __init__(
        self,
        pools: Sequence[NodePoolModel],
        table: TypeTable,
        limits: LimitsLeft,
        domains: Domains,
        placed: dict[str, int],
    ):
        self.pools = pools
        self.order = weight_order(pools)
        self.table = table
        self.limits = limits
        self.domains = domains
        # Pods placed per workload in the batch so far, running nodes included (shared with them).
        self.placed = placed
        self.claims: list[Claim] = []
        self.pool_capacity_types = [frozenset(pool.capacity_types) for pool in pools]
        self.templates: dict[tuple[object, ...], ClaimTemplate] = {}
        self._narrowings: IdentityMemo[tuple[Candidates, Vector]] = IdentityMemo(NARROWINGS_KEPT)
        self._most: IdentityMemo[int] = IdentityMemo(NARROWINGS_KEPT)

    def compatible(self, zones: frozenset[str] | None, capacity_types: frozenset[str], run: PodRun) -> bool:
        if run.zones is not None and zones is not None and not (zones & run.zones):
            return False
        return not (run.capacity_types is not None and not capacity_types & run.capacity_types)

    def pool_allowed(self, pool: int, run: PodRun) -> bool:
        return run.group.pools is None or self.pools[pool].name in run.group.pools

    def matching(self, candidates: Candidates, run: PodRun) -> Candidates:
        """The candidates a pod of this run may use."""
        if run.mask is None or run.mask_list is None:
            return candidates
        if isinstance(candidates, tuple):
            mask_list = run.mask_list
            return tuple(t for t in candidates if mask_list[t])
        selected: np.ndarray = candidates[run.mask[candidates]]
        return selected

    def room_in(self, claim: Claim, run: PodRun) -> int:
        requests = run.requests
        headroom = claim.headroom
        if (
            headroom[0] < requests[0]
            or headroom[1] < requests[1]
            or headroom[2] < requests[2]
            or headroom[3] < requests[3]
        ):
            return 0
        if not self.pool_allowed(claim.pool, run) or not self.compatible(claim.zones, claim.capacity_types, run):
            return 0
        if run.group.labels and not labels_fit(claim.labels, run.group):
            return 0
        candidates = self.matching(claim.candidates, run)
        if self.table.partial and (run.zones is not None or run.capacity_types is not None):
            zones, kinds = self.narrowed(claim, run)
            candidates = apply_mask(candidates, self.table.offer_mask(zones, kinds))
        return self.most_pods(claim.pool, candidates, claim.requests, requests)

    def most_pods(self, pool: int, candidates: Candidates, used: Sequence[int], requests: Vector) -> int:
        """`most_pods`, remembered for the last few thousand candidate sets: claims that narrow
        alike share theirs (see `narrow`), so a fleet of one type and content asks once."""
        values = (pool, *used, *requests)
        found = self._most.get((candidates,), values)
        if found is None:
            found = most_pods(self.table, pool, candidates, used, requests)
            self._most.put((candidates,), values, found)
        return found

    @staticmethod
    def narrowed(claim: Claim, run: PodRun) -> tuple[frozenset[str] | None, frozenset[str]]:
        """The claim's zones and capacity types once it takes a pod of the run."""
        zones = claim.zones
        if run.zones is not None:
            zones = run.zones if zones is None else zones & run.zones
        kinds = claim.capacity_types if run.capacity_types is None else claim.capacity_types & run.capacity_types
        return zones, kinds

    def narrow(self, claim: Claim, run: PodRun) -> None:
        """Keep the claim's types that hold its pods and match the run's constraints and, where
        offerings differ, that are offered in the zones and capacity types left to it.

        Claims opened alike and holding the same pods narrow alike (a fleet of hundreds of one
        type and content), so the last few thousand outcomes are kept by what they depend on.
        """
        objects = (claim.candidates, run.mask)
        zones, kinds = self.narrowed(claim, run)
        used = claim.requests
        values = (zones, kinds, *used)
        claim.zones, claim.capacity_types = zones, kinds
        known = self._narrowings.get(objects, values)
        if known is not None:
            claim.candidates, claim.headroom = known
            return
        candidates = self.matching(claim.candidates, run)
        if self.table.partial:
            candidates = apply_mask(candidates, self.table.offer_mask(zones, kinds))
        set_candidates(self.table, claim, candidates)
        self._narrowings.put(objects, values, (claim.candidates, claim.headroom))

    def fresh_candidates(self, run: PodRun, pool: int, offered: np.ndarray | None = None) -> np.ndarray:
        """Rows of `pool` a new NodeClaim for this run could use, before the limits filter;
        offered: the rows offered in the claim's zones and capacity types (None: all)."""
        rows = self.table.pool_rows[pool]
        if not self.pool_allowed(pool, run) or not self.compatible(
            self.pools[pool].zones, self.pool_capacity_types[pool], run
        ):
            return rows[:0]
        if run.group.labels and not labels_fit(self.domains.pool_labels[pool], run.group):
            return rows[:0]
        fits = (self.table.room[rows] >= np.array(run.requests, dtype=np.int64)).all(axis=1)
        if run.mask is not None:
            fits &= run.mask[rows]
        if offered is not None:
            fits &= offered[rows]
        return rows[fits]

    def open(self, run: PodRun, stamp: Stamp, wanted: Valid | None = None) -> tuple[Claim, None] | tuple[None, str]:
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
                template = self.templates[key] = ClaimTemplate(self.fresh_candidates(run, pool, mask))
            fresh = template.fresh
            if not len(fresh):
                if self.pool_allowed(pool, run):
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
        self, pool: int, fresh: np.ndarray, template: ClaimTemplate, wanted: Valid
    ) -> tuple[np.ndarray, ClaimTemplate]:
        """The fresh rows whose instance-type labels are wanted (a template of their own when some go)."""
        keep = np.ones(len(fresh), dtype=bool)
        for key, values in wanted.items():
            if key in self.domains.instance_keys and key not in (ZONE, CAPACITY_TYPE):
                keep &= np.array([value in values for value in self.domains.column(key)[fresh]], dtype=bool)
        if keep.all():
            return fresh, template
        kept = fresh[keep]
        return kept, ClaimTemplate(kept)

    def _no_type_reason(self, run: PodRun, pool: int, zones: frozenset[str] | None = None) -> str:
        ports = self.table.port_mask(run.group.host_ports)
        if ports is not None and not ports[self.table.pool_rows[pool]].any():
            taken = sorted({p for o in self.pools[pool].node_options for p in o.daemon_ports} & run.group.host_ports)
            listed = ", ".join(f"{port}/{protocol}" for protocol, port in taken)
            return f"a DaemonSet on every node of the NodePool binds the pod's host port {listed}"
        if self.table.partial and len(self.fresh_candidates(run, pool)):
            where = f"zone {', '.join(sorted(zones))}" if zones else "any zone"
            return f"no instance type of the NodePool that fits the pod is offered in {where}"
        return "no instance type of the NodePool fits the pod and its node selector"

    def _where(self, pool: int) -> str:
        return f"NodePool {self.pools[pool].name!r}: " if len(self.pools) > 1 else ""

    def _claim_from(self, pool: int, fresh: np.ndarray, template: ClaimTemplate, reasons: list[str]) -> Claim | None:
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

    def add(self, claim: Claim, run: PodRun, group_index: int, take: int) -> None:
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
