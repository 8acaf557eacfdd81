"""What runs on the NodePool: workloads at peak, DaemonSets and nodes that already exist.

Units: cpu in millicores, memory and ephemeral storage in MiB, pods as a count.

A workload is a Deployment at its HPA maximum. During a rolling update the
Deployment may run `maxSurge` extra pods, so the peak the NodePool must hold
is replicas + surge (Kubernetes rounds a percentage surge up). With the
production advice of `maxSurge: 100%` that is twice the pods.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sizing.errors import SizingInputError
from sizing.kube.resources import Resources
from sizing.kube.scheduling import PodScheduling, Taint, Toleration

MaxSurge = int | str
DEFAULT_MAX_SURGE = "25%"

# The planner's ceilings, checked before anything is simulated (docs/benchmarks.md, "Ceilings"). It
# places every pod, one by one: 100,000 pods at peak plan in about 40 seconds on two cores, and
# Kubernetes itself supports at most 150,000 pods and 5,000 nodes in a cluster. Each distinct
# workload adds groups of its own to every scenario: 1,000 of them sharing 100,000 pods take about
# 40 CPU seconds. Pods that each need a node of their own (required hostname anti-affinity on their
# own labels, or a host port) cost far more, as every scenario launches their nodes over many
# batches and the limit search simulates the scenarios again: 2,000 of them take about 55 CPU
# seconds. The ceilings that need the NodePools are in `sizing.planning.ceilings`.
MAX_REPLICAS = 100_000
MAX_PEAK_PODS = 100_000
MAX_WORKLOADS = 1_000
MAX_EXISTING_NODES = 5_000
MAX_NODE_PER_POD_PODS = 2_000
HOSTNAME_KEY = "kubernetes.io/hostname"
CEILING_WHY = "the planner's ceiling: it simulates every pod, and 100,000 pods take about 40 seconds"
_PERCENT = re.compile(r"^([0-9]+)%$")
SURGE_FORMS = "a pod count (0, 1, 2, ...) or a percentage such as '25%' or '100%'"


def surge_pods(replicas: int, max_surge: MaxSurge, where: str = "maxSurge") -> int:
    """Extra pods a rolling update may create: a count, or ceil(replicas x percent / 100)."""
    if isinstance(max_surge, bool):
        raise SizingInputError(f"{where} must be {SURGE_FORMS}, got {max_surge!r}")
    if isinstance(max_surge, int):
        if max_surge < 0:
            raise SizingInputError(f"{where} must be {SURGE_FORMS}, got {max_surge!r}")
        return max_surge
    if isinstance(max_surge, str):
        text = max_surge.strip()
        if text.isdigit():
            return int(text)
        match = _PERCENT.match(text)
        if match:
            return math.ceil(replicas * int(match.group(1)) / 100)
    raise SizingInputError(f"{where} must be {SURGE_FORMS}, got {max_surge!r}")


def _check_name(kind: str, name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise SizingInputError(f"{kind} name must be a non-empty string, got {name!r}")


def _check_selector(where: str, selector: Mapping[str, str]) -> Mapping[str, str]:
    if not isinstance(selector, Mapping):
        raise SizingInputError(f"{where} must be a mapping of label key to value, got {selector!r}")
    for key, value in selector.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SizingInputError(f"{where} must map label keys to string values, got {key!r}: {value!r}")
    return MappingProxyType(dict(selector))


@dataclass(frozen=True)
class Workload:
    """A Deployment at peak: `replicas` pods (the HPA maxReplicas) plus its rollout surge.

    cpu_millicores / memory_mib: requests of one pod (init containers and
    sidecars already folded in); 0 when the pod requests none of it, which
    Kubernetes and Karpenter schedule as 0 (the pod slot still counts), so the
    plan cannot size that resource for the workload (`unrequested`); max_surge: a pod count or "N%";
    node_selector: label key -> value the pod requires of its node (instance
    labels such as kubernetes.io/arch, topology.kubernetes.io/zone,
    karpenter.sh/capacity-type, or a NodePool template label);
    scheduling: tolerations, node and pod affinity, topology spread, host
    ports and the pod's labels; kind: the object it came from (Deployment,
    StatefulSet, Job); autoscaled: whether an HPA scales it (False: it runs
    `replicas` from the start, and has no HPA ramp); min_replicas and
    scale_up_policies / scale_up_select_policy / scale_up_stabilization_seconds:
    the HPA's minReplicas and `behavior.scaleUp`, kept as read (policies as
    {type, value, periodSeconds}); ephemeral_storage_mib: the pod's
    `ephemeral-storage` request in MiB (0: none; unlike cpu and memory, a pod
    without one is not flagged, as most pods ask for none).
    """

    name: str
    cpu_millicores: int
    memory_mib: int
    replicas: int
    max_surge: MaxSurge = DEFAULT_MAX_SURGE
    node_selector: Mapping[str, str] = field(default_factory=dict)
    scheduling: PodScheduling = PodScheduling()
    kind: str = "Deployment"
    autoscaled: bool = True
    min_replicas: int | None = None
    scale_up_policies: tuple[Mapping[str, Any], ...] = ()
    scale_up_select_policy: str | None = None
    scale_up_stabilization_seconds: int | None = None
    ephemeral_storage_mib: int = 0

    def __post_init__(self) -> None:
        _check_name("workload", self.name)
        where = f"workload {self.name!r}"
        for field_name, unit in (
            ("cpu_millicores", "m cpu"),
            ("memory_mib", "Mi memory"),
            ("ephemeral_storage_mib", "Mi ephemeral-storage"),
        ):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SizingInputError(
                    f"{where} requests {value!r}{unit if isinstance(value, int) else ''}; "
                    "requests must be 0 or more (0: no request, as Kubernetes schedules a container without one)"
                )
        if isinstance(self.replicas, bool) or not isinstance(self.replicas, int) or self.replicas < 1:
            raise SizingInputError(f"{where}: replicas must be a positive integer, got {self.replicas!r}")
        if self.replicas > MAX_REPLICAS:
            raise SizingInputError(
                f"{where}: {self.replicas:,} replicas at peak, more than {MAX_REPLICAS:,} ({CEILING_WHY})"
            )
        surge_pods(self.replicas, self.max_surge, f"{where}: maxSurge")
        object.__setattr__(self, "node_selector", _check_selector(f"{where}: nodeSelector", self.node_selector))

    @property
    def requests(self) -> Resources:
        """Requests of one pod, with its pod slot."""
        return Resources(self.cpu_millicores, self.memory_mib, 1, self.ephemeral_storage_mib)

    @property
    def unrequested(self) -> tuple[str, ...]:
        """The resources ("cpu", "memory") the pod requests none of."""
        return tuple(name for name, value in (("cpu", self.cpu_millicores), ("memory", self.memory_mib)) if value == 0)

    @property
    def surge(self) -> int:
        """Extra pods during a rolling update at peak."""
        return surge_pods(self.replicas, self.max_surge)

    @property
    def peak_pods(self) -> int:
        """Pods at peak during a rollout: replicas + surge."""
        return self.replicas + self.surge

    @property
    def needs_node_per_pod(self) -> bool:
        """Whether no two of its pods may share a node: a required hostname anti-affinity that
        selects its own pods, or a host port."""
        scheduling = self.scheduling
        if scheduling.host_ports:
            return True
        return any(
            term.anti
            and term.weight is None
            and term.topology_key == HOSTNAME_KEY
            and (not term.namespaces or scheduling.namespace in term.namespaces)
            and term.selector.matches(scheduling.labels)
            for term in scheduling.pod_affinity
        )


@dataclass(frozen=True)
class DaemonSet:
    """A DaemonSet whose pod runs on every node it selects (cpu millicores, memory and
    ephemeral_storage_mib MiB).

    Each pod also takes one pod slot, even with zero cpu and memory requests.
    node_selector: labels a node must carry for the DaemonSet to run there.
    """

    name: str
    cpu_millicores: int = 0
    memory_mib: int = 0
    node_selector: Mapping[str, str] = field(default_factory=dict)
    scheduling: PodScheduling = PodScheduling()
    ephemeral_storage_mib: int = 0

    def __post_init__(self) -> None:
        _check_name("daemonSet", self.name)
        for field_name in ("cpu_millicores", "memory_mib", "ephemeral_storage_mib"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SizingInputError(
                    f"daemonSet {self.name!r}: {field_name} must be a non-negative integer, got {value!r}"
                )
        object.__setattr__(
            self, "node_selector", _check_selector(f"daemonSet {self.name!r}: nodeSelector", self.node_selector)
        )

    @property
    def requests(self) -> Resources:
        return Resources(self.cpu_millicores, self.memory_mib, 1, self.ephemeral_storage_mib)

    def runs_on(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with these labels runs this DaemonSet's pod (selector only, see `runs_on_node`)."""
        return all(labels.get(key) == value for key, value in self.node_selector.items())


# The DaemonSets EKS runs on every Linux node, with the default requests of
# their add-ons: aws-node asks 25m cpu (amazon-vpc-cni-k8s chart,
# `resources.requests.cpu: 25m`), kube-proxy 100m cpu (the EKS kube-proxy
# add-on DaemonSet), and eks-pod-identity-agent nothing (its chart ships
# `resources: {}`) but still a pod slot. None of them requests memory. All
# three tolerate every taint (`tolerations: [{operator: Exists}]`: the
# aws-vpc-cni chart's DaemonSet template, the eks-pod-identity-agent chart's
# values, the kube-proxy add-on), so they run on tainted NodePools too.
_TOLERATE_ALL = PodScheduling(tolerations=(Toleration(operator="Exists"),))
DEFAULT_DAEMON_SETS: tuple[DaemonSet, ...] = (
    DaemonSet("aws-node", cpu_millicores=25, scheduling=_TOLERATE_ALL),
    DaemonSet("kube-proxy", cpu_millicores=100, scheduling=_TOLERATE_ALL),
    DaemonSet("eks-pod-identity-agent", scheduling=_TOLERATE_ALL),
)


@dataclass(frozen=True)
class ExistingNode:
    """A node that is already running when the peak arrives.

    instance_type: catalog name; requested: requests of the pods already bound
    to it, DaemonSet pods included (cpu millicores, memory MiB, pod count);
    zone / capacity_type: where and how it runs; in_node_pool: False for a
    node of another NodePool or of a managed node group (pods may land on it,
    its capacity is not the NodePool's usage); capacity_reported: False for a
    NodeClaim launched so recently that Karpenter still counts it as zero
    against the limits; node_pool: the NodePool it belongs to, when known;
    labels / taints: the node's own labels and taints (pods must match and
    tolerate them).
    """

    name: str
    instance_type: str
    requested: Resources = Resources()
    zone: str | None = None
    capacity_type: str = "on-demand"
    in_node_pool: bool = True
    capacity_reported: bool = True
    node_pool: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()

    def __post_init__(self) -> None:
        _check_name("existing node", self.name)
        if not isinstance(self.requested, Resources) or min(self.requested.vector) < 0:
            raise SizingInputError(
                f"existing node {self.name!r}: requested must be non-negative Resources, got {self.requested!r}"
            )


def check_ceilings(workloads: Sequence[Workload], existing_nodes: Sequence[ExistingNode] = ()) -> None:
    """Refuse, before any simulation, more pods, workloads or nodes than the planner's ceilings allow."""
    if len(workloads) > MAX_WORKLOADS:
        raise SizingInputError(
            f"{len(workloads):,} workloads (Deployments, StatefulSets, Jobs), more than {MAX_WORKLOADS:,} (the "
            "planner's ceiling: each workload is simulated as groups of its own; plan the NodePool's share of them)"
        )
    if len(existing_nodes) > MAX_EXISTING_NODES:
        raise SizingInputError(
            f"{len(existing_nodes):,} existing nodes, more than {MAX_EXISTING_NODES:,} (the most Kubernetes "
            "supports in one cluster, and the planner's ceiling)"
        )
    total = sum(workload.peak_pods for workload in workloads)
    if total > MAX_PEAK_PODS:
        largest = sorted(workloads, key=lambda w: (-w.peak_pods, w.name))[:3]
        named = ", ".join(f"{w.name!r} {w.peak_pods:,}" for w in largest)
        raise SizingInputError(
            f"{total:,} pods at peak (replicas plus rollout surge; largest: {named}), more than "
            f"{MAX_PEAK_PODS:,} ({CEILING_WHY})"
        )
    own_node = [w for w in workloads if w.needs_node_per_pod]
    alone = sum(w.peak_pods for w in own_node)
    if alone > MAX_NODE_PER_POD_PODS:
        named = ", ".join(f"{w.name!r} {w.peak_pods:,}" for w in sorted(own_node, key=lambda w: (-w.peak_pods, w.name)))
        raise SizingInputError(
            f"{alone:,} pods at peak need a node each (required hostname anti-affinity on their own labels, or a "
            f"host port: {named}), more than {MAX_NODE_PER_POD_PODS:,} (the planner's ceiling for such pods: "
            "every scenario launches their nodes over many batches, and 2,000 of them take about a minute)"
        )
