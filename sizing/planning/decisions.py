"""What Karpenter decides for each workload in a scenario, apart from the instance types it launches.

Planned limits must not change these decisions. Karpenter treats a soft constraint (a
`ScheduleAnyway` spread, a preferred pod (anti-)affinity or node affinity) as required and relaxes
it only when no NodePool can take the pod, and a NodePool at its limits cannot. So limits that are
too tight do more than leave pods pending: they move pods to another NodePool, or pack pods that
the user asked to keep apart. A scenario keeps its decisions under some limits when, per workload,
as many pods are placed on each NodePool (or running node outside NodePools) with the same soft
constraints relaxed as without limits, and as many stay pending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sizing.karpenter.simulation import Placement, ProvisioningResult
from sizing.karpenter.simulation.model import OUTSIDE_NODE_POOLS


@dataclass(frozen=True)
class WorkloadDecisions:
    """One workload's pods: `placed` by (NodePool, soft constraints relaxed), and `pending`."""

    placed: Mapping[Placement, int] = field(default_factory=dict)
    pending: int = 0

    def on(self, pool: str) -> int:
        return sum(count for (where, _), count in self.placed.items() if where == pool)

    def relaxing(self, constraint: str) -> int:
        return sum(count for (_, relaxed), count in self.placed.items() if constraint in relaxed)

    @property
    def pools(self) -> frozenset[str]:
        return frozenset(where for where, _ in self.placed)

    @property
    def relaxed(self) -> frozenset[str]:
        return frozenset(step for _, steps in self.placed for step in steps)


Decisions = Mapping[str, WorkloadDecisions]


def decisions(result: ProvisioningResult) -> Decisions:
    """Per workload (sorted by name), what the scenario that ended in `result` decided."""
    pending: dict[str, int] = {}
    for group in result.pending:
        pending[group.workload] = pending.get(group.workload, 0) + group.count
    names = sorted(set(result.placements) | set(pending))
    return MappingProxyType(
        {
            name: WorkloadDecisions(
                MappingProxyType(dict(sorted(result.placements.get(name, {}).items()))), pending.get(name, 0)
            )
            for name in names
        }
    )


@dataclass(frozen=True)
class Change:
    """A decision that differs from the one taken without limits, for `pods` pods of `workload`.

    kind: "pending" (more pods left pending), "node-pool" (more pods on `subject`, a NodePool or
    running nodes outside NodePools), "relaxed" (`subject`, a soft constraint, given up for
    more pods) or "other" (placed otherwise, with no more pods pending, moved or relaxed);
    expected: the pods so decided without limits.
    """

    workload: str
    kind: str
    subject: str
    pods: int
    expected: int

    def describe(self) -> str:
        """E.g. "shop/web: 4 more pods on NodePool spot (10 instead of 6)"."""
        counts = f"({self.pods + self.expected} instead of {self.expected})"
        more = f"{self.pods} more pod{'s' if self.pods != 1 else ''}"
        if self.kind == "pending":
            return f"{self.workload}: {more} pending {counts}"
        if self.kind == "node-pool":
            place = self.subject if self.subject == OUTSIDE_NODE_POOLS else f"NodePool {self.subject}"
            return f"{self.workload}: {more} on {place} {counts}"
        if self.kind == "relaxed":
            return f"{self.workload}: {self.subject} given up for {more} {counts}"
        return f"{self.workload}: {self.pods} pods placed otherwise than without limits"


def changes(expected: Decisions, actual: Decisions) -> tuple[Change, ...]:
    """How `actual` departs from `expected`, workload by workload: pods pending, pods moved to
    a NodePool, soft constraints given up. Empty when the decisions are the same."""
    found: list[Change] = []
    empty = WorkloadDecisions()
    for name in sorted(set(expected) | set(actual)):
        before, after = expected.get(name, empty), actual.get(name, empty)
        if dict(before.placed) == dict(after.placed) and before.pending == after.pending:
            continue
        if after.pending > before.pending:
            found.append(Change(name, "pending", "", after.pending - before.pending, before.pending))
        for pool in sorted(before.pools | after.pools):
            if after.on(pool) > before.on(pool):
                found.append(Change(name, "node-pool", pool, after.on(pool) - before.on(pool), before.on(pool)))
        for step in sorted(before.relaxed | after.relaxed):
            if after.relaxing(step) > before.relaxing(step):
                found.append(
                    Change(name, "relaxed", step, after.relaxing(step) - before.relaxing(step), before.relaxing(step))
                )
        if not any(change.workload == name for change in found):
            # Fewer pods pending, moved or relaxed than without limits: still other decisions.
            moved = sum(abs(after.placed.get(key, 0) - count) for key, count in before.placed.items())
            found.append(Change(name, "other", "", moved, 0))
    return tuple(found)


def same(expected: Decisions, actual: Decisions) -> bool:
    """Whether every workload's pods are placed, where and how, as in `expected`."""
    return dict(expected) == dict(actual)
