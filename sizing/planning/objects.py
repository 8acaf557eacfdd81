"""A `PlanInput` from Kubernetes objects: NodePools (the heaviest planned, the others as overflow),
their EC2NodeClass (kubelet, AMI family; AL2023 when the class is not given), workloads, HPAs,
DaemonSets and existing nodes; and the input files of `python -m sizing plan`, read and told apart
(Kubernetes objects or a workload description).

A NodePool or EC2NodeClass that breaks a rule of its CRD (`sizing.karpenter.crd_rules`: the CEL
rules, required fields and bounds, as the API server applies them) is refused first, with the
object, the field path and the rule's message. Unmodelled fields and kinds stop the plan with the object and field named, unless
`accept_unmodelled` is set; then they are listed in the report as "ignored, may under-plan".
Objects that place no pods (Services, PodDisruptionBudgets, ...) are listed as not planned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import KubeletConfig, ReservedResources
from sizing.karpenter.ami_families import DEFAULT_AMI_FAMILY
from sizing.karpenter.crd_rules import check_object
from sizing.kube.objects import ClusterObjects, NodeClassObject, read_parsed_objects
from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.kube.safe_yaml import decode_text, load_documents, read_file_bytes, read_stream_bytes
from sizing.kube.workloads import DEFAULT_DAEMON_SETS
from sizing.planning.planner import NodePoolSpec, PlanInput
from sizing.planning.zones import check_plan_zones

KUBELET_KEYS = ("maxPods", "podsPerCore", "kubeReserved", "systemReserved", "evictionHard")
STDIN = "-"


def _reserved(value: Any, where: str) -> ReservedResources:
    value = value or {}
    return ReservedResources(
        cpu=cpu_millicores(value["cpu"], f"{where}.cpu") if "cpu" in value else None,
        memory=memory_mib(value["memory"], f"{where}.memory") if "memory" in value else None,
    )


def kubelet_config(node_class: NodeClassObject) -> KubeletConfig | None:
    kubelet = node_class.kubelet
    if not kubelet:
        return None
    where = f"EC2NodeClass {node_class.name}: spec.kubelet"
    eviction = (kubelet.get("evictionHard") or {}).get("memory.available")
    if isinstance(eviction, str) and eviction.endswith("%"):
        raise SizingInputError(f"{where}.evictionHard.memory.available: percentages ({eviction!r}) are not supported")
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
    )
    check_plan_zones(plan_input, zones_key, region_key)
    return plan_input


def not_planned_notes(items: Sequence[str]) -> tuple[str, ...]:
    """Objects not planned, "Kind namespace/name (why)", grouped by why: one note per reason."""
    by_reason: dict[str, list[str]] = {}
    for item in items:
        what, _, why = item.partition(" (")
        by_reason.setdefault(why.removesuffix(")"), []).append(what)
    return tuple(f"{', '.join(names)} ({why})" for why, names in by_reason.items())


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


def read_inputs(paths: Sequence[str | Path], stdin: IO[bytes] | None = None, what: str = "file") -> list[InputFile]:
    """The files at `paths`, parsed ("-" reads `stdin`, once). An input without any YAML document is refused."""
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
        documents = tuple(load_documents(decode_text(data, where), where))
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
