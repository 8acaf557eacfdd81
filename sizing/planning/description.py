"""The workload description file (YAML) read into a `PlanInput`.

The format is documented in docs/sizing-input.md and defined by the models of
`sizing.planning.description_model`. Bad input raises one SizingInputError
that names every problem on one line: its place as written in the file
(`workloads[0].requests.cpu`; list positions count from 0), the value and what
is allowed. `plan_input` maps a validated description to the planner's input,
one small function per kind of entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import (
    BlockDeviceMapping,
    KubeletConfig,
    ReservedResources,
    block_device_storage,
    nodefs_available,
)
from sizing.kube.objects import ClusterObjects
from sizing.kube.quantities import cpu_millicores, memory_mib, storage_bytes, storage_mib
from sizing.kube.resources import Resources
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, ExistingNode, Workload
from sizing.planning.description_errors import describe_problem
from sizing.planning.description_model import (
    DaemonSetEntry,
    Description,
    ExistingNodeEntry,
    Kubelet,
    Reserved,
    WorkloadEntry,
)
from sizing.planning.objects import InputFile, check_unmodelled, not_planned_notes, objects_of, read_inputs
from sizing.planning.plan_types import GETTING_STARTED_REQUIREMENTS, NodePoolSpec, PlanInput
from sizing.planning.zones import check_plan_zones


def workload(entry: WorkloadEntry) -> Workload:
    """A description's workload entry as the planner's Workload."""
    return Workload(
        name=entry.name,
        cpu_millicores=0 if entry.requests.cpu is None else cpu_millicores(entry.requests.cpu, "requests.cpu"),
        memory_mib=0 if entry.requests.memory is None else memory_mib(entry.requests.memory, "requests.memory"),
        ephemeral_storage_mib=_storage(entry.requests.ephemeral_storage),
        replicas=entry.max_replicas,
        max_surge=entry.max_surge,
        node_selector=entry.node_selector,
    )


def daemon_set(entry: DaemonSetEntry) -> DaemonSet:
    requests = entry.requests
    return DaemonSet(
        name=entry.name,
        cpu_millicores=0 if requests.cpu is None else cpu_millicores(requests.cpu, "requests.cpu"),
        memory_mib=0 if requests.memory is None else memory_mib(requests.memory, "requests.memory"),
        node_selector=entry.node_selector,
        ephemeral_storage_mib=_storage(requests.ephemeral_storage),
    )


def _storage(value: Any) -> int:
    """An ephemeral-storage request in MiB (0 when left out)."""
    return 0 if value is None else storage_mib(value, "requests.ephemeral-storage")


def existing_node(entry: ExistingNodeEntry) -> ExistingNode:
    requested = entry.requested
    return ExistingNode(
        name=entry.name,
        instance_type=entry.instance_type,
        requested=Resources(
            0 if requested.cpu is None else cpu_millicores(requested.cpu, "requested.cpu"),
            0 if requested.memory is None else memory_mib(requested.memory, "requested.memory"),
            requested.pods,
            _storage(requested.ephemeral_storage),
        ),
        zone=entry.zone,
        capacity_type=entry.capacity_type,
        in_node_pool=entry.in_node_pool,
        capacity_reported=entry.capacity_reported,
    )


def _reserved(reserved: Reserved | None) -> ReservedResources | None:
    if reserved is None:
        return None
    return ReservedResources(
        cpu=None if reserved.cpu is None else cpu_millicores(reserved.cpu, "cpu"),
        memory=None if reserved.memory is None else memory_mib(reserved.memory, "memory"),
        ephemeral_storage=None
        if reserved.ephemeral_storage is None
        else storage_mib(reserved.ephemeral_storage, "ephemeral-storage"),
    )


def _kubelet(kubelet: Kubelet | None) -> KubeletConfig | None:
    if kubelet is None:
        return None
    eviction = kubelet.eviction_hard.memory_available if kubelet.eviction_hard else None
    nodefs = kubelet.eviction_hard.nodefs_available if kubelet.eviction_hard else None
    nodefs_percent, nodefs_mib = (None, None) if nodefs is None else nodefs_available(nodefs, "nodefs.available")
    return KubeletConfig(
        max_pods=kubelet.max_pods,
        pods_per_core=kubelet.pods_per_core,
        kube_reserved=_reserved(kubelet.kube_reserved),
        system_reserved=_reserved(kubelet.system_reserved),
        eviction_hard_memory_mib=None if eviction is None else memory_mib(eviction, "memory.available"),
        eviction_hard_nodefs_percent=nodefs_percent,
        eviction_hard_nodefs_mib=nodefs_mib,
    )


def plan_input(
    description: Description,
    base_dir: Path = Path("."),
    extra_manifests: Sequence[Path | InputFile] = (),
    accept_unmodelled: bool = False,
) -> PlanInput:
    """The planner's input for a validated description; its `manifests` paths are relative to
    `base_dir`, and `extra_manifests` (paths, or inputs already read) add to them.

    The manifests are read as every Kubernetes object is (`sizing.kube.objects`): their
    Deployments, StatefulSets, Jobs, HPAs and DaemonSets are planned with every scheduling
    constraint, what is not modelled stops the plan unless `accept_unmodelled`, and objects that
    place no pods are listed as not planned. A NodePool, EC2NodeClass, Node or NodeClaim among
    them is refused: the description's `nodePool` and `existingNodes` say those."""
    workloads = [workload(entry) for entry in description.workloads]
    daemon_sets = [daemon_set(entry) for entry in description.daemon_sets]
    if description.default_daemon_sets:
        daemon_sets = list(DEFAULT_DAEMON_SETS) + daemon_sets
    paths = [base_dir / path for path in description.manifests]
    paths += [item for item in extra_manifests if not isinstance(item, InputFile)]
    inputs = read_inputs(paths, what="manifest") + [item for item in extra_manifests if isinstance(item, InputFile)]
    ignored: tuple[str, ...] = ()
    not_planned: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    doubtful: tuple[tuple[str, str], ...] = ()
    if inputs:
        described = [item.where for item in inputs if item.is_description]
        if described:
            raise SizingInputError(
                f"{described[0]} is a workload description, given as a manifest; plan one description at a time"
            )
        objects = objects_of(inputs)
        _refuse_cluster_objects(objects)
        ignored = check_unmodelled(objects, accept_unmodelled)
        workloads += objects.workloads
        daemon_sets += objects.daemon_sets
        not_planned = not_planned_notes(objects.not_planned)
        repeated = objects.repeated
        doubtful = objects.doubtful
    if not workloads:
        raise SizingInputError("the description has no workloads; list some under 'workloads' or 'manifests'")
    pool = description.node_pool
    requirements = pool.requirements if "requirements" in pool.model_fields_set else GETTING_STARTED_REQUIREMENTS
    result = PlanInput(
        workloads=tuple(workloads),
        node_pool=NodePoolSpec(
            requirements=tuple(requirements),
            kubelet=_kubelet(pool.kubelet),
            limits=dict(pool.limits or {}),
            name=pool.name,
            labels=dict(pool.labels),
            ami_family=pool.ami_family,
            storage_bytes=block_device_storage(
                pool.ami_family,
                ()
                if pool.root_volume_size is None
                else (BlockDeviceMapping(None, storage_bytes(pool.root_volume_size, "rootVolumeSize"), True),),
            ),
        ),
        region=description.region,
        zones=tuple(description.zones),
        daemon_sets=tuple(daemon_sets),
        existing_nodes=tuple(existing_node(entry) for entry in description.existing_nodes),
        headroom_percent=description.headroom_percent,
        max_pods_per_node=description.max_pods_per_node,
        price_overrides=dict(description.price_overrides),
        solver_work_limit=description.solver_work_limit,
        ignored=ignored,
        not_planned=not_planned,
        repeated=repeated,
        doubtful=doubtful,
    )
    check_plan_zones(result, "zones", "region")
    return result


def _refuse_cluster_objects(objects: ClusterObjects) -> None:
    named = [f"NodePool {pool.name}" for pool in objects.node_pools]
    named += [f"EC2NodeClass {node_class.name}" for node_class in objects.node_classes]
    named += [f"node {node.name}" for node in objects.nodes]
    if named:
        raise SizingInputError(
            f"the description's manifests hold {', '.join(named)}: a description plans its own `nodePool` (and "
            "`existingNodes`), so these would not be used. Plan the Kubernetes objects without a description to "
            "use them, or write their settings into the description"
        )


def validate_description(document: Any) -> Description:
    """The description model of a parsed YAML document; SizingInputError names every problem."""
    try:
        return Description.model_validate(document)
    except ValidationError as error:
        raise SizingInputError("; ".join(describe_problem(detail, document) for detail in error.errors())) from None


def plan_input_from_document(
    document: Any,
    base_dir: Path = Path("."),
    extra_manifests: Sequence[Path | InputFile] = (),
    accept_unmodelled: bool = False,
) -> PlanInput:
    """A PlanInput from a parsed description; manifest paths are relative to `base_dir`."""
    return plan_input(validate_description(document), base_dir, extra_manifests, accept_unmodelled)


def read_description(
    path: Path, extra_manifests: Sequence[Path | InputFile] = (), accept_unmodelled: bool = False
) -> PlanInput:
    """A PlanInput from a description file; `extra_manifests` add to its `manifests` list."""
    (description,) = read_inputs([path], what="description")
    return plan_input_from_input(description, extra_manifests, accept_unmodelled)


def plan_input_from_input(
    description: InputFile, extra_manifests: Sequence[Path | InputFile] = (), accept_unmodelled: bool = False
) -> PlanInput:
    """A PlanInput from a description read by `read_inputs`."""
    if not description.is_description:
        raise SizingInputError(
            f"{description.where} is not a workload description (one YAML map of the keys of docs/sizing-input.md)"
        )
    document = next(document for document in description.documents if document is not None)
    return plan_input_from_document(document, description.base_dir, extra_manifests, accept_unmodelled)
