"""A `PlanInput` from Kubernetes objects: NodePools (the heaviest planned, the others as overflow),
their EC2NodeClass (kubelet, AMI family; AL2023 when the class is not given), workloads, HPAs,
DaemonSets and existing nodes.

Unmodelled fields stop the plan with the object and field named, unless `accept_unmodelled`
is set; then they are listed in the report as "ignored, may under-plan".
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import KubeletConfig, ReservedResources
from sizing.karpenter.ami_families import DEFAULT_AMI_FAMILY
from sizing.kube.objects import ClusterObjects, NodeClassObject, read_objects
from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.kube.workloads import DEFAULT_DAEMON_SETS
from sizing.planning.planner import NodePoolSpec, PlanInput

KUBELET_KEYS = ("maxPods", "podsPerCore", "kubeReserved", "systemReserved", "evictionHard")


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


def plan_input_from_objects(
    objects: ClusterObjects,
    accept_unmodelled: bool = False,
    zones: Sequence[str] = (),
    region: str = "us-east-1",
    default_daemon_sets: bool = True,
) -> PlanInput:
    if objects.unmodelled and not accept_unmodelled:
        listed = "; ".join(item.describe() for item in objects.unmodelled)
        raise SizingInputError(
            f"the input uses what the planner does not model: {listed}. Remove it, or pass "
            "--accept-unmodelled to plan anyway (the report lists it as ignored, may under-plan)"
        )
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
    return PlanInput(
        workloads=objects.workloads,
        node_pool=specs[0],
        other_node_pools=tuple(specs[1:]),
        region=region,
        zones=tuple(zones),
        daemon_sets=daemon_sets,
        existing_nodes=objects.nodes,
        ignored=tuple(item.describe() for item in objects.unmodelled),
    )


def read_object_files(paths: Sequence[str]) -> ClusterObjects:
    """Objects of the files at `paths` ("-" reads stdin)."""
    texts: list[tuple[str, str]] = []
    for path in paths:
        if str(path) == "-":
            texts.append(("stdin", sys.stdin.read()))
            continue
        try:
            texts.append((f"file {str(path)!r}", Path(path).read_text(encoding="utf-8")))
        except OSError as error:
            raise SizingInputError(f"file {str(path)!r} cannot be read ({error.strerror})") from error
        except UnicodeDecodeError as error:
            raise SizingInputError(
                f"file {str(path)!r} is not a text file (byte {error.start} is not UTF-8); Kubernetes objects are YAML"
            ) from None
    return read_objects(texts)


def is_object_document(text: str) -> bool:
    """Whether YAML text holds Kubernetes objects (a `kind`) rather than a workload description."""
    import yaml

    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return False
    return any(isinstance(d, Mapping) and "kind" in d for d in documents)
