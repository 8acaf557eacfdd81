"""The nodes running before the batch (Karpenter's `existingnode.go`): the room each has left, which
pods of a run it may take, and the first of them, in order, that takes the next pod.

Running nodes come first: a pod goes to a running node that can take it before any new NodeClaim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from sizing.karpenter.simulation.domains import Domains
from sizing.karpenter.simulation.model import AFFINITY, HOSTNAME, NodeOption, PlacedNode, PodGroup, RunningNode
from sizing.karpenter.simulation.queue import PodRun, is_careful, pods_by_workload
from sizing.karpenter.simulation.state import DIMENSIONS, TopologyCounts, Valid
from sizing.karpenter.simulation.topology import Inverse, hostname_cap, hostname_excluders
from sizing.kube.resources import Resources


class ExistingNodes:
    """The batch's running nodes, the room left on each and the pods the batch placed there."""

    def __init__(
        self,
        running: Sequence[RunningNode],
        domains: Domains,
        counts: TopologyCounts,
        inverse: Inverse,
        placed: dict[str, int],
    ):
        self.nodes = list(running)
        self.domains = domains
        self.counts = counts
        self.inverse = inverse
        # Pods placed per workload in the batch so far, new NodeClaims included (shared with them).
        self.placed = placed
        self.free = [
            [
                node.option.allocatable.cpu - node.requested.cpu,
                node.option.allocatable.memory - node.requested.memory,
                node.option.allocatable.pods - node.requested.pods,
                node.option.allocatable.ephemeral_storage - node.requested.ephemeral_storage,
            ]
            for node in self.nodes
        ]
        # The same, as one array: first fit over thousands of running nodes is one vectorised pass.
        self.free_array = np.array(self.free, dtype=np.int64).reshape(-1, DIMENSIONS)
        # Per node, the pods this batch placed there: {pod group index: pods}.
        self.placed_groups: list[dict[int, int]] = [{} for _ in self.nodes]
        # The nodes' own pods and ports, copied only when this batch adds to them (most nodes it does not touch).
        self.workloads: list[Mapping[str, int]] = [node.pods for node in self.nodes]
        self.ports: list[AbstractSet[tuple[str, int]]] = [node.host_ports for node in self.nodes]
        for node in self.nodes:
            # Pods already bound count in topology as Karpenter's cluster state counts them.
            for workload, count in sorted(node.pods.items()):
                placed[workload] = placed.get(workload, 0) + count
                domains.record_node(counts, workload, node, count)

    def fit(self, index: int, run: PodRun, valid: Valid | None) -> int:
        free = self.free[index]
        requests = run.requests
        if free[0] < requests[0] or free[1] < requests[1] or free[2] < requests[2] or free[3] < requests[3]:
            return 0  # the common case once a node is full, so it is checked first
        node = self.nodes[index]
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
        free = self.free[index]
        if min(free) < 0:
            return 0
        requests = run.requests
        fit = min(free[d] // requests[d] for d in range(DIMENSIONS) if requests[d] > 0)
        if fit > 0 and is_careful(group, self.inverse):
            fit = min(
                fit,
                hostname_cap(group, self.workloads[index], self.ports[index], self.inverse, self.placed),
            )
        return max(fit, 0)

    def place(self, index: int, run: PodRun, group_index: int, taken: int) -> None:
        free = self.free[index]
        for d in range(DIMENSIONS):
            free[d] -= taken * run.requests[d]
        self.free_array[index] = free
        placed = self.placed_groups[index]
        placed[group_index] = placed.get(group_index, 0) + taken
        workloads = dict(self.workloads[index])
        workloads[run.group.workload] = workloads.get(run.group.workload, 0) + taken
        self.workloads[index] = workloads
        self.placed[run.group.workload] = self.placed.get(run.group.workload, 0) + taken
        if run.group.host_ports:
            self.ports[index] = self.ports[index] | run.group.host_ports
        self.domains.record_node(self.counts, run.group.workload, self.nodes[index], taken)

    def fill(self, run: PodRun, group_index: int, count: int) -> int:
        """First fit over the running nodes; returns the pods left over."""
        if self.fits_anywhere(run.group):
            # No rule of the pod tells nodes apart: how many pods each takes is free room over the
            # requests, for every node at once, and a node takes pods at most once per run.
            requests = run.requests
            free = self.free_array
            dims = [d for d in range(DIMENSIONS) if requests[d] > 0]
            room = free[:, dims[0]] // requests[dims[0]]
            for d in dims[1:]:
                room = np.minimum(room, free[:, d] // requests[d])
            fits = np.where((free >= 0).all(axis=1), room, 0)
            for index in np.flatnonzero(fits > 0).tolist():
                taken = min(int(fits[index]), count)
                self.place(index, run, group_index, taken)
                count -= taken
                if count == 0:
                    break
            return count
        for index in range(len(self.nodes)):
            if count == 0:
                break
            fit = self.fit(index, run, None)
            if fit > 0:
                taken = min(fit, count)
                self.place(index, run, group_index, taken)
                count -= taken
        return count

    def fits_anywhere(self, group: PodGroup) -> bool:
        """Whether only room decides which running node takes the group's pods."""
        return (
            group.allowed_types is None
            and group.zones is None
            and group.capacity_types is None
            and group.pools is None
            and group.nodes is None
            and not group.labels
            and not group.host_ports
            and not is_careful(group, self.inverse)
        )

    def result(self, index: int, groups: Sequence[PodGroup], primary: str) -> PlacedNode:
        """The running node as the batch leaves it, with the pods it placed there."""
        node = self.nodes[index]
        placed = self.placed_groups[index]
        pod_requests = sum((groups[g].requests.scaled(count) for g, count in placed.items()), Resources())
        return PlacedNode(
            name=node.name,
            instance_type=node.option.name,
            capacity_type=node.capacity_type,
            price=self._price(node.option, node.capacity_type, node.zone),
            capacity=node.option.capacity,
            allocatable=node.option.allocatable,
            reserved=node.requested,
            pod_requests=pod_requests,
            pods=pods_by_workload(groups, placed),
            zones=(node.zone,) if node.zone else (),
            options=1,
            existing=True,
            in_node_pool=node.in_node_pool,
            node_pool=node.node_pool or primary,
            labels=node.labels,
        )

    @staticmethod
    def _price(option: NodeOption, capacity_type: str, zone: str | None) -> float:
        """What a running node costs: its offering in its zone when known, else its type's price."""
        found = option.offered_price(capacity_type, None if zone is None else (zone,))
        return found if found is not None else option.price_for(capacity_type)


class FirstRunning:
    """The first running node (in order) that can take a pod of a run, per pass.

    While a pass places one group's pods, a node that cannot take one never can again unless the
    group needs a pod it selects on the node (hostname pod affinity): room, host ports, spread and
    anti-affinity only shrink. So each set of domains keeps a cursor past the nodes already found
    full, and a pass costs the pods plus the nodes instead of their product.
    """

    def __init__(self, existing: ExistingNodes, run: PodRun, keys: tuple[str, ...]):
        self.existing = existing
        self.run = run
        self.monotone = not any(rule.kind == AFFINITY and rule.key == HOSTNAME for rule in run.group.topology)
        self.keys = keys
        self.nodes = dict(existing.domains.running_by_domains(keys))
        excluders = hostname_excluders(run.group, existing.inverse) if self.monotone else frozenset()
        if excluders:
            # Nodes holding a pod the group keeps away from stay closed to it for the whole pass;
            # left out at once, so that a fleet of one pod per node is not weighed node by node.
            workloads = existing.workloads
            self.nodes = {
                domains: kept
                for domains, indices in self.nodes.items()
                if (kept := [i for i in indices if not any(workloads[i].get(w) for w in excluders)])
            }
        self.cursor = {domains: 0 for domains in self.nodes}

    def find(self, valid: Valid | None) -> tuple[int | None, int]:
        """(node index, pods it can take), or (None, 0)."""
        fit_of = self.existing.fit
        if not self.monotone:
            for index in range(len(self.existing.nodes)):
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
