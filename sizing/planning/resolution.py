"""The planner's input resolved into what the simulation takes: `resolve(PlanInput) -> PlanContext`.

In steps: the catalog and its region; each NodePool's instance types (`sizing.planning.pool_options`);
their prices; the node options; the workloads' pods as groups, those that can never run set apart
(`sizing.planning.input_checks`); the running nodes; the other NodePools. `runnable_input` resolves
again without the workloads that can never run until every one left can.

Units: cpu in millicores, memory in MiB, pods as a count, prices in the price table's unit (USD/hour).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from sizing.errors import NeverRuns, SizingInputError
from sizing.karpenter.catalog import CatalogInfo, InstanceType, catalog_by_name, load_catalog
from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.limits import parse_limits
from sizing.karpenter.offerings import OfferingsCheck, PoolOfferings, offerings_recorded
from sizing.karpenter.pricing import PriceTable, check_catalog_region, price_table
from sizing.karpenter.simulation import NodeOption, NodePoolModel, PodGroup, RunningNode
from sizing.kube.workloads import ExistingNode, Workload
from sizing.planning.ceilings import check_topology
from sizing.planning.input_checks import check_reachable, check_selector
from sizing.planning.plan_types import NeverRunning, NodePoolSpec, PlanInput
from sizing.planning.pod_groups import PodGroupBuilder, PoolView, is_custom_key
from sizing.planning.pool_options import (
    NODEPOOL_KEY,
    all_pools,
    catalog_info,
    daemon_runs,
    mentioned_zones,
    node_option,
    pool_model_labels,
    pool_view,
    storage_note,
)


@dataclass(frozen=True)
class PlanContext:
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


def chooses_custom_label(group: PodGroup, views: Sequence[PoolView]) -> bool:
    """Whether the group's pods require a custom label a NodePool gives more than one value, so that pods
    asking for different values cannot share a node (which the bin-packing solver does not model)."""
    keys = {requirement.key for requirement in group.labels if is_custom_key(requirement.key)}
    return any(
        requirement.key in keys and (requirement.complement or len(requirement.values) != 1)
        for view in views
        for requirement in view.label_requirements
    )


def resolve(plan_input: PlanInput) -> PlanContext:
    """The input resolved in steps: the catalog, each NodePool's instance types, their prices, the
    node options (capacity, allocatable, DaemonSet overhead, offerings), the pods grouped and checked
    (those that can never run set apart), the running nodes and the NodePools as the simulation
    takes them. Raises SizingInputError on input that cannot be planned."""
    catalog = plan_input.catalog if plan_input.catalog is not None else load_catalog()
    known = catalog_by_name(catalog)
    info = catalog_info(plan_input)
    check_catalog_region(info, plan_input.region, "catalog", "region")
    notes: list[str] = []
    offered: list[PoolOfferings] = []
    specs = all_pools(plan_input)
    resolved = _pool_views(plan_input, specs, catalog, info, notes, offered)
    views = [view for view, _ in resolved]
    _check_existing_types(plan_input, known)
    prices = _prices(plan_input, views, known, catalog, info)
    if prices.note:
        notes.append(prices.note)
    zone_note = info.zone_note()
    if zone_note:
        notes.append(zone_note)
    checked = offerings_recorded(info, plan_input.region)

    def option(instance: InstanceType, spec: NodePoolSpec, view: PoolView) -> NodeOption:
        return node_option(instance, spec, view, plan_input.daemon_sets, prices, checked)

    pool_options = [
        tuple(option(i, spec, view) for i in view.instances) for spec, view in zip(specs, views, strict=False)
    ]
    primary = views[0]
    storage = storage_note(plan_input, views, pool_options)
    if storage:
        notes.append(storage)
    running_pairs = _running_pairs(plan_input, primary, known)
    groups, never, constrained = _pod_groups(plan_input, views, pool_options, running_pairs)
    running = _running_nodes(running_pairs, specs, views, option)
    others = _other_pools(specs[1:], resolved[1:], pool_options[1:])
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
        ds.name: tuple(view.name for view in views if any(daemon_runs(ds, i.labels(), view) for i in view.instances))
        for ds in plan_input.daemon_sets
    }
    return PlanContext(
        options=pool_options[0],
        instances=MappingProxyType({i.name: i for i in primary.instances}),
        labels=MappingProxyType({i.name: i.labels() for i in primary.instances}),
        zones=primary.zones,
        capacity_types=primary.capacity_types,
        groups=groups,
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
        pool_labels=pool_model_labels(primary_spec, primary),
        never_running=never,
    )


def _pool_views(
    plan_input: PlanInput,
    specs: Sequence[NodePoolSpec],
    catalog: Sequence[InstanceType],
    info: CatalogInfo,
    notes: list[str],
    offered: list[PoolOfferings],
) -> list[tuple[PoolView, dict[str, int]]]:
    """Each NodePool resolved against the catalog (its view and its minValues), the planned one first;
    refuses NodePools that share a name."""
    mentioned = mentioned_zones(plan_input)
    names = [spec.name or "default" for spec in specs]
    if len(set(names)) != len(names):
        raise SizingInputError(f"NodePool names must be unique, got {names}")
    return [
        pool_view(
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


def _check_existing_types(plan_input: PlanInput, known: Mapping[str, InstanceType]) -> None:
    """Refuse an existing node whose instance type the catalog does not list."""
    for node in plan_input.existing_nodes:
        if node.instance_type not in known:
            raise SizingInputError(
                f"existing node {node.name!r}: instance type {node.instance_type!r} is not in the catalog"
            )


def _prices(
    plan_input: PlanInput,
    views: Sequence[PoolView],
    known: Mapping[str, InstanceType],
    catalog: Sequence[InstanceType],
    info: CatalogInfo,
) -> PriceTable:
    """The price table of every type the NodePools may launch and the existing nodes run."""
    priced_names = {i.name for view in views for i in view.instances} | {
        n.instance_type for n in plan_input.existing_nodes
    }
    priced = [known[name] for name in sorted(priced_names)]
    discount = plan_input.spot_discount
    return price_table(
        priced,
        plan_input.region,
        plan_input.price_overrides,
        catalog,
        plan_input.price_overrides_key,
        catalog_info=info,
        spot_discount_percent=discount.percent if discount else None,
        spot_discount_field=discount.set_by if discount else "capacity.spotDiscountPercent or --spot-discount",
    )


def _running_pairs(
    plan_input: PlanInput, primary: PoolView, known: Mapping[str, InstanceType]
) -> list[tuple[ExistingNode, InstanceType]]:
    """Each existing node with its instance type; a node of the NodePool that names none is the
    planned NodePool's."""
    return [
        (
            node if node.node_pool or not node.in_node_pool else replace(node, node_pool=primary.name),
            known[node.instance_type],
        )
        for node in plan_input.existing_nodes
    ]


def _pod_groups(
    plan_input: PlanInput,
    views: Sequence[PoolView],
    pool_options: Sequence[Sequence[NodeOption]],
    running_pairs: Sequence[tuple[ExistingNode, InstanceType]],
) -> tuple[tuple[PodGroup, ...], tuple[NeverRunning, ...], bool]:
    """The workloads' pods as groups, the workloads that can never run (with why), and whether any
    group uses what the bin-packing solver does not model; checks the topology ceilings."""
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
            check_selector(workload, views, [i for _, i in running_pairs], running_labels)
            group = normalised(builder.group(workload), all_pool_names, all_nodes)
            check_reachable(workload, group, views, pool_options, plan_input.daemon_sets)
        except NeverRuns as error:
            never.append(NeverRunning(workload.name, workload.peak_pods, str(error)))
            continue
        constrained = (
            constrained
            or group.constrained
            or group.fallback is not None
            or group.pools is not None
            or chooses_custom_label(group, views)
        )
        groups.append(group)
        planned.append(workload)
    check_topology(planned, groups, views, running_labels)
    return tuple(groups), tuple(never), constrained


def _running_nodes(
    running_pairs: Sequence[tuple[ExistingNode, InstanceType]],
    specs: Sequence[NodePoolSpec],
    views: Sequence[PoolView],
    option: Callable[[InstanceType, NodePoolSpec, PoolView], NodeOption],
) -> tuple[RunningNode, ...]:
    """The existing nodes as the simulation takes them, each with the node option of its NodePool
    (the planned one for a node of none)."""

    running = []
    for node, instance in running_pairs:
        own_view = next((v for v in views if v.name == node.node_pool), views[0])
        running.append(
            RunningNode(
                name=node.name,
                option=option(instance, specs[views.index(own_view)], own_view),
                requested=node.requested,
                zone=node.zone,
                capacity_type=node.capacity_type,
                in_node_pool=node.in_node_pool,
                capacity_reported=node.capacity_reported,
                node_pool=node.node_pool if node.in_node_pool else None,
                labels=MappingProxyType(dict(node.labels)),
            )
        )
    return tuple(running)


def _other_pools(
    specs: Sequence[NodePoolSpec],
    resolved: Sequence[tuple[PoolView, dict[str, int]]],
    pool_options: Sequence[tuple[NodeOption, ...]],
) -> tuple[NodePoolModel, ...]:
    """The NodePools beside the planned one, as the simulation takes them (their limits as given)."""
    return tuple(
        NodePoolModel(
            view.name,
            opts,
            parse_limits(spec.limits, f"NodePool {view.name!r} limits"),
            view.zones,
            view.capacity_types,
            spec.weight,
            mins,
            {i.name: i.labels() for i in view.instances},
            pool_model_labels(spec, view),
        )
        for spec, (view, mins), opts in zip(specs, resolved, pool_options, strict=False)
    )


def normalised(group: PodGroup, all_pools: frozenset[str], all_nodes: frozenset[str]) -> PodGroup:
    """The group with `pools` / `nodes` left unset where they allow everything (as before they existed)."""
    fallback = normalised(group.fallback, all_pools, all_nodes) if group.fallback is not None else None
    return replace(
        group,
        pools=None if group.pools == all_pools else group.pools,
        nodes=None if group.nodes == all_nodes else group.nodes,
        fallback=fallback,
    )


def runnable_input(plan_input: PlanInput) -> tuple[PlanInput, PlanContext, tuple[NeverRunning, ...]]:
    """The input without the workloads that can never run, resolved, and those workloads in input
    order. Leaving a workload out can change what the others may use (the zones its node selector
    named, pods the others' affinity counts on), so the rest is resolved again until every workload
    left can run: the plan is then exactly the plan of the input without those workloads. Refuses
    an input whose workloads can all never run, with their reasons."""
    never: list[NeverRunning] = []
    while True:
        context = resolve(plan_input)
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
