"""A pod's scheduling terms as the planner reads them: labels, tolerations, node and pod affinity,
topology spread and host ports (Kubernetes `core/v1` semantics).

These are plain values; `sizing.karpenter.simulation` decides what they mean for a fleet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


@dataclass(frozen=True)
class LabelExpression:
    """`{key, operator, values}` of a node selector term or a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def admits(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with these labels satisfies the expression."""
        value = labels.get(self.key)
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        if value is None or not value.lstrip("-").isdigit():
            return False
        bound = int(self.values[0])
        return int(value) > bound if self.operator == "Gt" else int(value) < bound


NodeSelectorTerm = tuple[LabelExpression, ...]


def term_admits(term: Sequence[LabelExpression], labels: Mapping[str, str]) -> bool:
    return all(expression.admits(labels) for expression in term)


@dataclass(frozen=True)
class LabelSelector:
    """A `metav1.LabelSelector`; an empty one selects every pod."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[LabelExpression, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "match_labels", MappingProxyType(dict(self.match_labels)))

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.match_labels.items())), self.match_expressions))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) == value for key, value in self.match_labels.items()) and term_admits(
            self.match_expressions, labels
        )


@dataclass(frozen=True)
class Taint:
    key: str
    effect: str
    value: str = ""


@dataclass(frozen=True)
class Toleration:
    """A toleration; key None with operator Exists tolerates every taint, effect None every effect."""

    key: str | None = None
    operator: str = "Equal"
    value: str = ""
    effect: str | None = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect is not None and self.effect != taint.effect:
            return False
        if self.key is None:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


def tolerates_all(tolerations: Sequence[Toleration], taints: Sequence[Taint], prefer_no_schedule: bool = False) -> bool:
    """Whether pods with `tolerations` may run on a node with `taints`.

    PreferNoSchedule taints count as hard until `prefer_no_schedule` says they are tolerated,
    as Karpenter's scheduler does before its last relaxation step.
    """
    for taint in taints:
        if taint.effect == "PreferNoSchedule" and prefer_no_schedule:
            continue
        if not any(toleration.tolerates(taint) for toleration in tolerations):
            return False
    return True


@dataclass(frozen=True)
class TopologySpread:
    """One `topologySpreadConstraints` entry."""

    topology_key: str
    max_skew: int
    when_unsatisfiable: str
    selector: LabelSelector
    min_domains: int | None = None


@dataclass(frozen=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term; weight None for required terms.

    namespaces: where the selected pods live (empty: the pod's own namespace).
    """

    topology_key: str
    selector: LabelSelector
    anti: bool
    namespaces: frozenset[str] = frozenset()
    weight: int | None = None


@dataclass(frozen=True)
class HostPort:
    """A container port bound on the node; two pods binding the same port and protocol never share a node."""

    port: int
    protocol: str = "TCP"


@dataclass(frozen=True)
class PodScheduling:
    """What decides where a pod may run, beyond its requests.

    required_node_terms: the OR-ed `requiredDuringScheduling` node selector terms (empty: none);
    preferred_node_terms: (weight, term) pairs; pod_affinity: required and preferred
    pod (anti-)affinity terms.
    """

    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    required_node_terms: tuple[NodeSelectorTerm, ...] = ()
    preferred_node_terms: tuple[tuple[int, NodeSelectorTerm], ...] = ()
    topology_spread: tuple[TopologySpread, ...] = ()
    pod_affinity: tuple[PodAffinityTerm, ...] = ()
    host_ports: tuple[HostPort, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", MappingProxyType(dict(self.labels)))

    def __hash__(self) -> int:
        return hash(
            (
                self.namespace,
                tuple(sorted(self.labels.items())),
                self.tolerations,
                self.required_node_terms,
                self.preferred_node_terms,
                self.topology_spread,
                self.pod_affinity,
                self.host_ports,
            )
        )

    @property
    def constrains_placement(self) -> bool:
        """Whether anything beyond the node selector and tolerations shapes where the pod goes."""
        return bool(
            self.required_node_terms
            or self.preferred_node_terms
            or self.topology_spread
            or self.pod_affinity
            or self.host_ports
        )

    def selected_by(self, selector: LabelSelector, namespaces: frozenset[str], owner_namespace: str) -> bool:
        """Whether a term of a pod in `owner_namespace` selecting `selector` in `namespaces` counts this pod."""
        allowed = namespaces or frozenset({owner_namespace})
        return self.namespace in allowed and selector.matches(self.labels)
