"""Kubernetes objects as the planner reads them: workloads, DaemonSets, HPAs, NodePools,
EC2NodeClasses, Nodes and NodeClaims, from YAML (several files, `kind: List` unpacked).

No object is dropped silently. Every field that changes where pods go and is not modelled, and
every kind the planner does not read, is recorded as `Unmodelled` (object kind/namespace/name and
field path); the caller stops the plan unless the user accepts them. Kinds that place no pods
(`NOT_PLANNED_KINDS`) are recorded as not planned, for the report to list. An object without a
kind is refused; an object given again identically (same kind, namespace, name and content) is read
once and listed, one given again with other content is refused. Workload kinds: Deployment (replicas + maxSurge), StatefulSet
(replicas, no surge), Job (parallelism). Pod-level `spec.resources` replace the sum of the
containers' (Kubernetes 1.34+ default), a pod-level limit standing in for a missing pod-level
request (`sizing.kube.manifests.pod_requests`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from sizing.errors import SizingInputError, echo
from sizing.kube.doubtful import MAX_DOUBTFUL, doubtful_values
from sizing.kube.manifests import (
    DEFAULT_NAMESPACE,
    _list,
    _mapping,
    _max_surge,
    item_kind,
    object_documents,
    pod_resource_requests,
)
from sizing.kube.resources import Resources
from sizing.kube.safe_yaml import load_documents
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
from sizing.kube.workloads import (
    CEILING_WHY,
    MAX_EXISTING_NODES,
    MAX_REPLICAS,
    MAX_WORKLOADS,
    DaemonSet,
    ExistingNode,
    Workload,
)

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job")
KARPENTER_API = "karpenter.sh/v1"
NODE_CLASS_API = "karpenter.k8s.aws/v1"
CLUSTER_SCOPED_KINDS = frozenset(
    {"NodePool", "EC2NodeClass", "Node", "NodeClaim", "Namespace", "PriorityClass", "StorageClass", "IngressClass"}
    | {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume"}
    | {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService", "RuntimeClass"}
)
# Kinds that place no pods and change no pod's place or size: read, listed as not planned.
_NO_PODS = "places no pods"
NOT_PLANNED_KINDS = {
    **dict.fromkeys(
        (
            "Namespace",
            "Service",
            "Endpoints",
            "EndpointSlice",
            "Ingress",
            "IngressClass",
            "ConfigMap",
            "Secret",
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "ClusterRole",
            "ClusterRoleBinding",
            "NetworkPolicy",
            "PersistentVolume",
            "StorageClass",
            "CustomResourceDefinition",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "APIService",
            "Lease",
            "Event",
            "ControllerRevision",
            "TargetGroupBinding",
            "ServiceMonitor",
            "PodMonitor",
            "PrometheusRule",
        ),
        _NO_PODS,
    ),
    "PersistentVolumeClaim": "places no pods; a pod's claim is flagged on the pod",
    "PodDisruptionBudget": "a disruption budget limits evictions (drains, consolidation, expiry), which a plan "
    "of the peak does not simulate",
    "PriorityClass": "priority decides preemption, which a plan of the peak, where every pod must fit, does not use",
}
# Kinds a controller creates: with an owner they repeat pods their owner already plans.
OWNED_KINDS = ("Pod", "ReplicaSet")
MODELLED_RESOURCES = ("cpu", "memory", "ephemeral-storage")
ZONE_LABEL = "topology.kubernetes.io/zone"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# Objects given again identically that the report lists one by one; the rest are counted.
MAX_REPEATED_LISTED = 50
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
        return f"{self.what}: {self.path} ({self.why})" if self.path else f"{self.what} ({self.why})"


@dataclass(frozen=True)
class NodePoolObject:
    """`document`: the object as given, for the rules of its CRD (`sizing.karpenter.crd_rules`)."""

    name: str
    requirements: tuple[Mapping[str, Any], ...]
    taints: tuple[Taint, ...]
    labels: Mapping[str, str]
    limits: Mapping[str, Any]
    weight: int
    node_class: str | None
    document: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class NodeClassObject:
    """An EC2NodeClass as read: `spec.kubelet`, the AMI family (from `amiFamily` or the alias),
    `spec.blockDeviceMappings` (for the node's ephemeral storage) as given, and `document`, the object
    as given, for the rules of its CRD (`sizing.karpenter.crd_rules`)."""

    name: str
    kubelet: Mapping[str, Any]
    ami_family: str | None
    block_device_mappings: tuple[Mapping[str, Any], ...] = ()
    document: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ClusterObjects:
    workloads: tuple[Workload, ...]
    daemon_sets: tuple[DaemonSet, ...]
    node_pools: tuple[NodePoolObject, ...]
    node_classes: tuple[NodeClassObject, ...]
    nodes: tuple[ExistingNode, ...]
    unmodelled: tuple[Unmodelled, ...]
    not_planned: tuple[str, ...] = ()  # "Kind namespace/name (why)" of objects that place no pods
    repeated: tuple[str, ...] = ()  # "Kind namespace/name (where repeats where identically)", read once
    # (warning, "object: field = value (why)") of values almost surely mistaken (`sizing.kube.doubtful`).
    doubtful: tuple[tuple[str, str], ...] = ()


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
                _integer(_mapping(p, where).get("weight", 1), what, f"{where}.weight", 1, 100),
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
                        _integer(term.get("weight", 1), what, f"{path}.weight", 1, 100),
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
                    _integer(tsc.get("maxSkew", 1), what, f"{path}.maxSkew", 1),
                    str(tsc.get("whenUnsatisfiable", "DoNotSchedule")),
                    selector,
                    None
                    if tsc.get("minDomains") is None
                    else _integer(tsc.get("minDomains"), what, f"{path}.minDomains", 1),
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
                        ports.append(
                            HostPort(
                                _integer(port["hostPort"], what, f"{where}.{kind}.ports.hostPort", 1, 65535),
                                str(port.get("protocol", "TCP")),
                            )
                        )
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
        raise SizingInputError(f"{where}.metadata.name must be a non-empty string, got {echo(name)}")
    namespace = metadata.get("namespace") or DEFAULT_NAMESPACE
    if not isinstance(namespace, str):
        raise SizingInputError(f"{where}.metadata.namespace must be a string, got {echo(namespace)}")
    return namespace, name, metadata


def _integer(value: Any, what: str, path: str, minimum: int = 0, maximum: int | None = None) -> int:
    """An integer field of an object, from `minimum` to `maximum`; anything else names the field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SizingInputError(f"{what}: {path} must be an integer >= {minimum}, got {echo(value)}")
    if maximum is not None and value > maximum:
        raise SizingInputError(f"{what}: {path} is {value:,}, more than {maximum:,} ({CEILING_WHY})")
    return value


def _labels(value: Any, where: str) -> dict[str, str]:
    return {str(key): str(label) for key, label in _mapping(value, where).items()}


@dataclass
class _Objects:
    """What the documents read so far hold, and where each object was given."""

    reader: _Reader = field(default_factory=_Reader)
    workloads: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    autoscalers: list[tuple[str, str, str, str, int, int, Mapping[str, Any]]] = field(default_factory=list)
    daemon_sets: list[DaemonSet] = field(default_factory=list)
    pools: list[NodePoolObject] = field(default_factory=list)
    classes: list[NodeClassObject] = field(default_factory=list)
    nodes: list[ExistingNode] = field(default_factory=list)
    unplanned: list[str] = field(default_factory=list)
    seen: dict[tuple[str, str, str], tuple[str, Mapping[str, Any]]] = field(default_factory=dict)
    repeated: list[str] = field(default_factory=list)
    repeats: int = 0
    doubtful: list[tuple[str, str]] = field(default_factory=list)

    def once(self, kind: str, namespace: str, name: str, where: str, document: Mapping[str, Any]) -> bool:
        """Whether the object is new. One given again identically is the same object (as `kubectl
        apply` of both is): it is read once and recorded in `repeated`. One given again with
        other content is refused, naming both places and the first field where they differ."""
        key = (kind, namespace if kind not in CLUSTER_SCOPED_KINDS else "", name)
        if key not in self.seen:
            self.seen[key] = (where, document)
            return True
        first, earlier = self.seen[key]
        shown = name if kind in CLUSTER_SCOPED_KINDS else f"{namespace}/{name}"
        difference = first_difference(earlier, document)
        if difference is None:
            self.repeats += 1
            if len(self.repeated) < MAX_REPEATED_LISTED:
                self.repeated.append(f"{kind} {shown} ({where} repeats {first} identically)")
            return False
        raise SizingInputError(
            f"{kind} {shown} is given twice with different content ({first}, and {where}; they first differ at "
            f"{difference}); give each object once"
        )


def first_difference(first: Any, second: Any, path: str = "") -> str | None:
    """The path of the first field where two parsed objects differ (`spec.replicas`,
    `spec.template.spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]` for a
    key with a dot, `(the whole object)` at the top), or None when they are equal. Keys are walked in the first object's order, then the keys only the second has."""
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        for key in [*first, *(key for key in second if key not in first)]:
            here = f'{path}["{key}"]' if "." in str(key) else f"{path}.{key}" if path else str(key)
            if key not in first or key not in second:
                return here
            found = first_difference(first[key], second[key], here)
            if found is not None:
                return found
        return None
    if isinstance(first, list) and isinstance(second, list):
        for index, (a, b) in enumerate(zip(first, second, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(first) == len(second) else f"{path}[{min(len(first), len(second))}]"
    if type(first) is type(second) and first == second:
        return None
    return path or "(the whole object)"


@dataclass
class ObjectCounter:
    """Counts workloads and nodes while YAML is read (a `safe_yaml.ObjectHook`), across every input
    it is handed to, and refuses the first one past the planner's ceilings (`MAX_WORKLOADS`,
    `MAX_EXISTING_NODES`) before the rest is read or anything is built: a list of 20,000
    Deployments is refused after reading about a twentieth of it. Workloads scaled to zero count
    too (an HPA may scale them up); objects the planner does not plan are not counted."""

    workloads: int = 0
    nodes: int = 0

    def hook(self, where: str) -> Callable[[MappingNode, str, str | None], None]:
        """The hook for the input `where` names."""
        return lambda node, place, list_kind: self.count(node, f"{where} {place}", list_kind)

    def count(self, node: MappingNode, where: str, list_kind: str | None = None) -> None:
        kinds = [
            value.value
            for key, value in node.value
            if isinstance(key, ScalarNode) and key.value == "kind" and isinstance(value, ScalarNode)
        ]
        kind = kinds[0] if kinds else item_kind(list_kind)
        if kind in WORKLOAD_KINDS:
            self.workloads += 1
            if self.workloads > MAX_WORKLOADS:
                raise SizingInputError(
                    f"{where}: {self.workloads:,} workloads (Deployments, StatefulSets, Jobs) by here, more than "
                    f"{MAX_WORKLOADS:,} (the planner's ceiling: each workload is simulated as groups of its own; "
                    "plan the NodePool's share of them)"
                )
        elif kind in ("Node", "NodeClaim"):
            self.nodes += 1
            if self.nodes > MAX_EXISTING_NODES:
                raise SizingInputError(
                    f"{where}: {self.nodes:,} existing nodes (Nodes, NodeClaims) by here, more than "
                    f"{MAX_EXISTING_NODES:,} (the most Kubernetes supports in one cluster, and the planner's ceiling)"
                )


def read_objects(texts: Sequence[tuple[str, str]]) -> ClusterObjects:
    """The objects of YAML texts given as (where, text) pairs (see `read_parsed_objects`), the
    planner's ceilings checked while they are read (`ObjectCounter`)."""
    counter = ObjectCounter()
    return read_parsed_objects([(where, load_documents(text, where, counter.hook(where))) for where, text in texts])


def read_parsed_objects(sources: Sequence[tuple[str, Sequence[Any]]]) -> ClusterObjects:
    """The objects of parsed YAML documents given as (where, documents) pairs.

    Every object is accounted for: planned (workloads, DaemonSets, HPAs, NodePools, EC2NodeClasses,
    Nodes, NodeClaims), listed as not planned because it places no pods (`NOT_PLANNED_KINDS`, or a
    Pod or ReplicaSet that its owner creates), or recorded as unmodelled (any other kind).
    An object without a kind is refused; one given again identically is read once and listed in
    `repeated`; one given again with other content is refused (`_Objects.once`).
    """
    found = _Objects()
    for source, documents in sources:
        for document, where in object_documents(documents, source):
            try:
                _read_document(found, document, where)
            except SizingInputError as error:
                if str(error).startswith(where):
                    raise
                raise SizingInputError(f"{where}: {error}") from None
    reader = found.reader
    for what, target_kind, namespace, target_name, maximum, minimum, behaviour in found.autoscalers:
        key = (target_kind, namespace, target_name)
        if key not in found.workloads:
            raise SizingInputError(f"{what} scales {target_kind} {namespace}/{target_name}, which is not in the input")
        if "min_replicas" in found.workloads[key]:
            raise SizingInputError(f"{what}: {target_kind} {namespace}/{target_name} is scaled by two HPAs; keep one")
        # At peak the HPA runs maxReplicas, whatever the workload's own replicas say.
        found.workloads[key].update(
            replicas=maximum,
            autoscaled=True,
            min_replicas=minimum,
            scale_up_policies=tuple(dict(p) for p in _list(behaviour.get("policies"), what)),
            scale_up_select_policy=behaviour.get("selectPolicy"),
            scale_up_stabilization_seconds=behaviour.get("stabilizationWindowSeconds"),
        )
    planned = []
    idle = set()
    for (kind, namespace, name), fields in found.workloads.items():
        if fields["replicas"] == 0:
            found.unplanned.append(f"{kind} {namespace}/{name} (0 replicas and no HPA: it runs no pods)")
            idle.add(f"{kind} {namespace}/{name}")
        else:
            planned.append(Workload(**fields))
    return ClusterObjects(
        workloads=tuple(planned),
        daemon_sets=tuple(found.daemon_sets),
        node_pools=tuple(found.pools),
        node_classes=tuple(found.classes),
        nodes=tuple(found.nodes),
        # What a workload that runs no pods uses changes no pod's place: it is not flagged.
        unmodelled=tuple(item for item in reader.unmodelled if item.what not in idle),
        not_planned=tuple(found.unplanned),
        repeated=tuple(found.repeated)
        + (
            (f"{found.repeats - len(found.repeated):,} more objects given again identically",)
            if found.repeats > len(found.repeated)
            else ()
        ),
        doubtful=tuple(found.doubtful),
    )


def _read_document(found: _Objects, document: Mapping[str, Any], where: str) -> None:
    kind = document.get("kind")
    if not isinstance(kind, str) or not kind:
        raise SizingInputError(
            f"{where}: has no kind, so it is no Kubernetes object (apiVersion, kind, metadata, spec); "
            f"its keys: {echo(sorted(str(key) for key in document))}"
        )
    namespace, name, metadata = _meta(document, f"{where} ({kind})")
    if not found.once(kind, namespace, name, where, document):
        return
    what = f"{kind} {name}" if kind in CLUSTER_SCOPED_KINDS else f"{kind} {namespace}/{name}"
    if kind in WORKLOAD_KINDS or kind == "DaemonSet":
        _read_workload(found, document, kind, namespace, name, what)
        found.doubtful.extend(doubtful_values(document, what)[: MAX_DOUBTFUL - len(found.doubtful)])
    elif kind == "HorizontalPodAutoscaler":
        _read_autoscaler(found, document, namespace, what)
    elif kind == "NodePool":
        _check_api_version(found.reader, document, what, KARPENTER_API)
        found.pools.append(_node_pool(found.reader, document, name, what))
    elif kind == "EC2NodeClass":
        _check_api_version(found.reader, document, what, NODE_CLASS_API)
        found.classes.append(_node_class(found.reader, document, name, what))
    elif kind in ("Node", "NodeClaim"):
        found.nodes.append(_node(document, where, kind))
    elif kind in NOT_PLANNED_KINDS:
        found.unplanned.append(f"{what} ({NOT_PLANNED_KINDS[kind]})")
    elif kind in OWNED_KINDS and _list(metadata.get("ownerReferences"), f"{what}.metadata.ownerReferences"):
        owner = _mapping(_list(metadata.get("ownerReferences"), what)[0], what)
        found.unplanned.append(f"{what} (created by its owner, {owner.get('kind')} {owner.get('name')})")
    elif kind in OWNED_KINDS:
        found.reader.flag(what, "", f"a {kind} of its own, with no owner, is not planned; give its Deployment")
    else:
        found.reader.flag(
            what, "", f"kind {kind} is not read by the planner; pods it creates or changes are not planned"
        )


def _check_api_version(reader: _Reader, document: Mapping[str, Any], what: str, expected: str) -> None:
    version = document.get("apiVersion")
    if version is not None and version != expected:
        reader.flag(what, "apiVersion", f"{echo(version)} is not read; the planner reads {expected}")


def _read_workload(
    found: _Objects, document: Mapping[str, Any], kind: str, namespace: str, name: str, what: str
) -> None:
    reader = found.reader
    spec = _mapping(document.get("spec"), f"{what}.spec")
    template = _mapping(spec.get("template"), f"{what}.spec.template")
    pod = _mapping(template.get("spec"), f"{what}.spec.template.spec")
    labels = _labels(_mapping(template.get("metadata"), what).get("labels"), f"{what}.spec.template.metadata.labels")
    path = "spec.template.spec"
    reader.check_pod(pod, path, what)
    if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
        reader.flag(what, "spec.volumeClaimTemplates", "volume topology is not modelled")
    cpu, memory, storage = pod_resource_requests(pod, f"{what}.{path}")
    scheduling = reader.scheduling(pod, labels, namespace, path, what)
    selector = _labels(pod.get("nodeSelector"), f"{what}.{path}.nodeSelector")
    display = name if namespace == DEFAULT_NAMESPACE else f"{namespace}/{name}"
    if kind == "DaemonSet":
        found.daemon_sets.append(DaemonSet(display, cpu, memory, selector, scheduling, ephemeral_storage_mib=storage))
        return
    if kind == "Job":
        replicas = _integer(spec.get("parallelism", 1), what, "spec.parallelism", 0, MAX_REPLICAS)
        surge: Any = 0
    else:
        replicas = _integer(spec.get("replicas", 1), what, "spec.replicas", 0, MAX_REPLICAS)
        surge = 0 if kind == "StatefulSet" else _max_surge(spec, what)
    found.workloads[(kind, namespace, name)] = dict(
        name=display,
        cpu_millicores=cpu,
        memory_mib=memory,
        ephemeral_storage_mib=storage,
        replicas=replicas,
        max_surge=surge,
        node_selector=selector,
        scheduling=scheduling,
        kind=kind,
        autoscaled=False,
    )


def _read_autoscaler(found: _Objects, document: Mapping[str, Any], namespace: str, what: str) -> None:
    spec = _mapping(document.get("spec"), f"{what}.spec")
    target = _mapping(spec.get("scaleTargetRef"), f"{what}.spec.scaleTargetRef")
    maximum = _integer(spec.get("maxReplicas"), what, "spec.maxReplicas", 1, MAX_REPLICAS)
    minimum = _integer(spec.get("minReplicas", 1), what, "spec.minReplicas", 1)
    if minimum > maximum:
        raise SizingInputError(
            f"{what}: spec.minReplicas ({minimum:,}) is greater than spec.maxReplicas ({maximum:,}); "
            "Kubernetes refuses such an HPA: minReplicas must not exceed maxReplicas"
        )
    scale_up = _mapping(_mapping(spec.get("behavior"), what).get("scaleUp"), what)
    found.autoscalers.append(
        (what, str(target.get("kind")), namespace, str(target.get("name")), maximum, minimum, scale_up)
    )


def _node_pool(reader: _Reader, document: Mapping[str, Any], name: str, what: str) -> NodePoolObject:
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
    labels = _labels(_mapping(template.get("metadata"), what).get("labels"), f"{what}.spec.template.metadata.labels")
    if spec.get("replicas") is not None:
        reader.flag(what, "spec.replicas", "static NodePools are not modelled")
    return NodePoolObject(
        name,
        tuple(_list(tspec.get("requirements"), f"{what}.spec.template.spec.requirements")),
        taints,
        labels,
        dict(_mapping(spec.get("limits"), what)),
        _integer(spec.get("weight") or 0, what, "spec.weight", 0, 100),
        _mapping(tspec.get("nodeClassRef"), what).get("name"),
        document,
    )


def _node_class(reader: _Reader, document: Mapping[str, Any], name: str, what: str) -> NodeClassObject:
    spec = _mapping(document.get("spec"), what)
    if spec.get("instanceStorePolicy") is not None:
        reader.flag(
            what,
            "spec.instanceStorePolicy",
            "instance-store ephemeral storage (RAID0) is not modelled: the catalog has no instance-store sizes, "
            "so the plan counts the root volume instead",
        )
    family = spec.get("amiFamily")
    for term in _list(spec.get("amiSelectorTerms"), f"{what}.spec.amiSelectorTerms"):
        alias = _mapping(term, what).get("alias")
        if alias:
            alias_family = str(alias).split("@")[0]
            family = AMI_ALIAS_FAMILIES.get(alias_family, alias_family)
    mappings = tuple(
        _mapping(m, f"{what}.spec.blockDeviceMappings[{i}]")
        for i, m in enumerate(_list(spec.get("blockDeviceMappings"), f"{what}.spec.blockDeviceMappings"))
    )
    return NodeClassObject(name, dict(_mapping(spec.get("kubelet"), what)), family, mappings, document)


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
