"""What the simulation takes and gives: instance types, NodePools, pending pods, running nodes, the fleet.

Units: cpu in millicores, memory and ephemeral storage in MiB, pods as a count, prices per hour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sizing.errors import SizingInputError
from sizing.karpenter.labels import CAPACITY_TYPE_KEY, HOSTNAME_KEY, ZONE_KEY, LabelRequirement
from sizing.kube.resources import Resources

CAPACITY_TYPE_PRIORITY = ("reserved", "spot", "on-demand")
# The zone key of an offering priced the same in every zone (no per-zone facts known).
ANY_ZONE = ""
LIMIT_KEYS = ("cpu", "memory", "pods", "nodes")
HOSTNAME = "hostname"
ZONE = "zone"
CAPACITY_TYPE = CAPACITY_TYPE_KEY
SPREAD = "spread"
ANTI_AFFINITY = "anti-affinity"
AFFINITY = "affinity"
DEFAULT_POOL = "default"
# Where a pod ran, for a running node outside every NodePool (a managed node group, say).
OUTSIDE_NODE_POOLS = "outside NodePools"


@dataclass(frozen=True)
class TopologyRule:
    """A pod's topology constraint, resolved to the workloads whose pods it counts.

    kind: "spread" (topology spread, DoNotSchedule or ScheduleAnyway before it is
    relaxed), "anti-affinity" or "affinity" (pod (anti-)affinity, required, or
    preferred before it is relaxed); key: "hostname" (each node its own domain),
    "zone", or another node label such as "karpenter.sh/capacity-type",
    "kubernetes.io/arch" or a custom "example.com/team", whose domains are the
    values the NodePools' capacity types, instance types, requirements and template
    labels give it (`kubernetes.io/hostname` and `topology.kubernetes.io/zone` are
    read as "hostname" and "zone"); selects: workload names whose pods the selector
    matches; max_skew / min_domains: for spread.
    """

    kind: str
    key: str
    selects: frozenset[str]
    max_skew: int = 1
    min_domains: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", {HOSTNAME_KEY: HOSTNAME, ZONE_KEY: ZONE}.get(self.key, self.key))
        if self.kind not in (SPREAD, ANTI_AFFINITY, AFFINITY) or not isinstance(self.key, str) or not self.key:
            raise SizingInputError(f"topology rule {self.kind!r} on {self.key!r} is not modelled")
        if self.max_skew < 1:
            raise SizingInputError(f"topology spread maxSkew must be >= 1, got {self.max_skew}")


@dataclass(frozen=True)
class NodeOption:
    """An instance type the NodePool may launch, as the simulation sees it.

    capacity: what Karpenter counts against limits (cpu m, memory MiB, pods, ephemeral storage MiB);
    allocatable: what pods may request, before DaemonSets; daemon_overhead:
    requests of the DaemonSet pods a node of this type runs, one pod slot
    each; daemon_ports: (protocol, port) pairs those DaemonSet pods bind on
    the node, so no pod binding one of them lands there; price: on-demand
    cost per hour; spot_price: spot cost per hour, or None to price spot like
    on-demand; offerings: capacity type -> zone -> cost per hour where the type
    can be launched (zone ANY_ZONE: every zone at that cost), as Karpenter's
    offerings: a capacity type or zone missing there is not offered; None:
    offered in every zone at `price` / `spot_price` (offerings not modelled);
    labels: the instance-type labels a node of this type carries
    (architecture, family, size, ...), for topology on those keys.
    """

    name: str
    capacity: Resources
    allocatable: Resources
    price: float
    daemon_overhead: Resources = Resources()
    spot_price: float | None = None
    daemon_ports: frozenset[tuple[str, int]] = frozenset()
    offerings: Mapping[str, Mapping[str, float]] | None = field(default=None, hash=False)
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.offerings is not None:
            frozen = {kind: MappingProxyType(dict(by_zone)) for kind, by_zone in self.offerings.items()}
            object.__setattr__(self, "offerings", MappingProxyType(frozen))

    def price_for(self, capacity_type: str) -> float:
        """Cost per hour of one node launched with this capacity type."""
        if capacity_type == "spot" and self.spot_price is not None:
            return self.spot_price
        return self.price

    def offered_price(self, capacity_type: str, zones: Iterable[str] | None = None) -> float | None:
        """The cheapest offering of this capacity type in one of `zones` (None: any zone), or
        None when there is none."""
        if self.offerings is None:
            return self.price_for(capacity_type)
        by_zone = self.offerings.get(capacity_type)
        if not by_zone:
            return None
        if ANY_ZONE in by_zone:
            return by_zone[ANY_ZONE]
        if zones is None:
            return min(by_zone.values())
        return min((by_zone[zone] for zone in zones if zone in by_zone), default=None)

    def offered_zones(self, capacity_type: str, zones: frozenset[str] | None) -> frozenset[str] | None:
        """The zones among `zones` with an offering of the capacity type (None: every one of them)."""
        if self.offerings is None:
            return zones
        by_zone = self.offerings.get(capacity_type, {})
        if ANY_ZONE in by_zone:
            return zones
        offered = frozenset(by_zone)
        return offered if zones is None else offered & zones

    @property
    def lowest_price(self) -> float:
        """The cheapest offering of any capacity type and zone: no node of the type costs less."""
        if self.offerings is None:
            return min(self.price, self.spot_price if self.spot_price is not None else math.inf)
        return min((p for by_zone in self.offerings.values() for p in by_zone.values()), default=self.price)

    @property
    def room(self) -> Resources:
        """Allocatable left for workload pods once the DaemonSets run."""
        return self.allocatable - self.daemon_overhead


@dataclass(frozen=True)
class PodGroup:
    """`count` identical pending pods of one workload.

    requests: per pod (cpu m, memory MiB, pod slots, normally 1, ephemeral storage MiB);
    allowed_types: instance-type names the pod may run on (None: any);
    zones / capacity_types: values the pod requires (None: no constraint);
    pools: NodePools whose new NodeClaims may take the pod (taints tolerated,
    template labels matched; None: all); nodes: running nodes it may use
    (None: any whose type, zone and capacity type match); topology: its
    topology spread and pod anti-affinity rules; host_ports: (protocol, port)
    pairs it binds on the node; fallback: the same pods with the next soft
    constraint relaxed, tried for the pods that cannot be placed (Karpenter's
    relaxation order); relaxed: what was relaxed so far; labels: the pod's node
    requirements on other labels, one per key (instance-type labels, which bound
    the domains of its topology on them, and custom labels, which a NodeClaim's
    pods must agree on, as Karpenter adds each pod's requirements to its
    NodeClaim's).
    """

    workload: str
    requests: Resources
    count: int
    allowed_types: frozenset[str] | None = None
    zones: frozenset[str] | None = None
    capacity_types: frozenset[str] | None = None
    pools: frozenset[str] | None = None
    nodes: frozenset[str] | None = None
    topology: tuple[TopologyRule, ...] = ()
    host_ports: frozenset[tuple[str, int]] = frozenset()
    fallback: PodGroup | None = None
    relaxed: tuple[str, ...] = ()
    labels: tuple[LabelRequirement, ...] = ()

    @property
    def constrained(self) -> bool:
        """Whether pods of this group depend on where other pods are (topology or host ports)."""
        return bool(self.topology or self.host_ports)


@dataclass(frozen=True)
class RunningNode:
    """A node (or launched NodeClaim) that exists before the batch.

    requested: requests already bound to it, DaemonSet pods included;
    in_node_pool: False for a node of another NodePool or node group (pods may
    still land on it, its capacity is not the NodePool's usage);
    capacity_reported: False for a NodeClaim launched so recently that the
    cluster state has no capacity for it yet, so the scheduler counts it as
    zero against the limits (the source of limit overshoot);
    pods: workload name -> pods of it already bound to the node, which topology
    spread, pod (anti-)affinity and their inverse count (empty when unknown:
    then only `requested` is taken); host_ports: (protocol, port) those pods bind;
    labels: its labels beyond its instance type's, zone and capacity type
    (custom labels, for topology on them); launched: True for a node an earlier
    batch of the same run launched from `node_pool`: a pod may use it when it may
    use that NodePool (`PodGroup.pools`) and its `labels` meet the pod's
    (`PodGroup.nodes` names the nodes given as input only).
    """

    name: str
    option: NodeOption
    requested: Resources = Resources()
    zone: str | None = None
    capacity_type: str = "on-demand"
    in_node_pool: bool = True
    capacity_reported: bool = True
    node_pool: str | None = None
    pods: Mapping[str, int] = field(default_factory=dict)
    host_ports: frozenset[tuple[str, int]] = frozenset()
    labels: Mapping[str, str] = field(default_factory=dict)
    launched: bool = False


@dataclass(frozen=True)
class NodePoolModel:
    """One NodePool: the types its requirements allow (with their DaemonSet overhead on its nodes),
    its limits, zones, capacity types and weight; min_values: label key -> the least number of
    distinct values a NodeClaim keeps among its candidate types; type_labels: instance type ->
    labels, for min_values; labels: what its requirements and template labels ask of its nodes'
    labels other than zone and capacity type, one per key (a new NodeClaim starts from them)."""

    name: str
    node_options: tuple[NodeOption, ...]
    limits: Mapping[str, int] = field(default_factory=dict)
    zones: frozenset[str] | None = None
    capacity_types: tuple[str, ...] = ("on-demand",)
    weight: int = 0
    min_values: Mapping[str, int] = field(default_factory=dict)
    type_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    labels: tuple[LabelRequirement, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """One provisioning batch for one NodePool.

    node_options: the types the NodePool's requirements allow; pod_groups: the
    pending pods in creation order; limits: NodePool `spec.limits` as
    integers (cpu m, memory MiB, pods, nodes), absent keys unlimited; zones:
    zones the NodePool allows (None when zones are not modelled);
    capacity_types: capacity types the NodePool allows. node_pools: the
    NodePools, when there are several (then node_options, limits, zones and
    capacity_types are unused); the first listed is the one
    `ProvisioningResult.limits` reports on. idle_running: whether the result
    lists the running nodes that took no pod (False for a caller that keeps
    them from an earlier batch).
    """

    node_options: tuple[NodeOption, ...]
    pod_groups: tuple[PodGroup, ...]
    limits: Mapping[str, int] = field(default_factory=dict)
    zones: frozenset[str] | None = None
    capacity_types: tuple[str, ...] = ("on-demand",)
    running_nodes: tuple[RunningNode, ...] = ()
    node_pools: tuple[NodePoolModel, ...] = ()
    idle_running: bool = True

    @property
    def pools(self) -> tuple[NodePoolModel, ...]:
        """The NodePools as given (the single one built from the flat fields when none are)."""
        if self.node_pools:
            return self.node_pools
        return (NodePoolModel(DEFAULT_POOL, self.node_options, self.limits, self.zones, self.capacity_types),)

    @property
    def primary_pool(self) -> str:
        return self.pools[0].name


@dataclass(frozen=True)
class PlacedNode:
    """A node of the resulting fleet.

    reserved: DaemonSet requests on a new node, or everything bound before the
    batch on a running node; pod_requests: requests of the pods this batch
    placed; pods: workload -> pods placed; zones: zones it may still launch in;
    options: how many instance types still fitted at launch; in_node_pool:
    whether its capacity counts towards the NodePool's limits; labels: the
    custom labels a new node gets from its NodePool and its pods (one value per
    key: the one its pods or topology chose, else the first its NodePool allows).
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
    zones: tuple[str, ...] = ()
    options: int = 1
    existing: bool = False
    in_node_pool: bool = True
    node_pool: str = DEFAULT_POOL
    labels: Mapping[str, str] = field(default_factory=dict)

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


# (where the pods run: a NodePool name or OUTSIDE_NODE_POOLS, the soft constraints relaxed for them)
Placement = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class ProvisioningResult:
    """Running nodes first (in the order tried), then new NodeClaims in creation order.

    remaining: what Karpenter's scheduler believes is left of each limit after
    the batch (after subtractMax), for the limited keys only; reserved: what
    subtractMax took off for the batch's new NodeClaims, for every key (cpu m,
    memory MiB, pods, nodes), limited or not. Limits at least `reserved` above
    the reported usage never filter an instance type out. limit_demand: per key,
    the smallest limit of the primary NodePool under which every limit check the
    batch made passes; under limits at or above it on every key the batch makes
    exactly the same choices as without limits. limit_consumed: what the batch
    charged the primary NodePool's limits by its end, per key (counted usage plus
    subtractMax's reservations): `remaining` is the limits minus it. placements: per
    workload, the pods placed by where they run and which soft constraints were
    relaxed for them (Karpenter's decisions, apart from the instance types).
    """

    nodes: tuple[PlacedNode, ...]
    pending: tuple[PendingPods, ...]
    limits: Mapping[str, int]
    remaining: Mapping[str, int]
    reserved: Mapping[str, int] = field(default_factory=dict)
    limit_demand: Mapping[str, int] = field(default_factory=dict)
    limit_consumed: Mapping[str, int] = field(default_factory=dict)
    primary_pool: str = DEFAULT_POOL
    pool_remaining: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    relaxed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    placements: Mapping[str, Mapping[Placement, int]] = field(default_factory=dict)

    @property
    def new_nodes(self) -> tuple[PlacedNode, ...]:
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

    def limit_usage(self, pool: str | None = None) -> Mapping[str, int]:
        """A NodePool's usage (the primary one by default) once every node has reported its
        capacity (cpu m, memory MiB)."""
        name = self.primary_pool if pool is None else pool
        counted = [node for node in self.nodes if node.in_node_pool and node.node_pool == name]
        total = sum((node.capacity for node in counted), Resources())
        return {"cpu": total.cpu, "memory": total.memory, "pods": total.pods, "nodes": len(counted)}
