"""The planner's input and its answer: `NodePoolSpec` and `PlanInput` in, `CapacityPlan` out.

Plain frozen dataclasses. `PlanInput` refuses, when built, values no plan can be made of (an empty or
repeated workload list, a headroom, blast-radius cap or solver work limit out of range, a NodePool past
the planner's ceilings), naming the key and what is allowed.

Units: cpu in millicores, memory in MiB, pods as a count, costs per hour in the price table's unit
(USD/hour, or capacity units when the region has no prices).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sizing.binpack.model import DEFAULT_WORK_LIMIT
from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import DEFAULT_EBS_VOLUME_BYTES, KubeletConfig
from sizing.karpenter.ami_families import DEFAULT_AMI_FAMILY
from sizing.karpenter.catalog import CatalogInfo, InstanceType
from sizing.karpenter.limits import NodePoolLimits
from sizing.karpenter.offerings import OfferingsCheck
from sizing.karpenter.pricing import PriceTable, SpotDiscount
from sizing.karpenter.simulation import NodeOption, ProvisioningResult
from sizing.kube.hpa_scale_up import HpaScaleUp
from sizing.kube.scheduling import Taint
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, ExistingNode, Workload, check_ceilings
from sizing.planning.ceilings import check_node_pool
from sizing.planning.decisions import Change
from sizing.planning.fleet import OptimalFleet
from sizing.planning.recommendation import Recommendation
from sizing.planning.scenarios import ScenarioRun
from sizing.planning.way_down import WayDownPlan, WayDownSettings

# The getting-started NodePool of the Karpenter docs, used when a description names no requirements.
GETTING_STARTED_REQUIREMENTS: tuple[Mapping[str, Any], ...] = (
    MappingProxyType({"key": "kubernetes.io/arch", "operator": "In", "values": ("amd64",)}),
    MappingProxyType({"key": "kubernetes.io/os", "operator": "In", "values": ("linux",)}),
    MappingProxyType({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ("on-demand",)}),
    MappingProxyType({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ("c", "m", "r")}),
    MappingProxyType({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ("2",)}),
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
