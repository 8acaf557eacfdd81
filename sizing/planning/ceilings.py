"""The planner's ceilings on NodePools and on topology, checked before anything is simulated.

The ceilings on workloads, pods and existing nodes are in `sizing.kube.workloads`; these are the
ones that need the NodePools (docs/sizing-input.md, "Ceilings"; docs/benchmarks.md, "Ceilings"):

- a NodePool holds at most `MAX_NODE_POOL_REQUIREMENTS` requirements and `MAX_NODE_POOL_LABELS`
  template labels, the bounds Karpenter v1's NodePool CRD sets (`maxItems: 100`,
  `maxProperties: 100`): Karpenter's API refuses more, and every pod is matched against them;
- pods whose topology (a spread, a pod affinity or anti-affinity) counts them by a key other than
  `kubernetes.io/hostname` cost the simulation about 40 µs per pod and domain of that key, so the
  pods at peak of each such workload times the domains of its keys may add up to at most
  `MAX_TOPOLOGY_POD_DOMAINS`. A zone spread of 100,000 pods over the zones of any region stays
  below it; a spread over thousands of values of a custom label does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.simulation.model import CAPACITY_TYPE, HOSTNAME, ZONE, PodGroup
from sizing.kube.workloads import Workload
from sizing.planning.pod_groups import PoolView

ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_NODE_POOL_REQUIREMENTS = 100
MAX_NODE_POOL_LABELS = 100
MAX_TOPOLOGY_POD_DOMAINS = 1_000_000


def check_node_pool(name: str, requirements: Sequence[Any], labels: Mapping[str, str]) -> None:
    """Refuse a NodePool with more requirements or template labels than Karpenter's API accepts."""
    if len(requirements) > MAX_NODE_POOL_REQUIREMENTS:
        raise SizingInputError(
            f"{name}: {len(requirements):,} requirements, more than {MAX_NODE_POOL_REQUIREMENTS} (Karpenter's "
            "NodePool accepts at most 100 in spec.template.spec.requirements)"
        )
    if len(labels) > MAX_NODE_POOL_LABELS:
        raise SizingInputError(
            f"{name}: {len(labels):,} template labels, more than {MAX_NODE_POOL_LABELS} (Karpenter's NodePool "
            "accepts at most 100 in spec.template.metadata.labels)"
        )


def _keys(group: PodGroup) -> set[str]:
    """The keys other than hostname the group's topology counts by, relaxed variants included."""
    keys: set[str] = set()
    current: PodGroup | None = group
    while current is not None:
        keys.update(rule.key for rule in current.topology if rule.key != HOSTNAME)
        current = current.fallback
    return keys


def topology_domains(key: str, views: Sequence[PoolView], running_labels: Iterable[Mapping[str, str]]) -> int:
    """How many domains `key` has ("zone" for the zone label, as topology rules name it): the values
    the NodePools offer it and the running nodes carry."""
    values: set[str] = set()
    for view in views:
        if key == ZONE:
            values.update(view.zones or ())
        elif key == CAPACITY_TYPE:
            values.update(view.capacity_types)
        else:
            values.update(instance.labels().get(key, "") for instance in view.instances)
            values.update(view.custom_values(key))
            if key in view.labels:
                values.add(view.labels[key])
    label = ZONE_LABEL if key == ZONE else key
    values.update(labels[label] for labels in running_labels if label in labels)
    values.discard("")
    return len(values)


def check_topology(
    workloads: Sequence[Workload],
    groups: Sequence[PodGroup],
    views: Sequence[PoolView],
    running_labels: Sequence[Mapping[str, str]],
) -> None:
    """Refuse topology whose pods times domains pass `MAX_TOPOLOGY_POD_DOMAINS`, naming the largest."""
    counts: dict[str, int] = {}
    weighed = []
    for workload, group in zip(workloads, groups, strict=True):
        keys = sorted(_keys(group))
        if not keys:
            continue
        for key in keys:
            if key not in counts:
                counts[key] = topology_domains(key, views, running_labels)
        domains = sum(counts[key] for key in keys)
        weighed.append((workload.peak_pods * domains, workload, keys))
    total = sum(weight for weight, _, _ in weighed)
    if total <= MAX_TOPOLOGY_POD_DOMAINS:
        return
    largest = sorted(weighed, key=lambda item: (-item[0], item[1].name))[:3]
    named = "; ".join(
        f"{workload.name!r}: {workload.peak_pods:,} pods over "
        + ", ".join(f"{counts[key]:,} values of {key}" for key in keys)
        for _, workload, keys in largest
    )
    raise SizingInputError(
        f"topology counts {total:,} pods times domains ({named}), more than {MAX_TOPOLOGY_POD_DOMAINS:,} (the "
        "planner's ceiling: each pod placed by a spread or pod affinity weighs every domain of its key, about "
        "40 µs each); spread over a key with fewer values, or plan fewer pods"
    )
