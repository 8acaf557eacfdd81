"""Workloads and DaemonSets read from Kubernetes manifests (multi-document YAML).

- A Deployment gives a workload: its pod's requests, `spec.replicas`
  (default 1), `maxSurge` from `spec.strategy.rollingUpdate` (default 25 %;
  0 for the Recreate strategy) and the pod's `nodeSelector`.
- A HorizontalPodAutoscaler whose `scaleTargetRef` names a Deployment sets
  that workload's peak replicas to its `maxReplicas`.
- A DaemonSet adds its pod's requests to every node it selects.
- Other kinds (Service, Ingress, ...) are skipped; `kind: List` is unpacked.

Pod requests follow Kubernetes' PodRequests: per resource the larger of
(sum of containers + sidecars) and (each init container + the sidecars
started before it), replaced by the pod-level `spec.resources` request where
the pod sets one, plus the pod overhead. A container without a request for a
resource but with a limit requests its limit, and so does a pod with a
pod-level limit and no pod-level request (API-server defaulting). A resource
nothing requests is 0, as the scheduler counts it.
cpu is in millicores, memory in MiB. Node affinity, tolerations and topology
spread are not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sizing.errors import SizingInputError
from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.kube.workloads import DEFAULT_MAX_SURGE, DaemonSet, Workload

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class ManifestContents:
    """What the planner uses from a set of manifests."""

    workloads: tuple[Workload, ...]
    daemon_sets: tuple[DaemonSet, ...]


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SizingInputError(f"{where} must be an object, got {value!r}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SizingInputError(f"{where} must be a list, got {value!r}")
    return value


def _container_requests(container: Mapping[str, Any], where: str) -> tuple[int, int]:
    """(cpu millicores, memory MiB) a container requests, its limits standing in for missing requests."""
    resources = _mapping(container.get("resources"), f"{where}.resources")
    requests = _mapping(resources.get("requests"), f"{where}.resources.requests")
    limits = _mapping(resources.get("limits"), f"{where}.resources.limits")
    cpu_value = requests.get("cpu", limits.get("cpu"))
    memory_value = requests.get("memory", limits.get("memory"))
    cpu = _not_negative(cpu_millicores, cpu_value, f"{where}.resources.requests.cpu") if cpu_value is not None else 0
    memory = (
        _not_negative(memory_mib, memory_value, f"{where}.resources.requests.memory") if memory_value is not None else 0
    )
    return cpu, memory


def _not_negative(parse: Callable[[Any, str], int], value: Any, where: str) -> int:
    """A quantity that Kubernetes accepts in resources: 0 or more."""
    parsed = parse(value, where)
    if parsed < 0:
        raise SizingInputError(f"{where} must be 0 or more (Kubernetes refuses a negative quantity), got {value!r}")
    return parsed


def _pod_level_requests(pod_spec: Mapping[str, Any], where: str) -> tuple[int | None, int | None]:
    """(cpu millicores, memory MiB) of `spec.resources`, None where the pod sets neither a request nor a limit.

    The API server defaults a pod-level request that is missing to the pod-level limit of the same
    resource, whatever the containers request (Kubernetes `defaultPodRequests`).
    """
    resources = _mapping(pod_spec.get("resources"), f"{where}.resources")
    requests = _mapping(resources.get("requests"), f"{where}.resources.requests")
    limits = _mapping(resources.get("limits"), f"{where}.resources.limits")
    found: list[int | None] = []
    for name, parse in (("cpu", cpu_millicores), ("memory", memory_mib)):
        if name in requests:
            found.append(_not_negative(parse, requests[name], f"{where}.resources.requests.{name}"))
        elif name in limits:
            found.append(_not_negative(parse, limits[name], f"{where}.resources.limits.{name}"))
        else:
            found.append(None)
    return found[0], found[1]


def pod_requests(pod_spec: Mapping[str, Any], where: str) -> tuple[int, int]:
    """(cpu millicores, memory MiB) the scheduler reserves for a pod with this spec."""
    containers = _list(pod_spec.get("containers"), f"{where}.containers")
    if not containers:
        raise SizingInputError(f"{where}.containers must list at least one container")
    total = [0, 0]
    for index, container in enumerate(containers):
        cpu, memory = _container_requests(
            _mapping(container, f"{where}.containers[{index}]"), f"{where}.containers[{index}]"
        )
        total[0] += cpu
        total[1] += memory
    sidecars = [0, 0]
    init_peak = [0, 0]
    for index, container in enumerate(_list(pod_spec.get("initContainers"), f"{where}.initContainers")):
        container = _mapping(container, f"{where}.initContainers[{index}]")
        cpu, memory = _container_requests(container, f"{where}.initContainers[{index}]")
        if container.get("restartPolicy") == "Always":
            # A sidecar keeps running next to the app containers and every later init container.
            sidecars = [sidecars[0] + cpu, sidecars[1] + memory]
            during = sidecars
        else:
            during = [cpu + sidecars[0], memory + sidecars[1]]
        init_peak = [max(init_peak[0], during[0]), max(init_peak[1], during[1])]
    result = [max(total[0] + sidecars[0], init_peak[0]), max(total[1] + sidecars[1], init_peak[1])]
    for index, value in enumerate(_pod_level_requests(pod_spec, where)):
        if value is not None:
            result[index] = value
    overhead = _mapping(pod_spec.get("overhead"), f"{where}.overhead")
    if "cpu" in overhead:
        result[0] += _not_negative(cpu_millicores, overhead["cpu"], f"{where}.overhead.cpu")
    if "memory" in overhead:
        result[1] += _not_negative(memory_mib, overhead["memory"], f"{where}.overhead.memory")
    return result[0], result[1]


def _node_selector(pod_spec: Mapping[str, Any], where: str) -> dict[str, str]:
    selector = _mapping(pod_spec.get("nodeSelector"), f"{where}.nodeSelector")
    return {str(key): str(value) for key, value in selector.items()}


def _object_name(document: Mapping[str, Any], where: str) -> tuple[str, str]:
    metadata = _mapping(document.get("metadata"), f"{where}.metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise SizingInputError(f"{where}.metadata.name must be a non-empty string, got {name!r}")
    namespace = metadata.get("namespace") or DEFAULT_NAMESPACE
    return str(namespace), name


def _display_name(namespace: str, name: str) -> str:
    return name if namespace == DEFAULT_NAMESPACE else f"{namespace}/{name}"


def _template_spec(document: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    spec = _mapping(document.get("spec"), f"{where}.spec")
    template = _mapping(spec.get("template"), f"{where}.spec.template")
    pod_spec = template.get("spec")
    if not isinstance(pod_spec, Mapping):
        raise SizingInputError(f"{where}.spec.template.spec must be a pod spec object")
    return pod_spec


def _max_surge(spec: Mapping[str, Any], where: str) -> Any:
    strategy = _mapping(spec.get("strategy"), f"{where}.spec.strategy")
    if strategy.get("type") == "Recreate":
        return 0
    rolling = _mapping(strategy.get("rollingUpdate"), f"{where}.spec.strategy.rollingUpdate")
    return rolling.get("maxSurge", DEFAULT_MAX_SURGE)


def _documents(text: str, where: str) -> Iterable[tuple[Mapping[str, Any], str]]:
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise SizingInputError(f"{where}: not valid YAML ({_first_line(error)})") from error
    for index, document in enumerate(documents):
        if document is None:
            continue
        here = f"{where} document {index + 1}"
        if not isinstance(document, Mapping):
            raise SizingInputError(f"{here}: expected a Kubernetes object, got {type(document).__name__}")
        if document.get("kind") == "List":
            for item_index, item in enumerate(_list(document.get("items"), f"{here}.items")):
                yield _mapping(item, f"{here}.items[{item_index}]"), f"{here}.items[{item_index}]"
        else:
            yield document, here


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split())


def read_manifest_texts(texts: Sequence[tuple[str, str]]) -> ManifestContents:
    """Workloads and DaemonSets of manifests given as (where, YAML text) pairs."""
    deployments: dict[tuple[str, str], dict[str, Any]] = {}
    autoscalers: list[tuple[str, str, str, int, str]] = []
    daemon_sets: list[DaemonSet] = []
    for source, text in texts:
        for document, where in _documents(text, source):
            kind = document.get("kind")
            if kind == "Deployment":
                namespace, name = _object_name(document, where)
                where = f"{where} (Deployment {name!r})"
                spec = _mapping(document.get("spec"), f"{where}.spec")
                pod_spec = _template_spec(document, where)
                cpu, memory = pod_requests(pod_spec, f"{where}.spec.template.spec")
                replicas = spec.get("replicas", 1)
                deployments[(namespace, name)] = {
                    "name": _display_name(namespace, name),
                    "cpu_millicores": cpu,
                    "memory_mib": memory,
                    "replicas": replicas,
                    "max_surge": _max_surge(spec, where),
                    "node_selector": _node_selector(pod_spec, f"{where}.spec.template.spec"),
                }
            elif kind == "HorizontalPodAutoscaler":
                namespace, name = _object_name(document, where)
                where = f"{where} (HorizontalPodAutoscaler {name!r})"
                spec = _mapping(document.get("spec"), f"{where}.spec")
                target = _mapping(spec.get("scaleTargetRef"), f"{where}.spec.scaleTargetRef")
                max_replicas = spec.get("maxReplicas")
                if isinstance(max_replicas, bool) or not isinstance(max_replicas, int) or max_replicas < 1:
                    raise SizingInputError(f"{where}.spec.maxReplicas must be a positive integer, got {max_replicas!r}")
                if target.get("kind") == "Deployment":
                    autoscalers.append((namespace, str(target.get("name")), name, max_replicas, where))
            elif kind == "DaemonSet":
                namespace, name = _object_name(document, where)
                where = f"{where} (DaemonSet {name!r})"
                pod_spec = _template_spec(document, where)
                cpu, memory = pod_requests(pod_spec, f"{where}.spec.template.spec")
                daemon_sets.append(
                    DaemonSet(
                        _display_name(namespace, name),
                        cpu_millicores=cpu,
                        memory_mib=memory,
                        node_selector=_node_selector(pod_spec, f"{where}.spec.template.spec"),
                    )
                )
    for namespace, target_name, _, max_replicas, where in autoscalers:
        if (namespace, target_name) not in deployments:
            raise SizingInputError(
                f"{where} scales Deployment {target_name!r} in namespace {namespace!r}, which is not in the manifests"
            )
        # At peak the HPA runs maxReplicas, whatever the Deployment's own replicas say.
        deployments[(namespace, target_name)]["replicas"] = max_replicas
    workloads = tuple(Workload(**fields) for fields in deployments.values())
    return ManifestContents(workloads=workloads, daemon_sets=tuple(daemon_sets))


def read_manifest_files(paths: Sequence[Path]) -> ManifestContents:
    """Workloads and DaemonSets of the manifest files at `paths`."""
    texts = []
    for path in paths:
        try:
            texts.append((f"manifest {str(path)!r}", Path(path).read_text(encoding="utf-8")))
        except UnicodeDecodeError as error:
            raise SizingInputError(
                f"manifest {str(path)!r} is not a text file (byte {error.start} is not UTF-8); a manifest is YAML"
            ) from None
        except OSError as error:
            raise SizingInputError(f"manifest {str(path)!r} cannot be read ({error.strerror})") from error
    return read_manifest_texts(texts)
