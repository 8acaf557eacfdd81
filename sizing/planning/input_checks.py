"""The checks that set a workload apart, or refuse the input, before anything is simulated.

Each raises `NeverRuns` (naming the workload and what stands in the way) when no node the pods may use
could ever take them: a node selector no NodePool and no running node meets, no instance type with room
for one pod, a host port a DaemonSet binds on every such node. A selector key the planner does not
model, or DaemonSets that leave no room for any pod, stop the plan with `SizingInputError`.

Units: cpu in millicores, memory and ephemeral storage in MiB, pods as a count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sizing.errors import NeverRuns, SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.karpenter.labels import LabelRequirement, pool_admits
from sizing.karpenter.requirements import CAPACITY_TYPE_KEY, INSTANCE_KEYS, ZONE_KEY
from sizing.karpenter.simulation import NodeOption, PodGroup
from sizing.kube.workloads import DaemonSet, Workload
from sizing.planning.pod_groups import UNMODELLED_WELL_KNOWN, PoolView, is_custom_key, unmodelled_key
from sizing.planning.pool_options import NODEPOOL_KEY, ports_of


def check_host_ports(
    workload: Workload, group: PodGroup, options: Sequence[NodeOption], daemon_sets: Sequence[DaemonSet]
) -> None:
    """Raise NeverRuns when a DaemonSet binds one of the pod's host ports on every node the pod may use."""
    ports = ports_of(workload.scheduling)
    allowed = [o for o in options if group.allowed_types is None or o.name in group.allowed_types]
    if not ports or not allowed or any(not (o.daemon_ports & ports) for o in allowed):
        return
    taken = sorted({p for o in allowed for p in o.daemon_ports} & ports)
    owners = sorted(ds.name for ds in daemon_sets if ports_of(ds.scheduling) & ports)
    raise NeverRuns(
        workload.name,
        f"workload {workload.name!r}: host port {', '.join(f'{port}/{proto}' for proto, port in taken)} is "
        f"bound by DaemonSet {', '.join(owners)} on every node the pods may use, so they can never run; "
        "change the port or keep the DaemonSet off the workload's NodePool",
    )


def check_selector(
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


def check_pods_fit(workload: Workload, group: PodGroup, options: Sequence[NodeOption]) -> None:
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


def check_reachable(
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
    check_pods_fit(workload, fitting[-1], reachable(fitting[-1]))
    check_host_ports(workload, fitting[-1], reachable(fitting[-1]), daemon_sets)
