"""Topology domains beyond hostname: which values of a key a NodePool, a running node or a NodeClaim
offers, and what committing a NodeClaim to one of them means.

Karpenter v1.14 (`topology.go` `buildDomainGroups`) takes a key's domains from the NodePools: the
values their requirements and template labels allow and their instance types carry. So:

- zone: the NodePool's zones; a NodeClaim commits by keeping one zone;
- `karpenter.sh/capacity-type`: the NodePool's capacity types; a NodeClaim commits by keeping one;
- an instance-type label (`kubernetes.io/arch`, `node.kubernetes.io/instance-type`, ...): the values
  the NodePool's instance types carry; a NodeClaim commits by keeping the types with that value;
- a custom label (`example.com/team`): the values a NodePool's `In` requirement or template label
  gives it; a NodeClaim commits by requiring that value, which its node then carries.

Running nodes add the values they carry. A NodeClaim's own domain (what Karpenter records a pod
in) is what its requirements say, not what its remaining instance types happen to share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.simulation.model import CAPACITY_TYPE, ZONE, NodePoolModel, PodGroup, RunningNode
from sizing.karpenter.simulation.nodes import set_candidates
from sizing.karpenter.simulation.state import DIMENSIONS, Candidates, Claim, TopologyCounts, TypeTable, Vector
from sizing.karpenter.simulation.topology import tracked_keys


class Domains:
    """Domain values per key for the NodePools, running nodes and NodeClaims of one simulation."""

    def __init__(
        self,
        table: TypeTable,
        pools: Sequence[NodePoolModel],
        running: Sequence[RunningNode],
        groups: Iterable[PodGroup],
    ):
        self.table = table
        self.pools = list(pools)
        self.running = list(running)
        self.tracked = tracked_keys(groups)
        running_options = {id(node.option): node.option for node in self.running}.values()
        self.instance_keys = table.label_keys | frozenset(key for option in running_options for key in option.labels)
        self._columns: dict[str, np.ndarray] = {}
        self._running_by_domains: dict[tuple[str, ...], Mapping[tuple[str | None, ...], list[int]]] = {}
        # What a new NodeClaim of each NodePool starts from: custom labels always (pods must agree on
        # them), instance-type labels only where some topology counts by them.
        self.pool_labels: list[dict[str, LabelRequirement]] = [
            {
                requirement.key: requirement
                for requirement in pool.labels
                if requirement.key not in self.instance_keys or requirement.key in self.tracked
            }
            for pool in self.pools
        ]

    # -- values ----------------------------------------------------------------------------

    def column(self, key: str) -> np.ndarray:
        """The value of an instance-type label per row of the type table ("" where the type has none)."""
        if key not in self._columns:
            self._columns[key] = np.array([option.labels.get(key, "") for option in self.table.options], dtype=object)
        return self._columns[key]

    def pool_domains(self, pool: int, key: str) -> frozenset[str]:
        model = self.pools[pool]
        if key == ZONE:
            return model.zones or frozenset()
        if key == CAPACITY_TYPE:
            return frozenset(model.capacity_types)
        if key in self.instance_keys:
            values = self.column(key)[self.table.pool_rows[pool]]
            return frozenset(str(value) for value in values if value)
        requirement = self.pool_labels[pool].get(key)
        return (requirement.finite() or frozenset()) if requirement is not None else frozenset()

    def node_value(self, node: RunningNode, key: str) -> str | None:
        if key == ZONE:
            return node.zone
        if key == CAPACITY_TYPE:
            return node.capacity_type
        if key in self.instance_keys:
            return node.option.labels.get(key)
        return node.labels.get(key)

    def group_admits(self, group: PodGroup, key: str, value: str) -> bool:
        """Whether the pod's own requirements allow `value` of `key` (the domains it may count)."""
        if key == ZONE:
            return group.zones is None or value in group.zones
        if key == CAPACITY_TYPE:
            return group.capacity_types is None or value in group.capacity_types
        for requirement in group.labels:
            if requirement.key == key:
                return requirement.has(value)
        return True

    def for_group(self, group: PodGroup, key: str) -> frozenset[str]:
        """The domains of `key` the group's pods can reach: its NodePools' and the running nodes'
        values, within what the pod itself requires."""
        values: set[str] = {value for (value,) in self.running_by_domains((key,)) if value}
        for index, pool in enumerate(self.pools):
            if group.pools is None or pool.name in group.pools:
                values |= self.pool_domains(index, key)
        return frozenset(value for value in values if self.group_admits(group, key, value))

    def running_by_domains(self, keys: tuple[str, ...]) -> Mapping[tuple[str | None, ...], list[int]]:
        """The running nodes' indices, in order, by their value of each of `keys` (None: no value);
        a node's labels do not change within a run, so this is worked out once per keys."""
        found = self._running_by_domains.get(keys)
        if found is None:
            grouped: dict[tuple[str | None, ...], list[int]] = {}
            for index, node in enumerate(self.running):
                grouped.setdefault(tuple(self.node_value(node, key) for key in keys), []).append(index)
            found = self._running_by_domains[keys] = MappingProxyType(grouped)
        return found

    def claim_values(self, claim: Claim, key: str) -> frozenset[str] | None:
        """The domains a NodeClaim's requirements leave for `key` (None: any)."""
        if key == ZONE:
            return claim.zones
        if key == CAPACITY_TYPE:
            return claim.capacity_types
        requirement = claim.labels.get(key)
        return None if requirement is None else requirement.finite()

    def claim_options(
        self, claim: Claim, key: str, group: PodGroup, rows: Candidates, requests: Vector
    ) -> frozenset[str] | None:
        """The domains the next pod could commit the claim to (None: any): its requirements' values,
        for an instance-type label those of its types that still hold the pod (`rows`)."""
        values = self.claim_values(claim, key)
        if key in self.instance_keys and key not in (ZONE, CAPACITY_TYPE):
            used = claim.requests
            fitting = [
                row
                for row in (int(r) for r in rows)
                if all(self.table.room_rows[row][d] - used[d] >= requests[d] for d in range(DIMENSIONS))
            ]
            column = self.column(key)
            carried = frozenset(str(column[row]) for row in fitting if column[row])
            values = carried if values is None else values & carried
        if values is None:
            return None
        return frozenset(value for value in values if self.group_admits(group, key, value))

    # -- commitment ------------------------------------------------------------------------

    def commit(self, claim: Claim, key: str, value: str) -> None:
        """Narrow the claim to `value` of `key`."""
        if key == ZONE:
            claim.zones = frozenset({value})
            return
        if key == CAPACITY_TYPE:
            claim.capacity_types = frozenset({value})
            return
        chosen = LabelRequirement(key, frozenset({value}))
        existing = claim.labels.get(key)
        claim.labels[key] = chosen if existing is None else existing.intersection(chosen)
        if key in self.instance_keys:
            column = self.column(key)
            if isinstance(claim.candidates, np.ndarray):
                kept: Candidates = claim.candidates[column[claim.candidates] == value]
            else:
                kept = tuple(row for row in claim.candidates if column[row] == value)
            set_candidates(self.table, claim, kept)

    def launched_labels(self, claim: Claim) -> Mapping[str, str]:
        """The custom labels the claim's node gets: the one value its requirements allow, or the first."""
        return {
            key: min(requirement.values)
            for key, requirement in sorted(claim.labels.items())
            if key not in self.instance_keys and not requirement.complement and requirement.values
        }

    # -- counting --------------------------------------------------------------------------

    def record_claim(self, counts: TopologyCounts, workload: str, claim: Claim, count: int) -> None:
        for key in self.tracked:
            counts.record(workload, key, self.claim_values(claim, key), count)

    def record_node(self, counts: TopologyCounts, workload: str, node: RunningNode, count: int) -> None:
        for key in self.tracked:
            value = self.node_value(node, key)
            counts.record(workload, key, frozenset({value}) if value else None, count)
