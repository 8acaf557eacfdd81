"""The pieces of Kubernetes manifests (multi-document YAML) that `sizing.kube.objects` reads them with:
the documents of a text (`kind: List` unpacked), a Deployment's `maxSurge`, and a pod's requests.

Pod requests follow Kubernetes' PodRequests: per resource the larger of
(sum of containers + sidecars) and (each init container + the sidecars
started before it), replaced by the pod-level `spec.resources` request where
the pod sets one, plus the pod overhead. A container without a request for a
resource but with a limit requests its limit, and so does a pod with a
pod-level limit and no pod-level request (API-server defaulting). A resource
nothing requests is 0, as the scheduler counts it.
cpu is in millicores, memory and ephemeral storage in MiB. Pod-level resources and the pod
overhead carry cpu and memory only, as in Kubernetes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sizing.errors import SizingInputError, echo
from sizing.kube.quantities import cpu_millicores, memory_mib, storage_mib
from sizing.kube.safe_yaml import load_documents
from sizing.kube.workloads import DEFAULT_MAX_SURGE

DEFAULT_NAMESPACE = "default"


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SizingInputError(f"{where} must be an object, got {echo(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SizingInputError(f"{where} must be a list, got {echo(value)}")
    return value


# The resources a pod's requests are read for, each with its parser (to millicores or MiB).
REQUESTED = (("cpu", cpu_millicores), ("memory", memory_mib), ("ephemeral-storage", storage_mib))
# Kubernetes' pod-level resources and pod overhead take cpu and memory only.
POD_LEVEL = REQUESTED[:2]


def _container_requests(container: Mapping[str, Any], where: str) -> list[int]:
    """(cpu millicores, memory MiB, ephemeral storage MiB) a container requests, its limits standing in
    for missing requests."""
    resources = _mapping(container.get("resources"), f"{where}.resources")
    requests = _mapping(resources.get("requests"), f"{where}.resources.requests")
    limits = _mapping(resources.get("limits"), f"{where}.resources.limits")
    found = []
    for name, parse in REQUESTED:
        value = requests.get(name, limits.get(name))
        found.append(_not_negative(parse, value, f"{where}.resources.requests.{name}") if value is not None else 0)
    return found


def _not_negative(parse: Callable[[Any, str], int], value: Any, where: str) -> int:
    """A quantity that Kubernetes accepts in resources: 0 or more."""
    parsed = parse(value, where)
    if parsed < 0:
        raise SizingInputError(f"{where} must be 0 or more (Kubernetes refuses a negative quantity), got {echo(value)}")
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
    for name, parse in POD_LEVEL:
        if name in requests:
            found.append(_not_negative(parse, requests[name], f"{where}.resources.requests.{name}"))
        elif name in limits:
            found.append(_not_negative(parse, limits[name], f"{where}.resources.limits.{name}"))
        else:
            found.append(None)
    return found[0], found[1]


def pod_requests(pod_spec: Mapping[str, Any], where: str) -> tuple[int, int]:
    """(cpu millicores, memory MiB) the scheduler reserves for a pod with this spec."""
    cpu, memory, _ = pod_resource_requests(pod_spec, where)
    return cpu, memory


def pod_resource_requests(pod_spec: Mapping[str, Any], where: str) -> tuple[int, int, int]:
    """(cpu millicores, memory MiB, ephemeral storage MiB) the scheduler reserves for a pod with this spec."""
    containers = _list(pod_spec.get("containers"), f"{where}.containers")
    if not containers:
        raise SizingInputError(f"{where}.containers must list at least one container")
    dimensions = range(len(REQUESTED))
    total = [0] * len(REQUESTED)
    for index, container in enumerate(containers):
        found = _container_requests(_mapping(container, f"{where}.containers[{index}]"), f"{where}.containers[{index}]")
        total = [total[d] + found[d] for d in dimensions]
    sidecars = [0] * len(REQUESTED)
    init_peak = [0] * len(REQUESTED)
    for index, container in enumerate(_list(pod_spec.get("initContainers"), f"{where}.initContainers")):
        container = _mapping(container, f"{where}.initContainers[{index}]")
        found = _container_requests(container, f"{where}.initContainers[{index}]")
        if container.get("restartPolicy") == "Always":
            # A sidecar keeps running next to the app containers and every later init container.
            sidecars = [sidecars[d] + found[d] for d in dimensions]
            during = sidecars
        else:
            during = [found[d] + sidecars[d] for d in dimensions]
        init_peak = [max(init_peak[d], during[d]) for d in dimensions]
    result = [max(total[d] + sidecars[d], init_peak[d]) for d in dimensions]
    for index, value in enumerate(_pod_level_requests(pod_spec, where)):
        if value is not None:
            result[index] = value
    overhead = _mapping(pod_spec.get("overhead"), f"{where}.overhead")
    for index, (name, parse) in enumerate(POD_LEVEL):
        if name in overhead:
            result[index] += _not_negative(parse, overhead[name], f"{where}.overhead.{name}")
    return result[0], result[1], result[2]


def _max_surge(spec: Mapping[str, Any], where: str) -> Any:
    strategy = _mapping(spec.get("strategy"), f"{where}.spec.strategy")
    if strategy.get("type") == "Recreate":
        return 0
    rolling = _mapping(strategy.get("rollingUpdate"), f"{where}.spec.strategy.rollingUpdate")
    return rolling.get("maxSurge", DEFAULT_MAX_SURGE)


def _documents(text: str, where: str) -> Iterable[tuple[Mapping[str, Any], str]]:
    return object_documents(load_documents(text, where), where)


def item_kind(list_kind: Any) -> str | None:
    """The kind of the items of a list of the Kubernetes API ("Deployment" of "DeploymentList"),
    None for `kind: List` (whose items each carry their kind) or any other kind."""
    if isinstance(list_kind, str) and list_kind.endswith("List") and len(list_kind) > len("List"):
        return list_kind.removesuffix("List")
    return None


def _is_list(document: Mapping[str, Any]) -> bool:
    """`kind: List` (what `kubectl get -o yaml` writes), or a list the API itself returns
    (`DeploymentList`, `PodList`, ... with `items`, what `kubectl get --raw` writes)."""
    kind = document.get("kind")
    return kind == "List" or (item_kind(kind) is not None and isinstance(document.get("items"), list))


def object_documents(documents: Sequence[Any], where: str) -> Iterable[tuple[Mapping[str, Any], str]]:
    """The objects of parsed YAML documents, each with its place (empty documents skipped). A list
    is unpacked: `kind: List`, and the API's own lists (`DeploymentList`, ...), whose items carry
    no kind or apiVersion of their own and take the list's."""
    for index, document in enumerate(documents):
        if document is None:
            continue
        here = f"{where} document {index + 1}"
        if not isinstance(document, Mapping):
            raise SizingInputError(f"{here}: expected a Kubernetes object, got {type(document).__name__}")
        if _is_list(document):
            kind = item_kind(document.get("kind"))
            for item_index, item in enumerate(_list(document.get("items"), f"{here}.items")):
                item = _mapping(item, f"{here}.items[{item_index}]")
                if kind is not None and "kind" not in item:
                    item = {"kind": kind, "apiVersion": document.get("apiVersion"), **item}
                yield item, f"{here}.items[{item_index}]"
        else:
            yield document, here
