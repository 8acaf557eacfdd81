"""Each NodePool resolved against the catalog, and each of its instance types as a node option.

A NodePool's requirements filter the catalog to the types its AMI family can launch and the region
and zones offer (`pool_view`); a type's node option carries Karpenter's capacity and allocatable under
the EC2NodeClass's kubelet settings and root volume, what the DaemonSets that run there request and
the host ports they bind, its prices and offerings (`node_option`).

Units: cpu in millicores, memory and ephemeral storage in MiB, pods as a count, prices in USD/hour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import allocatable, capacity
from sizing.karpenter.ami_families import launchable
from sizing.karpenter.catalog import CatalogInfo, InstanceType, read_catalog
from sizing.karpenter.crd_rules import TEMPLATE_LABELS_PATH, check_part
from sizing.karpenter.labels import WELL_KNOWN, LabelRequirement, merged, pool_admits, restriction, shown
from sizing.karpenter.offerings import PoolOfferings, node_offerings, offered_types
from sizing.karpenter.pricing import PriceTable
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
from sizing.karpenter.simulation import NodeOption
from sizing.kube.resources import Resources
from sizing.kube.scheduling import LabelExpression, PodScheduling, tolerates_all
from sizing.kube.workloads import DaemonSet
from sizing.planning.plan_types import NodePoolSpec, PlanInput
from sizing.planning.pod_groups import UNMODELLED_WELL_KNOWN, PoolView, is_custom_key

NODEPOOL_KEY = "karpenter.sh/nodepool"

SPOT_NOTE = (
    "the simulation launches the cheapest spot offering; Karpenter asks EC2 for price-capacity-optimized "
    "spot, which weighs the capacity of each pool and is not strictly the cheapest"
)
RESERVED_NOTE = "capacity reservations are not modelled; the plan uses on-demand and spot only"


def daemon_runs(daemon_set: DaemonSet, instance_labels: Mapping[str, str], pool: PoolView) -> bool:
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


def daemon_overhead(daemon_sets: Sequence[DaemonSet], labels: Mapping[str, str], pool: PoolView) -> Resources:
    return sum((ds.requests for ds in daemon_sets if daemon_runs(ds, labels, pool)), Resources())


def ports_of(scheduling: PodScheduling) -> frozenset[tuple[str, int]]:
    return frozenset((port.protocol, port.port) for port in scheduling.host_ports)


def daemon_ports(
    daemon_sets: Sequence[DaemonSet], labels: Mapping[str, str], pool: PoolView
) -> frozenset[tuple[str, int]]:
    """The host ports the DaemonSets that run on such a node bind there."""
    return frozenset().union(*[ports_of(ds.scheduling) for ds in daemon_sets if daemon_runs(ds, labels, pool)])


def all_pools(plan_input: PlanInput) -> tuple[NodePoolSpec, ...]:
    return (plan_input.node_pool,) + tuple(plan_input.other_node_pools)


def mentioned_zones(plan_input: PlanInput) -> list[str]:
    zones = set(plan_input.zones)
    for pool in all_pools(plan_input):
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


STORAGE_NOTE_NAMED = 5  # workloads named in the ephemeral-storage note; the rest are counted


def storage_note(
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


def pool_view(
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
        merged(custom_label_requirements(requirements) + template_label_requirements(spec, where)),
    )
    min_values = {r.key: r.min_values for r in requirements if r.min_values is not None and r.key in INSTANCE_KEYS}
    return view, min_values


def catalog_info(plan_input: PlanInput) -> CatalogInfo:
    if plan_input.catalog_info is not None:
        return plan_input.catalog_info
    return read_catalog().info if plan_input.catalog is None else CatalogInfo(path="PlanInput.catalog")


def template_label_requirements(spec: NodePoolSpec, where: str) -> tuple[LabelRequirement, ...]:
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


def pool_model_labels(spec: NodePoolSpec, view: PoolView) -> tuple[LabelRequirement, ...]:
    """What the NodePool asks of its nodes' labels other than zone and capacity type (for the simulation)."""
    own = tuple(
        LabelRequirement.of(r.key, r.operator, r.values)
        for r in parse_requirements(list(spec.requirements))
        if r.key in INSTANCE_KEYS
    )
    return merged(own + view.label_requirements)


def node_option(
    instance: InstanceType,
    spec: NodePoolSpec,
    view: PoolView,
    daemon_sets: Sequence[DaemonSet],
    prices: PriceTable,
    offerings_checked: bool,
) -> NodeOption:
    """The instance type as a node of this NodePool: its capacity and allocatable (MiB, millicores,
    pod slots) under the EC2NodeClass's kubelet settings and root volume, the DaemonSets it carries
    and their host ports, its price and spot price (USD/hour) and its offerings in the pool's zones."""
    cost = prices.cost(instance.name)
    spot = prices.spot.uniform_cost(cost) if "spot" in view.capacity_types else None
    return NodeOption(
        name=instance.name,
        capacity=capacity(instance, spec.kubelet, storage_bytes=spec.storage_bytes),
        allocatable=allocatable(instance, spec.kubelet, storage_bytes=spec.storage_bytes),
        price=cost,
        daemon_overhead=daemon_overhead(daemon_sets, instance.labels(), view),
        daemon_ports=daemon_ports(daemon_sets, instance.labels(), view),
        # Spot at on-demand needs no price of its own, and keeps the launch on its fast path.
        spot_price=spot if spot != cost else None,
        offerings=node_offerings(instance, prices, view.zones, view.capacity_types, offerings_checked),
        labels=instance.labels(),
    )
