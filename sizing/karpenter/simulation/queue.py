"""The queue of one batch: its pending pods as runs of pods that schedule alike, in the order
Karpenter's queue hands them to the scheduler (`pkg/controllers/provisioning/scheduling/queue.go`:
largest cpu, then memory, first).

A run is careful (placed one pod at a time where domain counts decide) when its pods have
topology, host ports or a fallback, or another workload's anti-affinity targets them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from sizing.karpenter.simulation.model import PodGroup
from sizing.karpenter.simulation.state import TypeTable, Vector
from sizing.karpenter.simulation.topology import Inverse

# Larger than any request: the smallest request of no run at all.
NEVER = (2**62, 2**62, 2**62, 2**62)
# Identifies one placement attempt (a run, a relaxed retry, a queue retry) so that the NodeClaim
# templates worked out for it are reused within it.
Stamp = int | tuple[str | int, ...]


@dataclass
class PodRun:
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


def is_careful(group: PodGroup, inverse: Inverse) -> bool:
    """Whether the group's pods are placed one at a time (see the module docstring)."""
    return group.constrained or inverse.targets(group.workload) or group.fallback is not None


def run_for(table: TypeTable, group: PodGroup) -> PodRun:
    """A run of the group's pods, with the instance types they may use as a mask of the table's rows."""
    mask = table.mask(group.allowed_types)
    ports = table.port_mask(group.host_ports)
    if ports is not None:
        mask = ports if mask is None else mask & ports
    return PodRun(group, group.requests.vector, mask, None if mask is None else mask.tolist())


def pod_runs(groups: Sequence[PodGroup], table: TypeTable, inverse: Inverse) -> list[PodRun]:
    """The batch's pods in queue order, consecutive groups that schedule alike joined in one run."""
    order = sorted(range(len(groups)), key=lambda i: (-groups[i].requests.cpu, -groups[i].requests.memory, i))
    runs: list[PodRun] = []
    previous_key: tuple[object, ...] | None = None
    for index in order:
        group = groups[index]
        if group.count == 0:
            continue
        key: tuple[object, ...]
        if is_careful(group, inverse):
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
            runs.append(run_for(table, group))
            previous_key = key
        runs[-1].segments.append((index, group.count))
    return runs


def smallest_later(runs: Sequence[PodRun]) -> list[Vector]:
    """Per run, the smallest request (per dimension) of the runs after it; NEVER after the last."""
    smallest = [NEVER] * (len(runs) + 1)
    for index in range(len(runs) - 1, -1, -1):
        requests = runs[index].requests
        later = smallest[index + 1]
        smallest[index] = (
            min(requests[0], later[0]),
            min(requests[1], later[1]),
            min(requests[2], later[2]),
            min(requests[3], later[3]),
        )
    return smallest


def pods_by_workload(groups: Sequence[PodGroup], placed: Mapping[int, int]) -> Mapping[str, int]:
    """Pods per workload of a node's {pod group index: pods}."""
    counts: dict[str, int] = {}
    for group_index, count in sorted(placed.items()):
        workload = groups[group_index].workload
        counts[workload] = counts.get(workload, 0) + count
    return MappingProxyType(counts)
