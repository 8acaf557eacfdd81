"""Kubernetes objects as the planner reads them: workloads, DaemonSets, HPAs, NodePools,
EC2NodeClasses, Nodes and NodeClaims, from YAML (several files, `kind: List` unpacked).

Every field that changes where pods go and is not modelled is recorded as `Unmodelled`
(object kind/namespace/name and field path), never dropped silently; the caller stops the plan
unless the user accepts them. Workload kinds: Deployment (replicas + maxSurge), StatefulSet
(replicas, no surge), Job (parallelism). Pod-level `spec.resources` replace the sum of the
containers' (Kubernetes 1.34+ default), a pod-level limit standing in for a missing pod-level
request (`sizing.kube.manifests.pod_requests`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingInputError
from sizing.kube.manifests import DEFAULT_NAMESPACE, _documents, _list, _mapping, _max_surge, pod_requests
from sizing.kube.resources import Resources
from sizing.kube.scheduling import (
    LABEL_SELECTOR_OPERATORS,
    NODE_SELECTOR_OPERATORS,
    HostPort,
    LabelExpression,
    LabelSelector,
    PodAffinityTerm,
    PodScheduling,
    Taint,
    Toleration,
    TopologySpread,
)
from sizing.kube.workloads import DaemonSet, ExistingNode, Workload

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job")
MODELLED_RESOURCES = ("cpu", "memory", "ephemeral-storage")
ZONE_LABEL = "topology.kubernetes.io/zone"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# EC2NodeClass `amiSelectorTerms[].alias` family -> `amiFamily`.
AMI_ALIAS_FAMILIES = {
    "al2": "AL2",
    "al2023": "AL2023",
    "bottlerocket": "Bottlerocket",
    "windows2019": "Windows2019",
    "windows2022": "Windows2022",
    "windows2025": "Windows2025",
}


@dataclass(frozen=True)
class Unmodelled:
    """A field the planner does not model: `what` is `Kind namespace/name`, `path` the field."""

    what: str
    path: str
    why: str

    def describe(self) -> str:
        return f"{self.what}: {self.path} ({self.why})"


@dataclass(frozen=True)
class NodePoolObject:
    name: str
    requirements: tuple[Mapping[str, Any], ...]
    taints: tuple[Taint, ...]
    labels: Mapping[str, str]
    limits: Mapping[str, Any]
    weight: int
    node_class: str | None


@dataclass(frozen=True)
class NodeClassObject:
    name: str
    kubelet: Mapping[str, Any]
    ami_family: str | None


@dataclass(frozen=True)
class ClusterObjects:
    workloads: tuple[Workload, ...]
    daemon_sets: tuple[DaemonSet, ...]
    node_pools: tuple[NodePoolObject, ...]
    node_classes: tuple[NodeClassObject, ...]
    nodes: tuple[ExistingNode, ...]
    unmodelled: tuple[Unmodelled, ...]


class _Reader:
    def __init__(self) -> None:
        self.unmodelled: list[Unmodelled] = []

    def flag(self, what: str, path: str, why: str) -> None:
        self.unmodelled.append(Unmodelled(what, path, why))

    # -- pod spec --------------------------------------------------------------------------

    def expression(self, obj: Any, where: str, operators: Sequence[str]) -> LabelExpression:
        obj = _mapping(obj, where)
        operator = obj.get("operator")
        if operator not in operators:
            raise SizingInputError(f"{where}.operator {operator!r} is not supported; allowed: {list(operators)}")
        return LabelExpression(str(obj.get("key")), operator, tuple(str(v) for v in _list(obj.get("values"), where)))

    def selector(self, obj: Any, where: str) -> LabelSelector:
        obj = _mapping(obj, where)
        return LabelSelector(
            {str(k): str(v) for k, v in _mapping(obj.get("matchLabels"), f"{where}.matchLabels").items()},
            tuple(
                self.expression(e, f"{where}.matchExpressions[{i}]", LABEL_SELECTOR_OPERATORS)
                for i, e in enumerate(_list(obj.get("matchExpressions"), f"{where}.matchExpressions"))
            ),
        )

    def node_term(self, obj: Any, where: str, what: str) -> tuple[LabelExpression, ...]:
        obj = _mapping(obj, where)
        if obj.get("matchFields"):
            self.flag(what, f"{where}.matchFields", "node field selectors are not modelled")
        return tuple(
            self.expression(e, f"{where}.matchExpressions[{i}]", NODE_SELECTOR_OPERATORS)
            for i, e in enumerate(_list(obj.get("matchExpressions"), f"{where}.matchExpressions"))
        )

    def pod_term(self, obj: Any, where: str, anti: bool, weight: int | None, what: str) -> PodAffinityTerm:
        obj = _mapping(obj, where)
        for key in ("namespaceSelector", "matchLabelKeys", "mismatchLabelKeys"):
            if obj.get(key):
                self.flag(what, f"{where}.{key}", "not modelled")
        if "labelSelector" not in obj or obj.get("labelSelector") is None:
            selector = LabelSelector({"\0no-selector": "\0"})  # a nil selector selects no pod
        else:
            selector = self.selector(obj["labelSelector"], f"{where}.labelSelector")
        return PodAffinityTerm(
            str(obj.get("topologyKey")),
            selector,
            anti,
            frozenset(str(n) for n in _list(obj.get("namespaces"), f"{where}.namespaces")),
            weight,
        )

    def scheduling(
        self, spec: Mapping[str, Any], labels: Mapping[str, str], namespace: str, where: str, what: str
    ) -> PodScheduling:
        affinity = _mapping(spec.get("affinity"), f"{where}.affinity")
        node = _mapping(affinity.get("nodeAffinity"), f"{where}.affinity.nodeAffinity")
        required = _mapping(node.get("requiredDuringSchedulingIgnoredDuringExecution"), where)
        req_terms = tuple(
            self.node_term(
                t,
                f"{where}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]",
                what,
            )
            for i, t in enumerate(_list(required.get("nodeSelectorTerms"), where))
        )
        preferred = tuple(
            (
                int(_mapping(p, where).get("weight", 1)),
                self.node_term(
                    _mapping(p, where).get("preference"),
                    f"{where}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference",
                    what,
                ),
            )
            for i, p in enumerate(_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"), where))
        )
        pod_terms: list[PodAffinityTerm] = []
        for field_name, anti in (("podAffinity", False), ("podAntiAffinity", True)):
            block = _mapping(affinity.get(field_name), f"{where}.affinity.{field_name}")
            path = f"{where}.affinity.{field_name}"
            for i, term in enumerate(_list(block.get("requiredDuringSchedulingIgnoredDuringExecution"), path)):
                pod_terms.append(
                    self.pod_term(term, f"{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", anti, None, what)
                )
            for i, term in enumerate(_list(block.get("preferredDuringSchedulingIgnoredDuringExecution"), path)):
                term = _mapping(term, path)
                pod_terms.append(
                    self.pod_term(
                        term.get("podAffinityTerm"),
                        f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm",
                        anti,
                        int(term.get("weight", 1)),
                        what,
                    )
                )
        spreads = []
        for i, tsc in enumerate(_list(spec.get("topologySpreadConstraints"), f"{where}.topologySpreadConstraints")):
            path = f"{where}.topologySpreadConstraints[{i}]"
            tsc = _mapping(tsc, path)
            for key in ("matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy"):
                if tsc.get(key):
                    self.flag(what, f"{path}.{key}", "not modelled")
            selector = (
                self.selector(tsc["labelSelector"], f"{path}.labelSelector")
                if tsc.get("labelSelector") is not None
                else LabelSelector({"\0no-selector": "\0"})
            )
            spreads.append(
                TopologySpread(
                    str(tsc.get("topologyKey")),
                    int(tsc.get("maxSkew", 1)),
                    str(tsc.get("whenUnsatisfiable", "DoNotSchedule")),
                    selector,
                    tsc.get("minDomains"),
                )
            )
        tolerations = tuple(
            Toleration(
                _mapping(t, where).get("key") or None,
                _mapping(t, where).get("operator", "Equal"),
                str(_mapping(t, where).get("value", "")),
                _mapping(t, where).get("effect") or None,
            )
            for t in _list(spec.get("tolerations"), f"{where}.tolerations")
        )
        ports = []
        for kind in ("containers", "initContainers"):
            for container in _list(spec.get(kind), f"{where}.{kind}"):
                for port in _list(_mapping(container, where).get("ports"), where):
                    port = _mapping(port, where)
                    if port.get("hostPort"):
                        ports.append(HostPort(int(port["hostPort"]), str(port.get("protocol", "TCP"))))
        return PodScheduling(
            namespace, labels, tolerations, req_terms, preferred, tuple(spreads), tuple(pod_terms), tuple(ports)
        )

    def check_pod(self, spec: Mapping[str, Any], where: str, what: str) -> None:
        for i, volume in enumerate(_list(spec.get("volumes"), f"{where}.volumes")):
            volume = _mapping(volume, where)
            for kind in ("persistentVolumeClaim", "ephemeral", "csi"):
                if kind in volume:
                    self.flag(what, f"{where}.volumes[{i}].{kind}", "volume topology is not modelled")
        if spec.get("resourceClaims"):
            self.flag(what, f"{where}.resourceClaims", "dynamic resource allocation is not modelled")
        holders = [("", spec)] + [
            (f".{kind}[{ci}]", _mapping(container, where))
            for kind in ("containers", "initContainers")
            for ci, container in enumerate(_list(spec.get(kind), f"{where}.{kind}"))
        ]
        for place, holder in holders:
            resources = _mapping(holder.get("resources"), where)
            for section in ("requests", "limits"):
                for name in _mapping(resources.get(section), where):
                    if name not in MODELLED_RESOURCES:
                        self.flag(
                            what,
                            f"{where}{place}.resources.{section}.{name}",
                            "extended resources (GPUs, hugepages, ...) are not modelled",
                        )


def _meta(document: Mapping[str, Any], where: str) -> tuple[str, str, Mapping[str, Any]]:
    metadata = _mapping(document.get("metadata"), f"{where}.metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise SizingInputError(f"{where}.metadata.name must be a non-empty string, got {name!r}")
    return str(metadata.get("namespace") or DEFAULT_NAMESPACE), name, metadata


def read_objects(texts: Sequence[tuple[str, str]]) -> ClusterObjects:
    """The objects of YAML texts given as (where, text) pairs."""
    reader = _Reader()
    workloads: dict[tuple[str, str, str], dict[str, Any]] = {}
    autoscalers: list[tuple[str, str, str, str, int, Any, Mapping[str, Any]]] = []
    daemon_sets, pools, classes, nodes = [], [], [], []
    for source, text in texts:
        for document, where in _documents(text, source):
            kind = document.get("kind")
            if kind in WORKLOAD_KINDS or kind == "DaemonSet":
                namespace, name, _ = _meta(document, where)
                what = f"{kind} {namespace}/{name}"
                spec = _mapping(document.get("spec"), f"{what}.spec")
                template = _mapping(spec.get("template"), f"{what}.spec.template")
                pod = _mapping(template.get("spec"), f"{what}.spec.template.spec")
                labels = {
                    str(k): str(v)
                    for k, v in _mapping(_mapping(template.get("metadata"), what).get("labels"), what).items()
                }
                path = "spec.template.spec"
                reader.check_pod(pod, path, what)
                if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
                    reader.flag(what, "spec.volumeClaimTemplates", "volume topology is not modelled")
                cpu, memory = pod_requests(pod, f"{what}.{path}")
                scheduling = reader.scheduling(pod, labels, namespace, path, what)
                selector = {str(k): str(v) for k, v in _mapping(pod.get("nodeSelector"), what).items()}
                display = name if namespace == DEFAULT_NAMESPACE else f"{namespace}/{name}"
                if kind == "DaemonSet":
                    daemon_sets.append(DaemonSet(display, cpu, memory, selector, scheduling))
                    continue
                if kind == "Job":
                    replicas, surge = spec.get("parallelism", 1), 0
                elif kind == "StatefulSet":
                    replicas, surge = spec.get("replicas", 1), 0
                else:
                    replicas, surge = spec.get("replicas", 1), _max_surge(spec, what)
                workloads[(kind, namespace, name)] = dict(
                    name=display,
                    cpu_millicores=cpu,
                    memory_mib=memory,
                    replicas=replicas,
                    max_surge=surge,
                    node_selector=selector,
                    scheduling=scheduling,
                    kind=kind,
                    autoscaled=False,
                )
            elif kind == "HorizontalPodAutoscaler":
                namespace, name, _ = _meta(document, where)
                what = f"HorizontalPodAutoscaler {namespace}/{name}"
                spec = _mapping(document.get("spec"), what)
                target = _mapping(spec.get("scaleTargetRef"), f"{what}.spec.scaleTargetRef")
                maximum = spec.get("maxReplicas")
                if isinstance(maximum, bool) or not isinstance(maximum, int) or maximum < 1:
                    raise SizingInputError(f"{what}: spec.maxReplicas must be a positive integer, got {maximum!r}")
                scale_up = _mapping(_mapping(spec.get("behavior"), what).get("scaleUp"), what)
                autoscalers.append(
                    (
                        what,
                        str(target.get("kind")),
                        namespace,
                        str(target.get("name")),
                        maximum,
                        spec.get("minReplicas", 1),
                        scale_up,
                    )
                )
            elif kind == "NodePool":
                _, name, _ = _meta(document, where)
                what = f"NodePool {name}"
                spec = _mapping(document.get("spec"), what)
                template = _mapping(spec.get("template"), f"{what}.spec.template")
                tspec = _mapping(template.get("spec"), f"{what}.spec.template.spec")
                taints = tuple(
                    Taint(
                        str(_mapping(t, what).get("key")),
                        str(_mapping(t, what).get("effect")),
                        str(_mapping(t, what).get("value", "")),
                    )
                    for t in _list(tspec.get("taints"), f"{what}.spec.template.spec.taints")
                )
                labels = {
                    str(k): str(v)
                    for k, v in _mapping(_mapping(template.get("metadata"), what).get("labels"), what).items()
                }
                if spec.get("replicas") is not None:
                    reader.flag(what, "spec.replicas", "static NodePools are not modelled")
                pools.append(
                    NodePoolObject(
                        name,
                        tuple(_list(tspec.get("requirements"), f"{what}.spec.template.spec.requirements")),
                        taints,
                        labels,
                        dict(_mapping(spec.get("limits"), what)),
                        int(spec.get("weight") or 0),
                        _mapping(tspec.get("nodeClassRef"), what).get("name"),
                    )
                )
            elif kind == "EC2NodeClass":
                _, name, _ = _meta(document, where)
                what = f"EC2NodeClass {name}"
                spec = _mapping(document.get("spec"), what)
                family = spec.get("amiFamily")
                for term in _list(spec.get("amiSelectorTerms"), f"{what}.spec.amiSelectorTerms"):
                    alias = _mapping(term, what).get("alias")
                    if alias:
                        alias_family = str(alias).split("@")[0]
                        family = AMI_ALIAS_FAMILIES.get(alias_family, alias_family)
                classes.append(NodeClassObject(name, dict(_mapping(spec.get("kubelet"), what)), family))
            elif kind in ("Node", "NodeClaim"):
                nodes.append(_node(document, where, kind))
    for what, target_kind, namespace, target_name, maximum, minimum, behaviour in autoscalers:
        key = (target_kind, namespace, target_name)
        if key not in workloads:
            raise SizingInputError(f"{what} scales {target_kind} {namespace}/{target_name}, which is not in the input")
        # At peak the HPA runs maxReplicas, whatever the workload's own replicas say.
        workloads[key].update(
            replicas=maximum,
            autoscaled=True,
            min_replicas=minimum,
            scale_up_policies=tuple(dict(p) for p in _list(behaviour.get("policies"), what)),
            scale_up_select_policy=behaviour.get("selectPolicy"),
            scale_up_stabilization_seconds=behaviour.get("stabilizationWindowSeconds"),
        )
    return ClusterObjects(
        workloads=tuple(Workload(**fields) for fields in workloads.values()),
        daemon_sets=tuple(daemon_sets),
        node_pools=tuple(pools),
        node_classes=tuple(classes),
        nodes=tuple(nodes),
        unmodelled=tuple(reader.unmodelled),
    )


def _node(document: Mapping[str, Any], where: str, kind: str) -> ExistingNode:
    _, name, metadata = _meta(document, where)
    labels = {str(k): str(v) for k, v in _mapping(metadata.get("labels"), where).items()}
    status = _mapping(document.get("status"), where)
    instance_type = labels.get(INSTANCE_TYPE_LABEL)
    if not instance_type:
        raise SizingInputError(f"{kind} {name}: metadata.labels.{INSTANCE_TYPE_LABEL} is needed to plan with it")
    taints = tuple(
        Taint(
            str(_mapping(t, where).get("key")),
            str(_mapping(t, where).get("effect")),
            str(_mapping(t, where).get("value", "")),
        )
        for t in _list(_mapping(document.get("spec"), where).get("taints"), where)
    )
    capacity_reported = kind == "Node" or bool(_mapping(status.get("capacity"), where))
    return ExistingNode(
        name=name,
        instance_type=instance_type,
        requested=Resources(),
        zone=labels.get(ZONE_LABEL),
        capacity_type=labels.get(CAPACITY_TYPE_LABEL, "on-demand"),
        in_node_pool=NODEPOOL_LABEL in labels,
        capacity_reported=capacity_reported,
        node_pool=labels.get(NODEPOOL_LABEL),
        labels=labels,
        taints=taints,
    )
