"""`plan_capacity(PlanInput) -> CapacityPlan`: NodePool sizing from the workloads at peak.

Steps: the NodePool's requirements filter the catalog; Karpenter's capacity
and allocatable model (with the EC2NodeClass kubelet settings) and the
DaemonSets give each type its room; every workload contributes replicas +
surge pods. Then:

1. the fleet Karpenter would launch for those pods (`sizing.karpenter.simulation`),
   under the limits of step 3;
2. the cheapest fleet for the same pods (`sizing.planning.fleet`, the solver);
3. NodePool limits covering fleet 1 (`sizing.karpenter.limits`);
4. the instance-type restriction under which Karpenter comes closest to the
   optimum within the blast-radius cap (`sizing.planning.recommendation`).

Units: cpu in millicores, memory in MiB, pods as a count, costs per hour in
the price table's unit (USD/hour, or capacity units when the region has no
prices).
"""

from __future__ import annotations

import functools
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol

from sizing.binpack.model import DEFAULT_WORK_LIMIT
from sizing.errors import NeverRuns, SizingInputError
from sizing.karpenter.allocatable import DEFAULT_EBS_VOLUME_BYTES, KubeletConfig, allocatable, capacity
from sizing.karpenter.ami_families import DEFAULT_AMI_FAMILY, launchable
from sizing.karpenter.catalog import CatalogInfo, InstanceType, catalog_by_name, load_catalog, read_catalog
from sizing.karpenter.crd_rules import TEMPLATE_LABELS_PATH, check_part
from sizing.karpenter.labels import WELL_KNOWN, LabelRequirement, merged, pool_admits, restriction, shown
from sizing.karpenter.limits import NodePoolLimits, parse_limits
from sizing.karpenter.offerings import (
    OfferingsCheck,
    PoolOfferings,
    node_offerings,
    offered_types,
    offerings_recorded,
)
from sizing.karpenter.pricing import PriceTable, SpotDiscount, check_catalog_region, price_table
from sizing.karpenter.requirements import (
    CAPACITY_TYPE_KEY,
    INSTANCE_KEYS,
    ZONE_KEY,
    allowed_capacity_types,
    allowed_zones,
    custom_label_requirements,
    filter_instance_types,
    parse_requirements,
)
from sizing.karpenter.simulation import (
    NodeOption,
    NodePoolModel,
    PodGroup,
    ProvisioningResult,
    RunningNode,
)
from sizing.kube.resources import Resources
from sizing.kube.scheduling import LabelExpression, PodScheduling, Taint, tolerates_all
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, ExistingNode, Workload, check_ceilings
from sizing.planning.ceilings import check_node_pool, check_topology
from sizing.planning.decisions import Change, changes
from sizing.planning.fleet import OptimalFleet, optimal_fleet, solved_fleet, solver_available
from sizing.planning.pod_groups import UNMODELLED_WELL_KNOWN, PodGroupBuilder, PoolView, is_custom_key, unmodelled_key
from sizing.planning.recommendation import (
    Outcome,
    Recommendation,
    confirmed,
    likely_outcomes,
    likely_restrictions,
    outcome_on,
    recommend,
)
from sizing.planning.scenarios import (
    ROLLOUT,
    HpaScaleUp,
    LimitProbe,
    LimitSearch,
    ScalingPolicy,
    ScenarioRun,
    ScenarioRunner,
    ScenarioSetup,
    all_at_once,
    checked_limits,
    replica_steps,
    search_from,
)
from sizing.planning.side_by_side import can_fork, run_around, run_beside
from sizing.planning.way_down import WayDownPlan, WayDownSettings, keep_way_down, with_optimum

NODEPOOL_KEY = "karpenter.sh/nodepool"

# The getting-started NodePool of the Karpenter docs, used when a description names no requirements.
GETTING_STARTED_REQUIREMENTS: tuple[Mapping[str, Any], ...] = (
    MappingProxyType({"key": "kubernetes.io/arch", "operator": "In", "values": ("amd64",)}),
    MappingProxyType({"key": "kubernetes.io/os", "operator": "In", "values": ("linux",)}),
    MappingProxyType({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ("on-demand",)}),
    MappingProxyType({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ("c", "m", "r")}),
    MappingProxyType({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ("2",)}),
)
SPOT_NOTE = (
    "the simulation launches the cheapest spot offering; Karpenter asks EC2 for price-capacity-optimized "
    "spot, which weighs the capacity of each pool and is not strictly the cheapest"
)
SOLVER_MISSING_NOTE = (
    "the optimal fleet was not computed: the bin-packing solver (sizing.binpack.solver) is not installed"
)
RESERVED_NOTE = "capacity reservations are not modelled; the plan uses on-demand and spot only"
CONSTRAINED_NOTE = (
    "the optimal fleet was not computed: the bin-packing solver does not model topology spread, pod "
    "affinity or anti-affinity, host ports, several NodePools or a choice among a custom label's values, "
    "which these workloads use"
)


@dataclass(frozen=True)
class NodePoolSpec:
    """The NodePool and EC2NodeClass settings that shape the fleet.

    requirements: `spec.template.spec.requirements` entries as plain dicts;
    kubelet: the EC2NodeClass `spec.kubelet` settings; limits: the current
    `spec.limits` (e.g. {"cpu": "1000", "memory": "1000Gi"}) to check against
    the peak, empty for none; name: the NodePool's name, matched against pods
    that select `karpenter.sh/nodepool`; weight: `spec.weight` (higher is
    tried first); taints: `spec.template.spec.taints`; labels:
    `spec.template.metadata.labels`; ami_family: the EC2NodeClass's AMI
    family (default AL2023, the project's; None: unknown, no type filtered);
    storage_bytes: a node's ephemeral-storage capacity in bytes, the
    EC2NodeClass's root volume (`block_device_storage`; default 20 GiB, the
    AL2023 default volume).
    """

    requirements: tuple[Mapping[str, Any], ...] = GETTING_STARTED_REQUIREMENTS
    kubelet: KubeletConfig | None = None
    limits: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    weight: int = 0
    taints: tuple[Taint, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    ami_family: str | None = DEFAULT_AMI_FAMILY
    storage_bytes: int = DEFAULT_EBS_VOLUME_BYTES


@dataclass(frozen=True)
class PlanInput:
    """Everything the planner needs; all fields but `workloads` have defaults.

    region: prices and zones of this AWS region; zones: the region's zones to
    plan with (empty: the zones the requirements and pods name);
    daemon_sets: per-node DaemonSets (the EKS defaults unless given);
    existing_nodes: nodes running before the peak; headroom_percent: extra
    room on top of the fleet's capacity in the limits; max_pods_per_node:
    blast-radius cap for the recommendation (None: no cap);
    price_overrides: instance type -> USD/hour; solver_work_limit: units of
    solver work for the optimal fleet (None: skip it), so the plan is the same
    on any machine; catalog: instance types to plan with (None: the bundled
    catalog); other_node_pools: further NodePools pods may overflow to (their
    limits as given; `node_pool` is the one planned); ignored: inputs the
    planner does not model, accepted by the user and listed in the report
    ("ignored, may under-plan"); not_planned: objects read that place no pods
    (a Service, a PodDisruptionBudget, ...), listed in the report as not
    planned; repeated: objects the input gave again identically, read once
    and listed in the report's notes; hpa_scale_up: workload name -> how its HPA scales up (the HPA
    ramp scenario; absent: the workload's own HPA fields if it has them, else
    Kubernetes' defaults with minReplicas 1); catalog_info: the header of
    `catalog` (its region, dates, offerings; None: the bundled catalog's, or
    nothing known of a catalog given without it); spot_discount: the user's
    expected spot discount, which prices spot over any market data; way_down: the
    NodePools' disruption settings and the HPAs' scale-down, to plan the way down after
    the peak (`sizing.planning.way_down`; None: not planned);
    price_overrides_key: how messages and the report name `price_overrides`
    (`priceOverrides` of a description or stack, `--price` of the command line);
    doubtful: (warning, "object: field = value (why)") of input values that are almost surely
    mistakes, planned as written and warned of in the report (`sizing.kube.doubtful`).
    """

    workloads: tuple[Workload, ...]
    node_pool: NodePoolSpec = NodePoolSpec()
    region: str = "us-east-1"
    zones: tuple[str, ...] = ()
    daemon_sets: tuple[DaemonSet, ...] = DEFAULT_DAEMON_SETS
    existing_nodes: tuple[ExistingNode, ...] = ()
    headroom_percent: float = 10.0
    max_pods_per_node: int | None = None
    price_overrides: Mapping[str, float] = field(default_factory=dict)
    solver_work_limit: int | None = DEFAULT_WORK_LIMIT
    catalog: tuple[InstanceType, ...] | None = None
    other_node_pools: tuple[NodePoolSpec, ...] = ()
    ignored: tuple[str, ...] = ()
    not_planned: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    hpa_scale_up: Mapping[str, HpaScaleUp] = field(default_factory=dict)
    catalog_info: CatalogInfo | None = None
    spot_discount: SpotDiscount | None = None
    way_down: WayDownSettings | None = None
    price_overrides_key: str = "priceOverrides"
    doubtful: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.workloads:
            raise SizingInputError("workloads is empty; list at least one workload to plan for")
        names = [w.name for w in self.workloads]
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise SizingInputError(f"workload names must be unique, {duplicates} appear more than once")
        check_ceilings(self.workloads, self.existing_nodes)
        for index, pool in enumerate((self.node_pool, *self.other_node_pools)):
            named = f"NodePool {pool.name!r}" if pool.name else "nodePool" if index == 0 else f"NodePool {index + 1}"
            check_node_pool(named, pool.requirements, pool.labels)
        if (
            isinstance(self.headroom_percent, bool)
            or not isinstance(self.headroom_percent, (int, float))
            or not 0 <= self.headroom_percent <= 1000
        ):
            raise SizingInputError(f"headroomPercent must be a number from 0 to 1000, got {self.headroom_percent!r}")
        cap = self.max_pods_per_node
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise SizingInputError(f"maxPodsPerNode must be a positive integer or unset, got {cap!r}")
        limit = self.solver_work_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SizingInputError(
                f"solverWorkLimit must be a positive integer (units of solver work) or unset, got {limit!r}"
            )


@dataclass(frozen=True)
class NeverRunning:
    """A workload whose pods can never run, so the plan leaves it out: Karpenter leaves its pods
    pending, and they consume no capacity. pods: its pods at peak with the rollout's surge;
    reason: why no node may take them, naming the workload and what stands in the way."""

    workload: str
    pods: int
    reason: str


@dataclass(frozen=True)
class LimitsCheck:
    """Every scenario simulated under the NodePool's current limits, and what they change.

    changes: per scenario, how Karpenter's decisions under these limits depart from its
    decisions without them (pods pending, pods on another NodePool, soft constraints given up).
    """

    limits: Mapping[str, Any]
    runs: Mapping[str, ScenarioRun]
    changes: Mapping[str, tuple[Change, ...]]

    @property
    def sufficient(self) -> bool:
        """Whether the limits keep every scenario's decisions."""
        return not any(self.changes.values())

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(name for name, found in self.changes.items() if found)


@dataclass(frozen=True)
class Finding:
    """Limits the input sets itself (not the planned ones) that change what Karpenter decides.

    subject: those limits, named by NodePool; changes: per scenario, what they change against
    the same scenario with no limits at all.
    """

    subject: str
    changes: Mapping[str, tuple[Change, ...]]


@dataclass(frozen=True)
class FleetGap:
    """How far Karpenter's fleet is above the optimal one (nodes and cost per hour)."""

    nodes: int
    cost: float
    percent: float | None


@dataclass(frozen=True)
class CapacityPlan:
    """The planner's answer. `node_pool_limits` is ready for the NodePool's `spec.limits`.

    never_running: the workloads whose pods can never run, left out of the plan (Karpenter leaves
    their pods pending; they consume no capacity); `input` is the input without them, which
    everything else is the plan of.
    """

    input: PlanInput
    prices: PriceTable
    instance_types: tuple[str, ...]
    node_options: tuple[NodeOption, ...]
    fleet: ProvisioningResult
    limits: NodePoolLimits
    optimal: OptimalFleet | None
    gap: FleetGap | None
    recommendation: Recommendation
    recommended_limits: NodePoolLimits | None
    current_limits: LimitsCheck | None
    notes: tuple[str, ...]
    scenarios: Mapping[str, ScenarioRun] = field(default_factory=dict)
    unlimited: Mapping[str, ScenarioRun] = field(default_factory=dict)
    limits_below: Mapping[str, tuple[str, tuple[Change, ...]]] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    daemon_set_pools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fleet_types_limits: NodePoolLimits | None = None
    ramps: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    offerings: OfferingsCheck | None = None
    never_running: tuple[NeverRunning, ...] = ()
    # The way down after the peak, when the input asks for it (`sizing.planning.way_down`).
    way_down: WayDownPlan | None = None

    @property
    def node_pool_limits(self) -> dict[str, str]:
        """`spec.limits` for the NodePool as it is, e.g. {"cpu": "24", "memory": "96Gi"}."""
        return self.limits.spec()

    @property
    def pods_never_running(self) -> int:
        """Pods that never run: those of the never-running workloads, plus the most that any scenario
        leaves pending even without limits (no node may take them, whatever the capacity)."""
        pending = max((run.result.pending_count for run in self.unlimited.values()), default=0)
        return sum(item.pods for item in self.never_running) + pending

    @property
    def pods_with_surge(self) -> int:
        """Pods of a rollout at peak: every workload's replicas plus its surge."""
        return sum(workload.peak_pods for workload in self.input.workloads)

    @property
    def ramp_seconds(self) -> int:
        """Seconds from the load's arrival until the last HPA reaches its maximum (0 without HPAs)."""
        return max((steps[-1][0] for steps in self.ramps.values()), default=0)

    @property
    def fleet_types(self) -> tuple[str, ...]:
        """The instance types of the planned NodePool's nodes in the fleet, sorted."""
        return pool_types(self.fleet)

    @property
    def unrequested(self) -> Mapping[str, tuple[str, ...]]:
        """Resource ("cpu", "memory") -> the workloads whose pods request none of it, in input order.

        Kubernetes and Karpenter schedule such pods with 0 of the resource, and so does the plan:
        it cannot size that resource for them. Resources no workload leaves out are absent.
        """
        found: dict[str, list[str]] = {}
        for workload in self.input.workloads:
            for resource in workload.unrequested:
                found.setdefault(resource, []).append(workload.name)
        return MappingProxyType(
            {resource: tuple(found[resource]) for resource in ("cpu", "memory") if resource in found}
        )


def pool_types(result: ProvisioningResult) -> tuple[str, ...]:
    """The instance types of the planned NodePool's nodes in `result`, sorted."""
    return tuple(sorted({node.instance_type for node in result.nodes if node.node_pool == result.primary_pool}))


@dataclass(frozen=True)
class _Context:
    """The NodePool resolved against the catalog."""

    options: tuple[NodeOption, ...]
    instances: Mapping[str, InstanceType]
    labels: Mapping[str, Mapping[str, str]]
    zones: frozenset[str] | None
    capacity_types: tuple[str, ...]
    groups: tuple[PodGroup, ...]
    running: tuple[RunningNode, ...]
    prices: PriceTable
    notes: tuple[str, ...]
    pool_name: str = "default"
    pool_limits: Mapping[str, int] = field(default_factory=dict)
    pool_weight: int = 0
    min_values: Mapping[str, int] = field(default_factory=dict)
    other_pools: tuple[NodePoolModel, ...] = ()
    constrained: bool = False
    daemon_set_pools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    offerings: OfferingsCheck | None = None
    pool_labels: tuple[LabelRequirement, ...] = ()
    never_running: tuple[NeverRunning, ...] = ()


def _daemon_runs(daemon_set: DaemonSet, instance_labels: Mapping[str, str], pool: PoolView) -> bool:
    """Whether Karpenter counts the DaemonSet on a node of this type from this NodePool: it tolerates
    the pool's taints and its selector and required node affinity are compatible with every label
    such a node may carry (instance labels, template labels, NodePool name, a zone and capacity type
    the pool allows)."""
    # DaemonSet pods tolerate PreferNoSchedule for this check (Karpenter's isDaemonPodCompatible).
    if not tolerates_all(daemon_set.scheduling.tolerations, pool.taints, prefer_no_schedule=True):
        return False
    labels = dict(instance_labels)
    labels.update(pool.labels)
    labels[NODEPOOL_KEY] = pool.name

    def compatible(expression: LabelExpression) -> bool:
        if expression.key == ZONE_KEY and pool.zones is not None:
            return any(expression.admits({ZONE_KEY: zone}) for zone in pool.zones)
        if expression.key == ZONE_KEY:
            return True
        if expression.key == CAPACITY_TYPE_KEY:
            return any(expression.admits({CAPACITY_TYPE_KEY: kind}) for kind in pool.capacity_types)
        if is_custom_key(expression.key):
            # Custom labels: what the NodePool's requirements and template labels allow.
            wanted = LabelRequirement.of(expression.key, expression.operator, expression.values)
            return pool_admits(pool.label_requirements, (wanted,)) is None
        return bool(expression.admits(labels))

    if not all(compatible(LabelExpression(key, "In", (value,))) for key, value in daemon_set.node_selector.items()):
        return False
    terms = daemon_set.scheduling.required_node_terms
    return not terms or any(all(compatible(e) for e in term) for term in terms)


def _daemon_overhead(daemon_sets: Sequence[DaemonSet], labels: Mapping[str, str], pool: PoolView) -> Resources:
    return sum((ds.requests for ds in daemon_sets if _daemon_runs(ds, labels, pool)), Resources())


def _ports(scheduling: PodScheduling) -> frozenset[tuple[str, int]]:
    return frozenset((port.protocol, port.port) for port in scheduling.host_ports)


def _daemon_ports(
    daemon_sets: Sequence[DaemonSet], labels: Mapping[str, str], pool: PoolView
) -> frozenset[tuple[str, int]]:
    """The host ports the DaemonSets that run on such a node bind there."""
    return frozenset().union(*[_ports(ds.scheduling) for ds in daemon_sets if _daemon_runs(ds, labels, pool)])


def _check_host_ports(
    workload: Workload, group: PodGroup, options: Sequence[NodeOption], daemon_sets: Sequence[DaemonSet]
) -> None:
    """Raise NeverRuns when a DaemonSet binds one of the pod's host ports on every node the pod may use."""
    ports = _ports(workload.scheduling)
    allowed = [o for o in options if group.allowed_types is None or o.name in group.allowed_types]
    if not ports or not allowed or any(not (o.daemon_ports & ports) for o in allowed):
        return
    taken = sorted({p for o in allowed for p in o.daemon_ports} & ports)
    owners = sorted(ds.name for ds in daemon_sets if _ports(ds.scheduling) & ports)
    raise NeverRuns(
        workload.name,
        f"workload {workload.name!r}: host port {', '.join(f'{port}/{proto}' for proto, port in taken)} is "
        f"bound by DaemonSet {', '.join(owners)} on every node the pods may use, so they can never run; "
        "change the port or keep the DaemonSet off the workload's NodePool",
    )


def _all_pools(plan_input: PlanInput) -> tuple[NodePoolSpec, ...]:
    return (plan_input.node_pool,) + tuple(plan_input.other_node_pools)


def _mentioned_zones(plan_input: PlanInput) -> list[str]:
    zones = set(plan_input.zones)
    for pool in _all_pools(plan_input):
        for requirement in pool.requirements:
            if isinstance(requirement, Mapping) and requirement.get("key") == ZONE_KEY:
                zones.update(str(value) for value in requirement.get("values") or ())
    for workload in plan_input.workloads:
        if ZONE_KEY in workload.node_selector:
            zones.add(workload.node_selector[ZONE_KEY])
    for node in plan_input.existing_nodes:
        if node.zone:
            zones.add(node.zone)
    return sorted(zones)


def _check_selector(
    workload: Workload,
    pools: Sequence[PoolView],
    running_instances: Sequence[InstanceType],
    running_labels: Sequence[Mapping[str, str]],
) -> None:
    """Raise NeverRuns for a node selector no NodePool and no running node can satisfy, naming the key;
    refuse a key the planner does not model."""
    where = f"workload {workload.name!r}: nodeSelector"
    pool_zones = [p.zones for p in pools]
    all_zones = (
        None if any(z is None for z in pool_zones) else frozenset().union(*[z for z in pool_zones if z is not None])
    )
    kinds = sorted({k for p in pools for k in p.capacity_types}, key=("on-demand", "spot", "reserved").index)
    names = [p.name for p in pools]
    instances = [i for p in pools for i in p.instances]
    selectable = {i.name: i for i in list(instances) + list(running_instances)}.values()
    allowed: frozenset[str] | None = None
    for key, value in workload.node_selector.items():
        if key == ZONE_KEY:
            if all_zones is not None and value not in all_zones:
                raise NeverRuns(
                    workload.name,
                    f"{where} requires zone {value!r}, which the NodePool does not allow (zones {sorted(all_zones)})",
                )
        elif key == CAPACITY_TYPE_KEY:
            if value not in kinds:
                raise NeverRuns(workload.name, f"{where} requires capacity type {value!r}; the NodePool allows {kinds}")
        elif key == NODEPOOL_KEY:
            if (
                all(name is not None for name in names)
                and value not in names
                and not any(labels.get(key) == value for labels in running_labels)
            ):
                planned = names[0] if len(names) == 1 else names
                raise NeverRuns(
                    workload.name, f"{where} selects NodePool {value!r}, but the plan is for NodePool {planned!r}"
                )
        elif key in INSTANCE_KEYS:
            matching = frozenset(i.name for i in selectable if i.labels().get(key) == value)
            allowed = matching if allowed is None else allowed & matching
        elif not is_custom_key(key):
            raise SizingInputError(
                f"{where} key {unmodelled_key(key) if key in UNMODELLED_WELL_KNOWN else repr(key)}: it is not "
                f"modelled; the keys are {sorted(INSTANCE_KEYS + (ZONE_KEY, CAPACITY_TYPE_KEY, NODEPOOL_KEY))} "
                "and custom labels the NodePools define"
            )
        else:
            wanted = (LabelRequirement(key, frozenset({value})),)
            if not any(pool_admits(p.label_requirements, wanted) is None for p in pools) and not any(
                labels.get(key) == value for labels in running_labels
            ):
                defined = "; ".join(
                    f"NodePool {p.name}: "
                    + next((r.describe() for r in p.label_requirements if r.key == key), f"no {key} label")
                    for p in pools
                )
                raise NeverRuns(
                    workload.name,
                    f"{where} requires custom label {key}={value}, which no NodePool gives its nodes and no running "
                    f"node carries ({defined}); Karpenter would leave these pods pending. Add the label to a "
                    "NodePool's template labels or requirements",
                )
    pool_names = {i.name for i in instances}
    if allowed is not None and not (allowed & pool_names):
        raise NeverRuns(
            workload.name,
            f"{where} {dict(workload.node_selector)} matches none of the NodePool's {len(pool_names)} instance types",
        )


STORAGE_NOTE_NAMED = 5  # workloads named in the ephemeral-storage note; the rest are counted


def _storage_note(
    plan_input: PlanInput, views: Sequence[PoolView], pool_options: Sequence[Sequence[NodeOption]]
) -> str | None:
    """What a node holds of ephemeral storage, when some pod asks for it (else None: no note)."""
    asking = sorted(
        (w for w in plan_input.workloads if w.ephemeral_storage_mib > 0),
        key=lambda w: (-w.ephemeral_storage_mib, w.name),
    )
    daemons = [d for d in plan_input.daemon_sets if d.ephemeral_storage_mib > 0]
    if not asking and not daemons:
        return None
    pools = "; ".join(
        f"{opts[0].allocatable.ephemeral_storage}Mi of a node's {opts[0].capacity.ephemeral_storage}Mi root volume "
        f"in NodePool {view.name or 'default'}"
        for view, opts in zip(views, pool_options, strict=False)
        if opts
    )
    named = ", ".join(f"{w.name} {w.ephemeral_storage_mib}Mi" for w in asking[:STORAGE_NOTE_NAMED])
    more = len(asking) - STORAGE_NOTE_NAMED
    named += f" and {more} more" if more > 0 else ""
    shown = ", ".join(f"{d.name} {d.ephemeral_storage_mib}Mi" for d in daemons[:STORAGE_NOTE_NAMED])
    return (
        f"ephemeral storage is planned: pods may request {pools} (the rest is kube-reserved storage and the "
        f"nodefs.available eviction threshold); each pod requests: {named or 'none'}"
        + (f"; each DaemonSet pod: {shown}" if daemons else "")
    )


def _check_pods_fit(workload: Workload, group: PodGroup, options: Sequence[NodeOption]) -> None:
    """Raise NeverRuns when no allowed type has room for one pod, naming the resource that does not fit;
    refuse DaemonSets that leave no room for any pod on the largest allowed type."""
    allowed = [o for o in options if group.allowed_types is None or o.name in group.allowed_types]
    request = workload.requests
    if any(request.fits_in(o.room) for o in allowed):
        return
    largest = max(allowed, key=lambda o: (o.room.ephemeral_storage, o.name))
    if largest.room.ephemeral_storage < 0:
        raise SizingInputError(
            f"the DaemonSets request {largest.daemon_overhead.ephemeral_storage}Mi ephemeral-storage on every node, "
            f"more than the {largest.allocatable.ephemeral_storage}Mi allocatable of the EC2NodeClass's root volume "
            f"({largest.name}), so no pod fits beside them; lower the DaemonSets' requests or give the EC2NodeClass "
            "a larger root volume"
        )
    if request.ephemeral_storage > largest.room.ephemeral_storage:
        raise NeverRuns(
            workload.name,
            f"workload {workload.name!r} requests {request.ephemeral_storage}Mi ephemeral-storage; a node "
            f"has at most {largest.room.ephemeral_storage}Mi allocatable after DaemonSets ({largest.name}: the "
            f"EC2NodeClass's root volume of {largest.capacity.ephemeral_storage}Mi less kube-reserved storage "
            "and the kubelet's nodefs.available eviction threshold), so the pods can never run; give the "
            "EC2NodeClass a larger root volume (blockDeviceMappings[].ebs.volumeSize with rootVolume: true) "
            "or lower the request",
        )
    for dimension, unit, label in (("cpu", "m", "cpu"), ("memory", "Mi", "memory"), ("pods", "", "pod slots")):
        largest = max(allowed, key=lambda o: (getattr(o.room, dimension), o.name))
        if getattr(largest.room, dimension) <= 0:
            # Nothing is left for any pod: the DaemonSets, not this workload, are too large.
            raise SizingInputError(
                f"the DaemonSets request {getattr(largest.daemon_overhead, dimension)}{unit} {label} on every node, "
                f"at least the {getattr(largest.allocatable, dimension)}{unit} allocatable of the largest allowed "
                f"instance type ({largest.name}), so no pod fits beside them; lower the DaemonSets' requests "
                "(daemonSets) or allow larger instance types"
            )
        if getattr(request, dimension) > getattr(largest.room, dimension):
            if dimension == "pods":
                raise NeverRuns(
                    workload.name,
                    f"workload {workload.name!r} needs a pod slot; the allowed instance types have at most "
                    f"{largest.room.pods} left after DaemonSets ({largest.name})",
                )
            raise NeverRuns(
                workload.name,
                f"workload {workload.name!r} requests {getattr(request, dimension)}{unit} {label}; the largest "
                f"allowed instance type ({largest.name}) has {getattr(largest.room, dimension)}{unit} "
                f"allocatable after DaemonSets",
            )
    raise NeverRuns(
        workload.name,
        f"workload {workload.name!r} requests {request.cpu}m cpu and {request.memory}Mi memory; no allowed "
        "instance type has room for both after DaemonSets",
    )


def _pool_view(
    spec: NodePoolSpec,
    catalog: Sequence[InstanceType],
    mentioned: Sequence[str],
    where: str,
    notes: list[str],
    offered: list[PoolOfferings],
    plan_input: PlanInput,
    info: CatalogInfo,
) -> tuple[PoolView, dict[str, int]]:
    """The NodePool resolved against the catalog: (view, requirements, usable capacity types).
    Its types are those offered in the plan's region and the pool's zones (when the catalog
    recorded offerings); what that removed goes to `offered`."""
    requirements = parse_requirements(list(spec.requirements), where)
    instances = launchable(filter_instance_types(catalog, requirements), spec.ami_family)
    if not instances:
        raise SizingInputError(f"{where}: no instance type is left that AMI family {spec.ami_family} can launch")
    capacity_types = allowed_capacity_types(requirements)
    usable_kinds = tuple(kind for kind in capacity_types if kind != "reserved")
    if len(usable_kinds) < len(capacity_types) and RESERVED_NOTE not in notes:
        notes.append(RESERVED_NOTE)
    if not usable_kinds:
        raise SizingInputError(
            "the NodePool allows only reserved capacity, which the planner does not model; allow on-demand or spot"
        )
    if "spot" in usable_kinds and SPOT_NOTE not in notes:
        notes.append(SPOT_NOTE)
    for requirement in requirements:
        if requirement.min_values is not None and requirement.key not in INSTANCE_KEYS:
            raise SizingInputError(
                f"{where}: minValues on {requirement.key} is not modelled (only on instance-type labels)"
            )
    zones = frozenset(allowed_zones(requirements, mentioned)) if mentioned else None
    instances, pool_offerings = offered_types(
        instances, plan_input.region, zones, info, plan_input.price_overrides.keys(), spec.name or "default", where
    )
    offered.append(pool_offerings)
    view = PoolView(
        spec.name or "default",
        instances,
        zones,
        usable_kinds,
        MappingProxyType(dict(spec.labels)),
        tuple(spec.taints),
        merged(custom_label_requirements(requirements) + _template_label_requirements(spec, where)),
    )
    min_values = {r.key: r.min_values for r in requirements if r.min_values is not None and r.key in INSTANCE_KEYS}
    return view, min_values


def _catalog_info(plan_input: PlanInput) -> CatalogInfo:
    if plan_input.catalog_info is not None:
        return plan_input.catalog_info
    return read_catalog().info if plan_input.catalog is None else CatalogInfo(path="PlanInput.catalog")


def _chooses_custom_label(group: PodGroup, views: Sequence[PoolView]) -> bool:
    """Whether the group's pods require a custom label a NodePool gives more than one value, so that pods
    asking for different values cannot share a node (which the bin-packing solver does not model)."""
    keys = {requirement.key for requirement in group.labels if is_custom_key(requirement.key)}
    return any(
        requirement.key in keys and (requirement.complement or len(requirement.values) != 1)
        for view in views
        for requirement in view.label_requirements
    )


def _template_label_requirements(spec: NodePoolSpec, where: str) -> tuple[LabelRequirement, ...]:
    """The NodePool's template labels as requirements its nodes meet; refuses a key the NodePool CRD
    restricts (by its rules, evaluated), or a well-known label, which the planner reads from the
    requirements only."""
    name = where.removesuffix(" requirements").removesuffix(".requirements")
    check_part(dict(spec.labels), TEMPLATE_LABELS_PATH, f"{name}: template labels")
    found = []
    for key, value in sorted(spec.labels.items()):
        reason = restriction(key)
        if reason is None and (key in WELL_KNOWN or key in UNMODELLED_WELL_KNOWN):
            reason = f"{key!r} is a well-known label: give it as a requirement (key, operator In, values)"
        if reason is not None:
            raise SizingInputError(f"{name}: template label {shown(key)}: {reason}")
        found.append(LabelRequirement(key, frozenset({value})))
    return tuple(found)


def _pool_model_labels(spec: NodePoolSpec, view: PoolView) -> tuple[LabelRequirement, ...]:
    """What the NodePool asks of its nodes' labels other than zone and capacity type (for the simulation)."""
    own = tuple(
        LabelRequirement.of(r.key, r.operator, r.values)
        for r in parse_requirements(list(spec.requirements))
        if r.key in INSTANCE_KEYS
    )
    return merged(own + view.label_requirements)


def _check_reachable(
    workload: Workload,
    group: PodGroup,
    views: Sequence[PoolView],
    pool_options: Sequence[Sequence[NodeOption]],
    daemon_sets: Sequence[DaemonSet],
) -> None:
    """Raise NeverRuns when no instance type of the NodePools the pods may use matches their node
    selector and affinity, has room for one pod, or leaves their host ports free."""
    variants = [group]
    while variants[-1].fallback is not None:
        variants.append(variants[-1].fallback)

    def reachable(variant: PodGroup) -> list[NodeOption]:
        return [
            o
            for view, opts in zip(views, pool_options, strict=False)
            if variant.pools is None or view.name in variant.pools
            for o in opts
        ]

    fitting = [
        v
        for v in variants
        if reachable(v) and (v.allowed_types is None or any(o.name in v.allowed_types for o in reachable(v)))
    ]
    if not fitting:
        raise NeverRuns(
            workload.name,
            f"workload {workload.name!r}: its node selector and node affinity match none of the "
            "instance types of the NodePools it may use",
        )
    _check_pods_fit(workload, fitting[-1], reachable(fitting[-1]))
    _check_host_ports(workload, fitting[-1], reachable(fitting[-1]), daemon_sets)


def _resolve(plan_input: PlanInput) -> _Context:
    catalog = plan_input.catalog if plan_input.catalog is not None else load_catalog()
    known = catalog_by_name(catalog)
    info = _catalog_info(plan_input)
    check_catalog_region(info, plan_input.region, "catalog", "region")
    notes: list[str] = []
    offered: list[PoolOfferings] = []
    mentioned = _mentioned_zones(plan_input)
    specs = _all_pools(plan_input)
    names = [spec.name or "default" for spec in specs]
    if len(set(names)) != len(names):
        raise SizingInputError(f"NodePool names must be unique, got {names}")
    resolved = [
        _pool_view(
            spec,
            catalog,
            mentioned,
            "nodePool.requirements" if i == 0 else f"NodePool {names[i]!r} requirements",
            notes,
            offered,
            plan_input,
            info,
        )
        for i, spec in enumerate(specs)
    ]
    views = [view for view, _ in resolved]
    for node in plan_input.existing_nodes:
        if node.instance_type not in known:
            raise SizingInputError(
                f"existing node {node.name!r}: instance type {node.instance_type!r} is not in the catalog"
            )
    priced_names = {i.name for view in views for i in view.instances} | {
        n.instance_type for n in plan_input.existing_nodes
    }
    priced = [known[name] for name in sorted(priced_names)]
    discount = plan_input.spot_discount
    prices = price_table(
        priced,
        plan_input.region,
        plan_input.price_overrides,
        catalog,
        plan_input.price_overrides_key,
        catalog_info=info,
        spot_discount_percent=discount.percent if discount else None,
        spot_discount_field=discount.set_by if discount else "capacity.spotDiscountPercent or --spot-discount",
    )
    if prices.note:
        notes.append(prices.note)
    zone_note = info.zone_note()
    if zone_note:
        notes.append(zone_note)
    checked = offerings_recorded(info, plan_input.region)

    def node_option(instance: InstanceType, spec: NodePoolSpec, view: PoolView) -> NodeOption:
        cost = prices.cost(instance.name)
        spot = prices.spot.uniform_cost(cost) if "spot" in view.capacity_types else None
        return NodeOption(
            name=instance.name,
            capacity=capacity(instance, spec.kubelet, storage_bytes=spec.storage_bytes),
            allocatable=allocatable(instance, spec.kubelet, storage_bytes=spec.storage_bytes),
            price=cost,
            daemon_overhead=_daemon_overhead(plan_input.daemon_sets, instance.labels(), view),
            daemon_ports=_daemon_ports(plan_input.daemon_sets, instance.labels(), view),
            # Spot at on-demand needs no price of its own, and keeps the launch on its fast path.
            spot_price=spot if spot != cost else None,
            offerings=node_offerings(instance, prices, view.zones, view.capacity_types, checked),
            labels=instance.labels(),
        )

    pool_options = [
        tuple(node_option(i, spec, view) for i in view.instances) for spec, view in zip(specs, views, strict=False)
    ]
    options = pool_options[0]
    primary = views[0]
    storage_note = _storage_note(plan_input, views, pool_options)
    if storage_note:
        notes.append(storage_note)
    running_pairs = [
        (
            node if node.node_pool or not node.in_node_pool else replace(node, node_pool=primary.name),
            known[node.instance_type],
        )
        for node in plan_input.existing_nodes
    ]
    builder = PodGroupBuilder(views, plan_input.workloads, running_pairs)
    all_pool_names = frozenset(view.name for view in views)
    all_nodes = frozenset(node.name for node in plan_input.existing_nodes)
    running_labels = [dict(node.labels) for node, _ in running_pairs] + [
        {NODEPOOL_KEY: node.node_pool} for node, _ in running_pairs if node.node_pool
    ]
    groups = []
    planned: list[Workload] = []
    never: list[NeverRunning] = []
    constrained = len(views) > 1
    for workload in plan_input.workloads:
        try:
            _check_selector(workload, views, [i for _, i in running_pairs], running_labels)
            group = _normalised(builder.group(workload), all_pool_names, all_nodes)
            _check_reachable(workload, group, views, pool_options, plan_input.daemon_sets)
        except NeverRuns as error:
            never.append(NeverRunning(workload.name, workload.peak_pods, str(error)))
            continue
        constrained = (
            constrained
            or group.constrained
            or group.fallback is not None
            or group.pools is not None
            or _chooses_custom_label(group, views)
        )
        groups.append(group)
        planned.append(workload)
    check_topology(planned, groups, views, running_labels)

    def running_option(node: ExistingNode) -> NodeOption:
        pool_view = next((v for v in views if v.name == node.node_pool), primary)
        return node_option(known[node.instance_type], specs[views.index(pool_view)], pool_view)

    running = tuple(
        RunningNode(
            name=node.name,
            option=running_option(node),
            requested=node.requested,
            zone=node.zone,
            capacity_type=node.capacity_type,
            in_node_pool=node.in_node_pool,
            capacity_reported=node.capacity_reported,
            node_pool=node.node_pool if node.in_node_pool else None,
            labels=MappingProxyType(dict(node.labels)),
        )
        for node, _ in running_pairs
    )
    others = tuple(
        NodePoolModel(
            view.name,
            opts,
            parse_limits(spec.limits, f"NodePool {view.name!r} limits"),
            view.zones,
            view.capacity_types,
            spec.weight,
            mins,
            {i.name: i.labels() for i in view.instances},
            _pool_model_labels(spec, view),
        )
        for spec, (view, mins), opts in zip(specs[1:], resolved[1:], pool_options[1:], strict=False)
    )
    primary_spec = specs[0]
    fixed_limits = (
        {key: value for key, value in parse_limits(primary_spec.limits).items() if key in ("pods", "nodes")}
        if primary_spec.limits
        else {}
    )
    notes.extend(f"ignored, may under-plan: {item}" for item in plan_input.ignored)
    notes.extend(f"not planned: {item}" for item in plan_input.not_planned)
    notes.extend(f"given again identically, planned once: {item}" for item in plan_input.repeated)
    daemon_set_pools = {
        ds.name: tuple(view.name for view in views if any(_daemon_runs(ds, i.labels(), view) for i in view.instances))
        for ds in plan_input.daemon_sets
    }
    return _Context(
        options=options,
        instances=MappingProxyType({i.name: i for i in primary.instances}),
        labels=MappingProxyType({i.name: i.labels() for i in primary.instances}),
        zones=primary.zones,
        capacity_types=primary.capacity_types,
        groups=tuple(groups),
        running=running,
        prices=prices,
        notes=tuple(notes),
        pool_name=primary.name,
        pool_limits=MappingProxyType(fixed_limits),
        pool_weight=primary_spec.weight,
        min_values=MappingProxyType(resolved[0][1]),
        other_pools=others,
        constrained=constrained,
        daemon_set_pools=MappingProxyType(daemon_set_pools),
        offerings=OfferingsCheck(
            plan_input.region, checked, info, info.offerings_as_of.get(plan_input.region), tuple(offered)
        ),
        pool_labels=_pool_model_labels(primary_spec, primary),
        never_running=tuple(never),
    )


def _normalised(group: PodGroup, all_pools: frozenset[str], all_nodes: frozenset[str]) -> PodGroup:
    """The group with `pools` / `nodes` left unset where they allow everything (as before they existed)."""
    fallback = _normalised(group.fallback, all_pools, all_nodes) if group.fallback is not None else None
    return replace(
        group,
        pools=None if group.pools == all_pools else group.pools,
        nodes=None if group.nodes == all_nodes else group.nodes,
        fallback=fallback,
    )


def node_options(plan_input: PlanInput) -> tuple[NodeOption, ...]:
    """The NodePool's instance types with capacity, allocatable, DaemonSet overhead and price."""
    return _resolve(plan_input).options


def _node_pools(context: _Context, options: Sequence[NodeOption]) -> tuple[NodePoolModel, ...]:
    """The NodePools as the simulation takes them, or () for one plain NodePool (the flat fields do)."""
    plain = (
        not context.other_pools
        and not context.min_values
        and context.pool_name == "default"
        and not context.pool_labels
    )
    if plain:
        return ()
    primary = NodePoolModel(
        context.pool_name,
        tuple(options),
        dict(context.pool_limits),
        context.zones,
        context.capacity_types,
        context.pool_weight,
        context.min_values,
        context.labels,
        context.pool_labels,
    )
    return (primary,) + context.other_pools


def _scale_up(workload: Workload, given: Mapping[str, HpaScaleUp]) -> HpaScaleUp:
    """How the workload's HPA grows: given by the caller, else its own minReplicas and
    `behavior.scaleUp` (Kubernetes' defaults for what it leaves out)."""
    if workload.name in given:
        return given[workload.name]
    where = f"workload {workload.name!r}: HPA"
    fields: dict[str, Any] = {}
    if workload.min_replicas is not None:
        fields["min_replicas"] = workload.min_replicas
    if workload.scale_up_policies:
        policies = []
        for index, entry in enumerate(workload.scale_up_policies):
            unknown = sorted(set(entry) - {"type", "value", "periodSeconds"})
            if unknown:
                raise SizingInputError(
                    f"{where} behavior.scaleUp.policies[{index}] has {unknown[0]!r}; "
                    "a policy has type, value and periodSeconds"
                )
            missing = [key for key in ("type", "value", "periodSeconds") if key not in entry]
            if missing:
                raise SizingInputError(f"{where} behavior.scaleUp.policies[{index}] lacks {missing[0]}")
            policies.append(ScalingPolicy(entry["type"], entry["value"], entry["periodSeconds"]))
        fields["policies"] = tuple(policies)
    if workload.scale_up_select_policy is not None:
        fields["select_policy"] = workload.scale_up_select_policy
    if workload.scale_up_stabilization_seconds is not None:
        fields["stabilization_window_seconds"] = workload.scale_up_stabilization_seconds
    try:
        return HpaScaleUp(**fields)
    except SizingInputError as error:
        raise SizingInputError(f"{where} {error}") from None


def _scenario_setup(plan_input: PlanInput, context: _Context, options: Sequence[NodeOption]) -> ScenarioSetup:
    unknown = sorted(set(plan_input.hpa_scale_up) - {w.name for w in plan_input.workloads})
    if unknown:
        raise SizingInputError(f"HPA scale-up given for {unknown[0]!r}, which is not a workload")
    by_name = {w.name: w for w in plan_input.workloads}
    peak, surge, ramps = [], [], []
    for group in context.groups:
        workload = by_name[group.workload]
        peak.append(replace(group, count=workload.replicas))
        surge.append(replace(group, count=workload.surge))
        if workload.autoscaled or workload.name in plan_input.hpa_scale_up:
            scale_up = _scale_up(workload, plan_input.hpa_scale_up)
            ramps.append(tuple(replica_steps(scale_up.min_replicas, workload.replicas, scale_up)))
        else:
            ramps.append(((0, workload.replicas),))
    return ScenarioSetup(
        options=tuple(options),
        peak_groups=tuple(peak),
        surge_groups=tuple(surge),
        ramps=tuple(ramps),
        zones=context.zones,
        capacity_types=context.capacity_types,
        running=context.running,
        node_pools=_node_pools(context, options),
        pool_limits=MappingProxyType(dict(context.pool_limits)),
    )


def _changes(reference: Mapping[str, ScenarioRun], runs: Mapping[str, ScenarioRun]) -> dict[str, tuple[Change, ...]]:
    return {name: changes(reference[name].decisions, run.decisions) for name, run in runs.items()}


def _check_limits(
    setup: ScenarioSetup, spec: Mapping[str, Any], unlimited: Mapping[str, ScenarioRun], workers: int
) -> LimitsCheck:
    runs = ScenarioRunner(setup, workers).run_all(parse_limits(spec))
    return LimitsCheck(
        MappingProxyType(dict(spec)), MappingProxyType(runs), MappingProxyType(_changes(unlimited, runs))
    )


def _own_limits(plan_input: PlanInput) -> str:
    """The limits the input sets that every scenario keeps: the planned NodePool's `nodes` and `pods`,
    the other NodePools' limits."""
    named = []
    primary = {k: v for k, v in plan_input.node_pool.limits.items() if k in ("pods", "nodes")}
    for spec, limits in [(plan_input.node_pool, primary)] + [(p, dict(p.limits)) for p in plan_input.other_node_pools]:
        if limits:
            shown = ", ".join(f"{key}: {limits[key]}" for key in sorted(limits))
            named.append(f"NodePool {spec.name or 'default'!r} limits ({shown})")
    return "; ".join(named)


def _findings(
    plan_input: PlanInput, setup: ScenarioSetup, unlimited: Mapping[str, ScenarioRun], workers: int
) -> tuple[Finding, ...]:
    """What the input's own limits change, against the same scenarios with no limits at all."""
    subject = _own_limits(plan_input)
    if not subject:
        return ()
    free = replace(setup, pool_limits={}, node_pools=tuple(replace(pool, limits={}) for pool in setup.node_pools))
    found = {name: c for name, c in _changes(ScenarioRunner(free, workers).run_all({}), unlimited).items() if c}
    return (Finding(subject, MappingProxyType(found)),) if found else ()


# Planned limits this many times above the most capacity any scenario uses come from subtractMax
# reserving the largest candidate of a wide NodePool; the plan then works out narrower ones.
WIDE_LIMITS_FACTOR = 2


def _fleet_types_limits(
    setup: ScenarioSetup, search: LimitSearch, types: Sequence[str], headroom_percent: float, workers: int
) -> NodePoolLimits | None:
    """The limits the NodePool would need if restricted to `types` (the fleet's own), when the
    planned ones are far above what any scenario uses and the restriction decides as the NodePool
    does without limits; else None."""
    used = [run.usage for run in search.planned.values()]
    most = Resources(max(u.cpu for u in used), max(u.memory for u in used), 0)
    limits = search.limits
    wide = limits.cpu_millicores > WIDE_LIMITS_FACTOR * most.cpu or limits.memory_mib > WIDE_LIMITS_FACTOR * most.memory
    if not wide or not types or len(types) == len(setup.options):
        return None
    narrowed = replace(setup, options=tuple(o for o in setup.options if o.name in types))
    advised = checked_limits(narrowed, headroom_percent, workers)
    keeps = all(not changes(search.unlimited[name].decisions, run.decisions) for name, run in advised.unlimited.items())
    narrower = (advised.limits.cpu_millicores, advised.limits.memory_mib) < (limits.cpu_millicores, limits.memory_mib)
    return advised.limits if keeps and narrower else None


def _way_down(
    plan_input: PlanInput, setup: ScenarioSetup, search: LimitSearch, probe: LimitProbe, workers: int
) -> tuple[LimitSearch, WayDownPlan]:
    settings = plan_input.way_down
    assert settings is not None
    min_replicas = {
        workload.name: _scale_up(workload, plan_input.hpa_scale_up).min_replicas
        for workload in plan_input.workloads
        if workload.autoscaled or workload.name in plan_input.hpa_scale_up
    }
    spec = plan_input.node_pool.limits
    current = parse_limits(spec) if spec and {"cpu", "memory"} & set(spec) else None
    return keep_way_down(
        setup, search, probe.runner, settings, min_replicas, plan_input.headroom_percent, current, workers
    )


def _limit_search(probe: LimitProbe, headroom_percent: float, progress: Progress, beside_tasks: bool) -> LimitSearch:
    if beside_tasks:
        # The other processes are the tasks': the search keeps to this one.
        probe.runner.workers = 1
    search = search_from(probe, headroom_percent)
    progress.step("limits and scenarios")
    return search


class _EarlyFleet:
    """The optimal fleet (where the solver applies) and the recommendation's likely outcomes for
    the pods the rollout places on new nodes without limits, worked out beside the limit search:
    the planned rollout places the same pods (the limits keep Karpenter's decisions), and where it
    places exactly these on new nodes the results are the ones the plan would compute after the
    search. An outcome depends only on the restriction's types, so the recommendation takes those
    of the restrictions it ranks whatever pods they were ranked for."""

    def __init__(
        self,
        context: _Context,
        unlimited: ProvisioningResult,
        max_pods_per_node: int | None,
        work_limit: int | None,
        simulate_on: Callable[[Sequence[NodeOption]], ProvisioningResult],
    ):
        self.context = context
        self.work_limit = work_limit
        self.simulate_on = simulate_on
        self.groups = _solver_groups(context, unlimited)
        self.restrictions = likely_restrictions(
            context.options, context.labels, _requested(self.groups), max_pods_per_node
        )

    def tasks(self) -> list[Callable[[], Any]]:
        """The solver first (the longest) when it runs, then each likely restriction's simulation."""
        context = self.context
        outcomes = [functools.partial(outcome_on, r, context.options, self.simulate_on) for r in self.restrictions]
        if self.work_limit is None:
            return list(outcomes)
        solve = functools.partial(
            solved_fleet,
            context.options,
            self.groups,
            context.zones,
            context.capacity_types,
            self.work_limit,
        )
        return [solve, *outcomes]

    def solved(self, found: Sequence[Any]) -> Any:
        """The solver's result among the tasks' results `found`."""
        if self.work_limit is None:
            raise ValueError("no solver ran beside the search")
        return found[0]

    def outcomes(self, found: Sequence[Any]) -> dict[frozenset[str], Outcome]:
        """The likely outcomes among the tasks' results `found`, by their restriction's types."""
        own = found if self.work_limit is None else found[1:]
        return {restriction.type_names: outcome for restriction, outcome in zip(self.restrictions, own, strict=True)}


def _requested(groups: Sequence[PodGroup]) -> Resources:
    """What the groups' pods request together (cpu m, memory MiB, pod slots)."""
    return sum((g.requests.scaled(g.count) for g in groups), Resources())


def _solver_groups(context: _Context, fleet: ProvisioningResult) -> tuple[PodGroup, ...]:
    """The pods `fleet` places on new nodes, as groups: what the optimal fleet must hold too."""
    on_new: dict[str, int] = {}
    for node in fleet.new_nodes:
        for workload, count in node.pods.items():
            on_new[workload] = on_new.get(workload, 0) + count
    return tuple(replace(group, count=on_new.get(group.workload, 0)) for group in context.groups)


PROGRESS_AFTER_SECONDS = 3.0


class Progress(Protocol):
    """Told the name of each phase of a plan as it ends (a benchmark times them)."""

    def step(self, done: str) -> None: ...


class _Progress:
    """One line on stderr per finished step, once a plan has taken more than a few seconds.

    Only the progress lines look at the clock: the plan itself never depends on it.
    """

    def __init__(self, pods: int):
        self.started = time.perf_counter()
        self.pods = pods

    def step(self, done: str) -> None:
        elapsed = time.perf_counter() - self.started
        if elapsed > PROGRESS_AFTER_SECONDS:
            print(f"sizing: {self.pods:,} pods: {done} after {elapsed:.0f} s", file=sys.stderr, flush=True)


def _runnable(plan_input: PlanInput) -> tuple[PlanInput, _Context, tuple[NeverRunning, ...]]:
    """The input without the workloads that can never run, resolved, and those workloads in input
    order. Leaving a workload out can change what the others may use (the zones its node selector
    named, pods the others' affinity counts on), so the rest is resolved again until every workload
    left can run: the plan is then exactly the plan of the input without those workloads. Refuses
    an input whose workloads can all never run, with their reasons."""
    never: list[NeverRunning] = []
    while True:
        context = _resolve(plan_input)
        if not context.never_running:
            return plan_input, context, tuple(never)
        never.extend(context.never_running)
        left_out = {item.workload for item in context.never_running}
        runnable = tuple(w for w in plan_input.workloads if w.name not in left_out)
        if not runnable:
            reasons = list(dict.fromkeys(item.reason for item in never))
            raise SizingInputError(
                reasons[0]
                if len(never) == 1
                else f"none of the {len(never):,} workloads can ever run, so nothing is left to plan: "
                + "; ".join(reasons)
            )
        plan_input = replace(
            plan_input,
            workloads=runnable,
            hpa_scale_up={name: up for name, up in plan_input.hpa_scale_up.items() if name not in left_out},
        )


def plan_capacity(plan_input: PlanInput, progress: Progress | None = None, workers: int = 1) -> CapacityPlan:
    """Plan the NodePool for `plan_input`; raises SizingInputError on input that cannot be planned.

    A workload whose pods can never run is left out and listed in `never_running` with its reason
    (the plan is that of the input without it); an input whose every workload can never run is refused.

    progress: told as each phase ends (by default, a line on stderr once a plan takes a few seconds);
    workers: processes that may simulate side by side (`sizing.planning.side_by_side`: forked, so
    only where the caller has no threads that a fork would break); the plan is byte-identical with
    any number.
    """
    progress = progress or _Progress(sum(workload.peak_pods for workload in plan_input.workloads))
    plan_input, context, never_running = _runnable(plan_input)
    options = context.options
    setup = _scenario_setup(plan_input, context, options)
    progress.step("instance types and pods")

    def all_at_once_on(types: Sequence[NodeOption]) -> ProvisioningResult:
        return all_at_once(replace(setup, options=tuple(types)))

    notes = list(context.notes)
    probe = LimitProbe(setup, workers)
    solves = plan_input.solver_work_limit is not None and not context.constrained and solver_available()
    early_fleet = None
    # With a core to spare, the optimal fleet and the likely candidates are worked out while the
    # limits are searched.
    if workers > 1 and can_fork():
        early_fleet = _EarlyFleet(
            context,
            probe.unlimited[ROLLOUT].result,
            plan_input.max_pods_per_node,
            plan_input.solver_work_limit if solves else None,
            all_at_once_on,
        )
    early_tasks = early_fleet.tasks() if early_fleet is not None else []
    search, solved_early = run_around(
        functools.partial(_limit_search, probe, plan_input.headroom_percent, progress, bool(early_tasks)),
        early_tasks,
        workers,
    )
    way_down = None
    if plan_input.way_down is not None:
        search, way_down = _way_down(plan_input, setup, search, probe, workers)
    fleet = search.planned[ROLLOUT].result
    groups = _solver_groups(context, fleet)
    demand = _requested(groups)

    optimal: OptimalFleet | None = None
    early: dict[frozenset[str], Outcome] | None = None
    gap: FleetGap | None = None
    if not solves and early_fleet is not None and solved_early is not None:
        early = early_fleet.outcomes(solved_early)
    if plan_input.solver_work_limit is not None and context.constrained:
        notes.append(CONSTRAINED_NOTE)
    elif plan_input.solver_work_limit is not None and not solver_available():
        notes.append(SOLVER_MISSING_NOTE)
    elif plan_input.solver_work_limit is not None:
        solve = functools.partial(
            optimal_fleet,
            options,
            groups,
            context.zones,
            context.capacity_types,
            plan_input.solver_work_limit,
            known=fleet,
        )
        if early_fleet is not None and solved_early is not None and groups == early_fleet.groups:
            # The planned fleet places the pods the fleet without limits placed: what was
            # computed beside the limit search is what would be computed now.
            early = early_fleet.outcomes(solved_early)
            solved = solve(solved=early_fleet.solved(solved_early))
        else:
            # The solver in a forked process, while this one simulates the candidates the
            # recommendation will most likely rank (all but the optimum's own types).
            solved, early = run_beside(
                solve,
                functools.partial(
                    likely_outcomes, options, context.labels, all_at_once_on, demand, plan_input.max_pods_per_node
                ),
                workers,
            )
        optimal = solved
        if way_down is not None:
            way_down = with_optimum(
                way_down, options, context.groups, context.zones, context.capacity_types, plan_input.solver_work_limit
            )
        karpenter_cost = sum(node.price for node in fleet.new_nodes)
        percent = (karpenter_cost / solved.cost - 1) * 100 if solved.cost > 0 else None
        gap = FleetGap(len(fleet.new_nodes) - solved.node_count, karpenter_cost - solved.cost, percent)
        progress.step("optimal fleet")

    recommendation = recommend(
        options,
        context.labels,
        all_at_once_on,
        demand,
        max_pods_per_node=plan_input.max_pods_per_node,
        optimum_cost=optimal.cost if optimal else None,
        optimal_types=optimal.instance_types if optimal else (),
        price_unit=context.prices.unit,
        current=fleet,
        workers=workers,
        known_outcomes=early,
    )
    recommended_limits = None
    if recommendation.changes_anything:
        chosen = tuple(o for o in options if o.name in recommendation.chosen.restriction.type_names)
        advised = checked_limits(replace(setup, options=chosen), plan_input.headroom_percent, workers)
        recommendation = confirmed(recommendation, advised.planned[ROLLOUT].result)
        recommended_limits = advised.limits if recommendation.changes_anything else None
    progress.step("recommendation")
    if recommendation.left_by_budget:
        notes.append(
            f"the recommendation simulated the {recommendation.evaluated - 1} instance-type restrictions with the "
            f"lowest cost bounds; {recommendation.left_by_budget} more were left unsimulated (a fixed budget of work)"
        )

    current = None
    if plan_input.node_pool.limits and {"cpu", "memory"} & set(plan_input.node_pool.limits):
        current = _check_limits(setup, plan_input.node_pool.limits, search.unlimited, workers)
    findings = _findings(plan_input, setup, search.unlimited, workers)
    narrower = _fleet_types_limits(setup, search, pool_types(fleet), plan_input.headroom_percent, workers)
    progress.step("current limits and findings")

    return CapacityPlan(
        input=plan_input,
        prices=context.prices,
        instance_types=tuple(o.name for o in options),
        node_options=options,
        fleet=fleet,
        limits=search.limits,
        optimal=optimal,
        gap=gap,
        recommendation=recommendation,
        recommended_limits=recommended_limits,
        current_limits=current,
        notes=tuple(notes),
        scenarios=search.planned,
        unlimited=search.unlimited,
        limits_below=search.below,
        findings=findings,
        daemon_set_pools=context.daemon_set_pools,
        fleet_types_limits=narrower,
        ramps=MappingProxyType(
            {group.workload: ramp for group, ramp in zip(setup.peak_groups, setup.ramps, strict=True)}
        ),
        offerings=context.offerings,
        never_running=never_running,
        way_down=way_down,
    )
