"""A `PlanInput` from Kubernetes objects: NodePools (the heaviest planned, the others as overflow),
their EC2NodeClass (kubelet, AMI family; AL2023 when the class is not given), workloads, HPAs,
DaemonSets and existing nodes; and the input files of `python -m sizing plan`, read and told apart
(Kubernetes objects or a workload description).

A NodePool or EC2NodeClass that breaks a rule of its CRD (`sizing.karpenter.crd_rules`: the CEL
rules, required fields and bounds, as the API server applies them) is refused first, with the
object, the field path and the rule's message. Unmodelled fields and kinds stop the plan with the object and field named, unless
`accept_unmodelled` is set; then they are listed in the report as "ignored, may under-plan".
Objects that place no pods (Services, PodDisruptionBudgets, ...) are listed as not planned, and
objects given again identically as planned once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sizing.errors import SizingInputError, echo
from sizing.karpenter.allocatable import (
    BlockDeviceMapping,
    KubeletConfig,
    ReservedResources,
    block_device_storage,
    nodefs_available,
)
from sizing.karpenter.ami_families import DEFAULT_AMI_FAMILY
from sizing.karpenter.crd_rules import check_object
from sizing.kube.objects import ClusterObjects, NodeClassObject, ObjectCounter, read_parsed_objects
from sizing.kube.quantities import cpu_millicores, memory_mib, storage_bytes, storage_mib
from sizing.kube.safe_yaml import decode_text, load_documents, read_file_bytes, read_stream_bytes
from sizing.kube.workloads import DEFAULT_DAEMON_SETS
from sizing.planning.plan_types import NodePoolSpec, PlanInput
from sizing.planning.zones import check_plan_zones

KUBELET_KEYS = ("maxPods", "podsPerCore", "kubeReserved", "systemReserved", "evictionHard")
NODEFS_AVAILABLE = "nodefs.available"
STDIN = "-"


def _reserved(value: Any, where: str) -> ReservedResources:
    value = value or {}
    return ReservedResources(
        cpu=cpu_millicores(value["cpu"], f"{where}.cpu") if "cpu" in value else None,
        memory=memory_mib(value["memory"], f"{where}.memory") if "memory" in value else None,
        ephemeral_storage=storage_mib(value["ephemeral-storage"], f"{where}.ephemeral-storage")
        if "ephemeral-storage" in value
        else None,
    )


def block_device_mappings(node_class: NodeClassObject) -> tuple[BlockDeviceMapping, ...]:
    """The EC2NodeClass's `spec.blockDeviceMappings`, read for the node's ephemeral storage."""
    mappings = []
    for index, mapping in enumerate(node_class.block_device_mappings):
        where = f"EC2NodeClass {node_class.name}: spec.blockDeviceMappings[{index}]"
        ebs = mapping.get("ebs") or {}
        if not isinstance(ebs, Mapping):
            raise SizingInputError(f"{where}.ebs must be an object, got {echo(ebs)}")
        root = mapping.get("rootVolume", False)
        if not isinstance(root, bool):
            raise SizingInputError(f"{where}.rootVolume must be true or false, got {echo(root)}")
        device = mapping.get("deviceName")
        size = ebs.get("volumeSize")
        mappings.append(
            BlockDeviceMapping(
                device_name=None if device is None else str(device),
                volume_size_bytes=None if size is None else storage_bytes(size, f"{where}.ebs.volumeSize"),
                root_volume=root,
            )
        )
    # More than one root volume is refused before, by the CRD's own rule (`check_crd_rules`).
    return tuple(mappings)


def node_storage(node_class: NodeClassObject | None) -> int:
    """A node's ephemeral-storage capacity in bytes for NodePools of this EC2NodeClass (None: not given,
    the default AL2023 volume)."""
    if node_class is None:
        return block_device_storage(DEFAULT_AMI_FAMILY)
    return block_device_storage(node_class.ami_family or DEFAULT_AMI_FAMILY, block_device_mappings(node_class))


def kubelet_config(node_class: NodeClassObject) -> KubeletConfig | None:
    kubelet = node_class.kubelet
    if not kubelet:
        return None
    where = f"EC2NodeClass {node_class.name}: spec.kubelet"
    eviction = (kubelet.get("evictionHard") or {}).get("memory.available")
    if isinstance(eviction, str) and eviction.endswith("%"):
        raise SizingInputError(f"{where}.evictionHard.memory.available: percentages ({eviction!r}) are not supported")
    nodefs = (kubelet.get("evictionHard") or {}).get(NODEFS_AVAILABLE)
    nodefs_percent, nodefs_mib = (
        (None, None) if nodefs is None else nodefs_available(nodefs, f"{where}.evictionHard.{NODEFS_AVAILABLE}")
    )
    return KubeletConfig(
        max_pods=kubelet.get("maxPods"),
        pods_per_core=kubelet.get("podsPerCore"),
        kube_reserved=_reserved(kubelet["kubeReserved"], f"{where}.kubeReserved")
        if "kubeReserved" in kubelet
        else None,
        system_reserved=(
            _reserved(kubelet["systemReserved"], f"{where}.systemReserved") if "systemReserved" in kubelet else None
        ),
        eviction_hard_memory_mib=memory_mib(eviction, f"{where}.evictionHard") if eviction else None,
        eviction_hard_nodefs_percent=nodefs_percent,
        eviction_hard_nodefs_mib=nodefs_mib,
    )


def check_unmodelled(objects: ClusterObjects, accept_unmodelled: bool) -> tuple[str, ...]:
    """What the planner does not model, described; it stops the plan unless accepted."""
    described = tuple(item.describe() for item in objects.unmodelled)
    if described and not accept_unmodelled:
        raise SizingInputError(
            f"the input uses what the planner does not model: {'; '.join(described)}. Remove it, or pass "
            "--accept-unmodelled to plan anyway (the report lists it as ignored, may under-plan)"
        )
    return described


def check_crd_rules(objects: ClusterObjects) -> None:
    """Refuse a NodePool or EC2NodeClass that breaks a rule of its CRD, as the API server would."""
    for pool in objects.node_pools:
        check_object(pool.document, "NodePool", f"NodePool {pool.name}")
    for node_class in objects.node_classes:
        check_object(node_class.document, "EC2NodeClass", f"EC2NodeClass {node_class.name}")


def plan_input_from_objects(
    objects: ClusterObjects,
    accept_unmodelled: bool = False,
    zones: Sequence[str] = (),
    region: str = "us-east-1",
    default_daemon_sets: bool = True,
    zones_key: str = "--zones",
    region_key: str = "--region",
) -> PlanInput:
    """The planner's input for Kubernetes objects. zones_key / region_key: how messages name the
    zones and the region (command-line flags by default)."""
    check_crd_rules(objects)
    ignored = check_unmodelled(objects, accept_unmodelled)
    if not objects.node_pools:
        raise SizingInputError("the input has no karpenter.sh/v1 NodePool; add the NodePool(s) to plan")
    if not objects.workloads:
        raise SizingInputError("the input has no Deployment, StatefulSet or Job to plan for")
    classes = {c.name: c for c in objects.node_classes}
    specs = []
    pools = sorted(objects.node_pools, key=lambda p: (-p.weight, tuple(-ord(c) for c in p.name)))
    for pool in pools:
        node_class = classes.get(pool.node_class or "")
        specs.append(
            NodePoolSpec(
                requirements=tuple(pool.requirements),
                kubelet=kubelet_config(node_class) if node_class else None,
                limits=dict(pool.limits),
                name=pool.name,
                weight=pool.weight,
                taints=pool.taints,
                labels=dict(pool.labels),
                ami_family=node_class.ami_family if node_class and node_class.ami_family else DEFAULT_AMI_FAMILY,
                storage_bytes=node_storage(node_class),
            )
        )
    daemon_sets = (DEFAULT_DAEMON_SETS if default_daemon_sets else ()) + objects.daemon_sets
    plan_input = PlanInput(
        workloads=objects.workloads,
        node_pool=specs[0],
        other_node_pools=tuple(specs[1:]),
        region=region,
        zones=tuple(zones),
        daemon_sets=daemon_sets,
        existing_nodes=objects.nodes,
        ignored=ignored,
        not_planned=not_planned_notes(objects.not_planned),
        repeated=objects.repeated,
        doubtful=objects.doubtful,
    )
    check_plan_zones(plan_input, zones_key, region_key)
    return plan_input


# Objects named in one note of objects not planned; past that, counts per kind and the first few names.
NOT_PLANNED_NAMED = 10
NOT_PLANNED_NAMED_PER_KIND = 3


def not_planned_notes(items: Sequence[str]) -> tuple[str, ...]:
    """Objects not planned, "Kind namespace/name (why)", grouped by why: one note per reason. A
    reason of more than `NOT_PLANNED_NAMED` objects counts them per kind and names the first
    `NOT_PLANNED_NAMED_PER_KIND` of each ("19,990 ConfigMap: default/a, default/b, default/c
    and 19,987 more"), so that a note stays a line whatever the input holds; past `NOT_PLANNED_NAMED`
    reasons (each Pod's owner is one), the rest are counted in one note."""
    by_reason: dict[str, list[str]] = {}
    for item in items:
        what, _, why = item.partition(" (")
        by_reason.setdefault(why.removesuffix(")"), []).append(what)
    notes = []
    for why, names in by_reason.items():
        if len(names) <= NOT_PLANNED_NAMED:
            notes.append(f"{', '.join(names)} ({why})")
            continue
        by_kind: dict[str, list[str]] = {}
        for name in names:
            kind, _, rest = name.partition(" ")
            by_kind.setdefault(kind, []).append(rest)
        counted = []
        for kind, named in by_kind.items():
            shown = ", ".join(named[:NOT_PLANNED_NAMED_PER_KIND])
            more = len(named) - NOT_PLANNED_NAMED_PER_KIND
            counted.append(f"{len(named):,} {kind}: {shown}" + (f" and {more:,} more" if more > 0 else ""))
        notes.append(f"{'; '.join(counted)} ({why})")
    if len(notes) > NOT_PLANNED_NAMED:
        left = sum(len(names) for names in list(by_reason.values())[NOT_PLANNED_NAMED:])
        notes[NOT_PLANNED_NAMED:] = [f"{left:,} more objects, for {len(by_reason) - NOT_PLANNED_NAMED:,} other reasons"]
    return tuple(notes)


# -- the input files of `python -m sizing plan` -----------------------------------------------------


@dataclass(frozen=True)
class InputFile:
    """One input of the command line, parsed: `where` names it in messages, `base_dir` is where
    the relative paths of a description's `manifests` start."""

    where: str
    documents: tuple[Any, ...]
    base_dir: Path

    @property
    def is_description(self) -> bool:
        """One map without `kind` or `apiVersion`: a workload description (docs/sizing-input.md);
        anything else is read as Kubernetes objects."""
        documents = [document for document in self.documents if document is not None]
        return (
            len(documents) == 1
            and isinstance(documents[0], Mapping)
            and "kind" not in documents[0]
            and "apiVersion" not in documents[0]
        )


def read_inputs(
    paths: Sequence[str | Path],
    stdin: IO[bytes] | None = None,
    what: str = "file",
    counter: ObjectCounter | None = None,
) -> list[InputFile]:
    """The files at `paths`, parsed ("-" reads `stdin`, once). An input without any YAML document is
    refused. Workloads and nodes are counted while they are read, by `counter` when several calls
    share one, and refused past the planner's ceilings (`ObjectCounter`)."""
    counter = counter if counter is not None else ObjectCounter()
    if sum(1 for path in paths if str(path) == STDIN) > 1:
        raise SizingInputError("'-' (stdin) is given more than once; stdin can be read once")
    inputs = []
    for path in paths:
        if str(path) == STDIN:
            if stdin is None:
                raise SizingInputError("'-' (stdin) is not available here")
            where, data, base_dir = "stdin", read_stream_bytes(stdin, "stdin"), Path(".")
        else:
            where = f"{what} {str(path)!r}"
            data, base_dir = read_file_bytes(path, where, stdin_hint=True), Path(path).parent
        documents = tuple(load_documents(decode_text(data, where), where, counter.hook(where)))
        if all(document is None for document in documents):
            raise SizingInputError(f"{where} holds no YAML document; give a workload description or Kubernetes objects")
        inputs.append(InputFile(where, documents, base_dir))
    return inputs


def objects_of(inputs: Sequence[InputFile]) -> ClusterObjects:
    """The Kubernetes objects of parsed inputs."""
    return read_parsed_objects([(item.where, item.documents) for item in inputs])


def read_object_files(paths: Sequence[str | Path], stdin: IO[bytes] | None = None) -> ClusterObjects:
    """Objects of the files at `paths` ("-" reads `stdin`)."""
    return objects_of(read_inputs(paths, stdin))
