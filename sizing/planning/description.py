"""The workload description file (YAML) read into a `PlanInput`.

The format is documented in docs/sizing-input.md. Every key is checked:
an unknown key, a wrong type or a bad quantity raises SizingInputError naming
the field, the value and what is allowed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import yaml

from sizing.karpenter.allocatable import KubeletConfig, ReservedResources
from sizing.binpack.model import DEFAULT_WORK_LIMIT
from sizing.errors import SizingInputError
from sizing.kube.manifests import read_manifest_files
from sizing.planning.planner import GETTING_STARTED_REQUIREMENTS, NodePoolSpec, PlanInput
from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.kube.resources import Resources
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DEFAULT_MAX_SURGE, DaemonSet, ExistingNode, Workload

TOP_LEVEL_KEYS = (
    "region", "zones", "headroomPercent", "maxPodsPerNode", "priceOverrides", "solverWorkLimit",
    "nodePool", "workloads", "manifests", "daemonSets", "defaultDaemonSets", "existingNodes",
)
NODE_POOL_KEYS = ("name", "requirements", "kubelet", "limits")
KUBELET_KEYS = ("maxPods", "podsPerCore", "kubeReserved", "systemReserved", "evictionHard")
RESERVED_KEYS = ("cpu", "memory")
EVICTION_KEYS = ("memory.available",)
WORKLOAD_KEYS = ("name", "requests", "maxReplicas", "maxSurge", "nodeSelector")
REQUEST_KEYS = ("cpu", "memory")
DAEMON_SET_KEYS = ("name", "requests", "nodeSelector")
EXISTING_NODE_KEYS = ("name", "instanceType", "requested", "zone", "capacityType", "inNodePool", "capacityReported")
REQUESTED_KEYS = ("cpu", "memory", "pods")


def _object(value: Any, where: str, allowed: Sequence[str], required: Sequence[str] = ()) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SizingInputError(f"{where} must be an object with keys {list(allowed)}, got {value!r}")
    unknown = sorted(str(key) for key in value if key not in allowed)
    if unknown:
        raise SizingInputError(f"{where}: unknown field {unknown[0]!r}; allowed fields are {list(allowed)}")
    missing = [key for key in required if key not in value]
    if missing:
        raise SizingInputError(f"{where}: missing field {missing[0]!r}")
    return value


def _list(value: Any, where: str) -> List[Any]:
    if not isinstance(value, list):
        raise SizingInputError(f"{where} must be a list, got {value!r}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise SizingInputError(f"{where} must be a non-empty string, got {value!r}")
    return value


def _int(value: Any, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SizingInputError(f"{where} must be an integer >= {minimum}, got {value!r}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SizingInputError(f"{where} must be a number, got {value!r}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SizingInputError(f"{where} must be true or false, got {value!r}")
    return value


def _selector(value: Any, where: str) -> Dict[str, str]:
    if not isinstance(value, Mapping):
        raise SizingInputError(f"{where} must map label keys to values, got {value!r}")
    return {str(key): str(label) for key, label in value.items()}


def _reserved(value: Any, where: str) -> ReservedResources:
    obj = _object(value, where, RESERVED_KEYS)
    return ReservedResources(
        cpu=cpu_millicores(obj["cpu"], f"{where}.cpu") if "cpu" in obj else None,
        memory=memory_mib(obj["memory"], f"{where}.memory") if "memory" in obj else None,
    )


def _kubelet(value: Any, where: str) -> KubeletConfig:
    obj = _object(value, where, KUBELET_KEYS)
    eviction = None
    if "evictionHard" in obj:
        hard = _object(obj["evictionHard"], f"{where}.evictionHard", EVICTION_KEYS)
        if "memory.available" in hard:
            text = hard["memory.available"]
            if isinstance(text, str) and text.endswith("%"):
                raise SizingInputError(
                    f"{where}.evictionHard.memory.available must be a quantity such as 100Mi; "
                    f"percentages ({text!r}) are not supported"
                )
            eviction = memory_mib(text, f"{where}.evictionHard.memory.available")
    return KubeletConfig(
        max_pods=_int(obj["maxPods"], f"{where}.maxPods", 1) if "maxPods" in obj else None,
        pods_per_core=_int(obj["podsPerCore"], f"{where}.podsPerCore") if "podsPerCore" in obj else None,
        kube_reserved=_reserved(obj["kubeReserved"], f"{where}.kubeReserved") if "kubeReserved" in obj else None,
        system_reserved=(
            _reserved(obj["systemReserved"], f"{where}.systemReserved") if "systemReserved" in obj else None
        ),
        eviction_hard_memory_mib=eviction,
    )


def _node_pool(value: Any) -> NodePoolSpec:
    obj = _object(value, "nodePool", NODE_POOL_KEYS)
    requirements = obj.get("requirements", list(GETTING_STARTED_REQUIREMENTS))
    _list(requirements, "nodePool.requirements")
    limits = obj.get("limits") or {}
    if not isinstance(limits, Mapping):
        raise SizingInputError(f"nodePool.limits must be an object such as {{cpu: 1000}}, got {limits!r}")
    return NodePoolSpec(
        requirements=tuple(requirements),
        kubelet=_kubelet(obj["kubelet"], "nodePool.kubelet") if "kubelet" in obj else None,
        limits=dict(limits),
        name=_string(obj["name"], "nodePool.name") if "name" in obj else None,
    )


def _requests(value: Any, where: str) -> Tuple[int, int]:
    obj = _object(value, where, REQUEST_KEYS, REQUEST_KEYS)
    return cpu_millicores(obj["cpu"], f"{where}.cpu"), memory_mib(obj["memory"], f"{where}.memory")


def _workload(value: Any, index: int) -> Workload:
    where = f"workloads[{index}]"
    obj = _object(value, where, WORKLOAD_KEYS, ("name", "requests", "maxReplicas"))
    name = _string(obj["name"], f"{where}.name")
    where = f"workload {name!r}"
    cpu, memory = _requests(obj["requests"], f"{where}: requests")
    return Workload(
        name=name,
        cpu_millicores=cpu,
        memory_mib=memory,
        replicas=_int(obj["maxReplicas"], f"{where}: maxReplicas", 1),
        max_surge=obj.get("maxSurge", DEFAULT_MAX_SURGE),
        node_selector=_selector(obj.get("nodeSelector", {}), f"{where}: nodeSelector"),
    )


def _daemon_set(value: Any, index: int) -> DaemonSet:
    where = f"daemonSets[{index}]"
    obj = _object(value, where, DAEMON_SET_KEYS, ("name",))
    name = _string(obj["name"], f"{where}.name")
    requests = _object(obj.get("requests", {}), f"daemonSet {name!r}: requests", REQUEST_KEYS)
    return DaemonSet(
        name=name,
        cpu_millicores=cpu_millicores(requests["cpu"], f"daemonSet {name!r}: requests.cpu") if "cpu" in requests else 0,
        memory_mib=(
            memory_mib(requests["memory"], f"daemonSet {name!r}: requests.memory") if "memory" in requests else 0
        ),
        node_selector=_selector(obj.get("nodeSelector", {}), f"daemonSet {name!r}: nodeSelector"),
    )


def _existing_node(value: Any, index: int) -> ExistingNode:
    where = f"existingNodes[{index}]"
    obj = _object(value, where, EXISTING_NODE_KEYS, ("name", "instanceType"))
    name = _string(obj["name"], f"{where}.name")
    where = f"existing node {name!r}"
    requested = _object(obj.get("requested", {}), f"{where}: requested", REQUESTED_KEYS)
    return ExistingNode(
        name=name,
        instance_type=_string(obj["instanceType"], f"{where}: instanceType"),
        requested=Resources(
            cpu_millicores(requested["cpu"], f"{where}: requested.cpu") if "cpu" in requested else 0,
            memory_mib(requested["memory"], f"{where}: requested.memory") if "memory" in requested else 0,
            _int(requested.get("pods", 0), f"{where}: requested.pods"),
        ),
        zone=_string(obj["zone"], f"{where}: zone") if "zone" in obj else None,
        capacity_type=_string(obj.get("capacityType", "on-demand"), f"{where}: capacityType"),
        in_node_pool=_bool(obj.get("inNodePool", True), f"{where}: inNodePool"),
        capacity_reported=_bool(obj.get("capacityReported", True), f"{where}: capacityReported"),
    )


def plan_input_from_document(
    document: Any, base_dir: Path = Path("."), extra_manifests: Sequence[Path] = ()
) -> PlanInput:
    """A PlanInput from a parsed description; manifest paths are relative to `base_dir`."""
    obj = _object(document, "the description", TOP_LEVEL_KEYS)
    workloads = [_workload(item, i) for i, item in enumerate(_list(obj.get("workloads", []), "workloads"))]
    daemon_sets = [_daemon_set(item, i) for i, item in enumerate(_list(obj.get("daemonSets", []), "daemonSets"))]
    if _bool(obj.get("defaultDaemonSets", True), "defaultDaemonSets"):
        daemon_sets = list(DEFAULT_DAEMON_SETS) + daemon_sets
    manifest_paths = [
        base_dir / _string(path, f"manifests[{i}]")
        for i, path in enumerate(_list(obj.get("manifests", []), "manifests"))
    ]
    manifest_paths += list(extra_manifests)
    if manifest_paths:
        contents = read_manifest_files(manifest_paths)
        workloads += contents.workloads
        daemon_sets += contents.daemon_sets
    zones = tuple(_string(z, f"zones[{i}]") for i, z in enumerate(_list(obj.get("zones", []), "zones")))
    overrides = obj.get("priceOverrides", {})
    if not isinstance(overrides, Mapping):
        raise SizingInputError(f"priceOverrides must map instance types to USD/hour, got {overrides!r}")
    cap = obj.get("maxPodsPerNode")
    cap = _int(cap, "maxPodsPerNode", 1) if cap is not None else None
    if "solverTimeLimitSeconds" in obj:
        raise SizingInputError(
            "solverTimeLimitSeconds was replaced by solverWorkLimit: the solver is bounded by work, not time, "
            f"so a plan is the same on any machine; use solverWorkLimit: <units> (default {DEFAULT_WORK_LIMIT}) "
            "or null to skip the solver"
        )
    work_limit = obj.get("solverWorkLimit", DEFAULT_WORK_LIMIT)
    work_limit = _int(work_limit, "solverWorkLimit", 1) if work_limit is not None else None
    node_pool = _node_pool(obj.get("nodePool", {}))
    existing = tuple(
        _existing_node(item, i) for i, item in enumerate(_list(obj.get("existingNodes", []), "existingNodes"))
    )
    headroom = _number(obj.get("headroomPercent", 10), "headroomPercent")
    region = _string(obj.get("region", "us-east-1"), "region")
    if not workloads:
        raise SizingInputError("the description has no workloads; list some under 'workloads' or 'manifests'")
    return PlanInput(
        workloads=tuple(workloads),
        node_pool=node_pool,
        region=region,
        zones=zones,
        daemon_sets=tuple(daemon_sets),
        existing_nodes=existing,
        headroom_percent=headroom,
        max_pods_per_node=cap,
        price_overrides=dict(overrides),
        solver_work_limit=work_limit,
    )


def read_description(path: Path, extra_manifests: Sequence[Path] = ()) -> PlanInput:
    """A PlanInput from a description file; `extra_manifests` add to its `manifests` list."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SizingInputError(f"description {str(path)!r} cannot be read ({error.strerror})") from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SizingInputError(f"description {str(path)!r}: not valid YAML ({' '.join(str(error).split())})") from error
    if document is None:
        document = {}
    return plan_input_from_document(document, path.parent, extra_manifests)
