"""A workload's pods at peak as the simulation's pod groups: node selector, node affinity,
tolerations, topology spread, pod affinity and anti-affinity and host ports resolved against the
NodePools.

Karpenter turns a pod's node selector, its first required node-affinity term and its heaviest
preferred node-affinity term into requirements; preferred pod affinity and anti-affinity and
ScheduleAnyway spreads count as required until relaxed. The relaxation order (kubernetes-sigs/karpenter v1.14
`preferences.go`) becomes the chain of `PodGroup.fallback`s.

A requirement on a custom label (`sizing.karpenter.labels`) matches a NodePool whose requirements or
template labels give the label a value it allows; one the NodePool does not define admits only NotIn
and DoesNotExist. Topology keys: hostname, zone, capacity type, the instance-type labels and custom
labels; well-known labels the catalog does not carry are refused, naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sizing.errors import NeverRuns, SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.karpenter.labels import NORMALIZED, WELL_KNOWN, LabelRequirement, merged, pool_admits
from sizing.karpenter.requirements import CAPACITY_TYPE_KEY, INSTANCE_KEYS, ZONE_KEY
from sizing.karpenter.simulation import PodGroup, TopologyRule
from sizing.kube.scheduling import (
    HOSTNAME_KEY,
    SCHEDULE_ANYWAY,
    LabelExpression,
    LabelSelector,
    PodAffinityTerm,
    Taint,
    TopologySpread,
    tolerates_all,
)
from sizing.kube.workloads import ExistingNode, Workload

NODEPOOL_KEY = "karpenter.sh/nodepool"
# Node-selector keys with a meaning of their own; any other key is a custom label.
OWN_KEYS = INSTANCE_KEYS + (ZONE_KEY, CAPACITY_TYPE_KEY, NODEPOOL_KEY, HOSTNAME_KEY)
# Labels Karpenter derives from the instance type or offering that the catalog does not carry.
UNMODELLED_WELL_KNOWN = (WELL_KNOWN | frozenset(NORMALIZED)) - frozenset(OWN_KEYS)
TOPOLOGY_NAMES = {HOSTNAME_KEY: "hostname", ZONE_KEY: "zone"}


def is_custom_key(key: str) -> bool:
    """Whether pods selecting `key` select a custom label (one a NodePool defines, not Karpenter)."""
    return key not in OWN_KEYS and key not in UNMODELLED_WELL_KNOWN


def unmodelled_key(key: str) -> str:
    """Why a well-known label is not modelled, with what to use instead."""
    if key in NORMALIZED:
        return f"{key!r} is the deprecated name of {NORMALIZED[key]!r}; select that key instead"
    return (
        f"{key!r} is a label Karpenter derives from the instance type or its offering, which the catalog does not carry"
    )


@dataclass(frozen=True)
class PoolView:
    """What pods see of a NodePool: its name, types, zones, capacity types, template labels and taints;
    label_requirements: what its nodes' custom labels are, from its requirements and template labels
    (one per key)."""

    name: str
    instances: tuple[InstanceType, ...]
    zones: frozenset[str] | None
    capacity_types: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    label_requirements: tuple[LabelRequirement, ...] = ()

    def custom_values(self, key: str) -> frozenset[str]:
        """The values of custom label `key` its nodes may carry, when they are a finite set."""
        for requirement in self.label_requirements:
            if requirement.key == key:
                return requirement.finite() or frozenset()
        return frozenset()


@dataclass
class _Variant:
    node_terms: list[tuple[LabelExpression, ...]]
    topology: list[tuple[TopologySpread | PodAffinityTerm, str]]  # (term, description)
    prefer_no_schedule: bool = False
    relaxed: tuple[str, ...] = ()


def _selector_expressions(workload: Workload) -> tuple[LabelExpression, ...]:
    return tuple(LabelExpression(key, "In", (value,)) for key, value in workload.node_selector.items())


def _node_labels(node: ExistingNode, instance: InstanceType) -> dict[str, str]:
    labels = dict(instance.labels())
    if node.zone:
        labels[ZONE_KEY] = node.zone
    labels[CAPACITY_TYPE_KEY] = node.capacity_type
    if node.node_pool:
        labels[NODEPOOL_KEY] = node.node_pool
    labels[HOSTNAME_KEY] = node.name
    labels.update(node.labels)
    return labels


class PodGroupBuilder:
    """Builds the pod groups of every workload against the same NodePools and running nodes."""

    def __init__(
        self,
        pools: Sequence[PoolView],
        workloads: Sequence[Workload],
        running: Sequence[tuple[ExistingNode, InstanceType]],
    ):
        self.pools = list(pools)
        self.workloads = list(workloads)
        self.running = list(running)
        self.known_zones = frozenset().union(*[p.zones for p in pools if p.zones is not None]) | {
            node.zone for node, _ in running if node.zone
        }

    # -- node requirements -----------------------------------------------------------------

    def _placement(
        self, workload: Workload, expressions: Sequence[LabelExpression], prefer_no_schedule: bool
    ) -> tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str] | None, frozenset[str], frozenset[str]]:
        """(allowed types, zones, capacity types, pools, running nodes) for pods with these requirements."""
        where = f"workload {workload.name!r}"
        allowed: frozenset[str] | None = None
        zones: frozenset[str] | None = None
        kinds: frozenset[str] | None = None
        pools = []
        all_types = {i.name: i for p in self.pools for i in p.instances}
        all_types.update({i.name: i for _, i in self.running})
        for expression in expressions:
            key = expression.key
            if key == HOSTNAME_KEY:
                raise SizingInputError(f"{where}: node requirement on {HOSTNAME_KEY} is not modelled")
            if key in UNMODELLED_WELL_KNOWN:
                raise SizingInputError(f"{where}: node requirement on {unmodelled_key(key)}; it is not modelled")
            if key in INSTANCE_KEYS:
                matching = frozenset(n for n, i in all_types.items() if expression.admits(i.labels()))
                allowed = matching if allowed is None else allowed & matching
            elif key == ZONE_KEY:
                universe = self.known_zones | frozenset(v for v in expression.values)
                matching = frozenset(z for z in universe if expression.admits({ZONE_KEY: z}))
                zones = matching if zones is None else zones & matching
            elif key == CAPACITY_TYPE_KEY:
                matching = frozenset(
                    k for k in ("on-demand", "spot", "reserved") if expression.admits({CAPACITY_TYPE_KEY: k})
                )
                kinds = matching if kinds is None else kinds & matching
        custom = custom_requirements(expressions)
        for pool in self.pools:
            if not tolerates_all(workload.scheduling.tolerations, pool.taints, prefer_no_schedule):
                continue
            if any(not e.admits({NODEPOOL_KEY: pool.name}) for e in expressions if e.key == NODEPOOL_KEY):
                continue
            if pool_admits(pool.label_requirements, custom) is not None:
                continue
            if kinds is not None and not (kinds & set(pool.capacity_types)):
                continue
            if zones is not None and pool.zones is not None and not (zones & pool.zones):
                continue
            if allowed is not None and not any(i.name in allowed for i in pool.instances):
                continue
            pools.append(pool.name)
        nodes = []
        for node, instance in self.running:
            labels = _node_labels(node, instance)
            if tolerates_all(workload.scheduling.tolerations, node.taints, prefer_no_schedule) and all(
                e.admits(labels) for e in expressions
            ):
                nodes.append(node.name)
        return allowed, zones, kinds, frozenset(pools), frozenset(nodes)

    # -- topology --------------------------------------------------------------------------

    def _selects(self, owner: Workload, selector: LabelSelector, namespaces: frozenset[str]) -> frozenset[str]:
        return frozenset(
            w.name for w in self.workloads if w.scheduling.selected_by(selector, namespaces, owner.scheduling.namespace)
        )

    def _rule(self, workload: Workload, term: TopologySpread | PodAffinityTerm) -> TopologyRule:
        where = f"workload {workload.name!r}"
        key = TOPOLOGY_NAMES.get(term.topology_key, term.topology_key)
        if term.topology_key in UNMODELLED_WELL_KNOWN or term.topology_key == NODEPOOL_KEY:
            why = (
                "Karpenter's NodePools give it no domain"
                if term.topology_key == NODEPOOL_KEY
                else unmodelled_key(term.topology_key)
            )
            raise SizingInputError(
                f"{where}: topology key {term.topology_key!r} is not modelled ({why}); modelled keys are "
                f"{HOSTNAME_KEY}, {ZONE_KEY}, {CAPACITY_TYPE_KEY}, the instance-type labels {sorted(INSTANCE_KEYS)} "
                "and custom labels the NodePools define"
            )
        if isinstance(term, TopologySpread):
            return TopologyRule(
                "spread",
                key,
                self._selects(workload, term.selector, frozenset()),
                max_skew=term.max_skew,
                min_domains=term.min_domains,
            )
        kind = "anti-affinity" if term.anti else "affinity"
        return TopologyRule(kind, key, self._selects(workload, term.selector, term.namespaces))

    # -- variants --------------------------------------------------------------------------

    def _variants(self, workload: Workload) -> list[_Variant]:
        scheduling = workload.scheduling
        required = list(scheduling.required_node_terms) or [()]
        preferred_nodes = [term for _, term in sorted(scheduling.preferred_node_terms, key=lambda p: -p[0])]

        def preferred(anti: bool) -> list[PodAffinityTerm]:
            # Heaviest first, as Karpenter drops them; a stable sort keeps equal weights in order.
            terms = [t for t in scheduling.pod_affinity if t.anti == anti and t.weight is not None]
            return sorted(terms, key=lambda t: -(t.weight or 0))

        preferred_anti = preferred(anti=True)
        preferred_affinity = preferred(anti=False)
        required_pod_terms = [t for t in scheduling.pod_affinity if t.weight is None]
        hard_spread = [s for s in scheduling.topology_spread if s.when_unsatisfiable != SCHEDULE_ANYWAY]
        soft_spread = [s for s in scheduling.topology_spread if s.when_unsatisfiable == SCHEDULE_ANYWAY]
        variants = []
        relaxed: list[str] = []

        def add(prefer_no_schedule: bool = False) -> None:
            node_terms = [required[0] + (preferred_nodes[0] if preferred_nodes else ())]
            terms = hard_spread + soft_spread + required_pod_terms + preferred_affinity + preferred_anti
            topology = [(t, "") for t in terms]
            variants.append(_Variant(node_terms, topology, prefer_no_schedule, tuple(relaxed)))

        add()
        while len(required) > 1:
            required.pop(0)
            relaxed.append("spec.affinity.nodeAffinity.requiredDuringScheduling term")
            add()
        while preferred_affinity:
            preferred_affinity.pop(0)
            relaxed.append("preferred pod affinity term")
            add()
        while preferred_anti:
            preferred_anti.pop(0)
            relaxed.append("preferred pod anti-affinity term")
            add()
        while preferred_nodes:
            preferred_nodes.pop(0)
            relaxed.append("preferred node affinity term")
            add()
        while soft_spread:
            soft_spread.pop(0)
            relaxed.append("topologySpreadConstraints (ScheduleAnyway)")
            add()
        if any(t.effect == "PreferNoSchedule" for p in self.pools for t in p.taints):
            relaxed.append("PreferNoSchedule taints tolerated")
            add(prefer_no_schedule=True)
        return variants

    def _check_domains(self, workload: Workload, group: PodGroup) -> None:
        """Raise NeverRuns for a required topology on a label no NodePool the pods may use gives a value
        to and no running node carries: Karpenter has no domain to put such pods in and leaves them pending."""
        pools = [p for p in self.pools if group.pools is None or p.name in group.pools]
        for rule in group.topology:
            if rule.key in ("hostname", "zone", CAPACITY_TYPE_KEY):
                continue
            values: set[str] = set()
            for pool in pools:
                if rule.key in INSTANCE_KEYS:
                    values |= {i.labels()[rule.key] for i in pool.instances if rule.key in i.labels()}
                else:
                    values |= pool.custom_values(rule.key)
            for node, instance in self.running:
                value = _node_labels(node, instance).get(rule.key)
                if value:
                    values.add(value)
            if not values:
                raise NeverRuns(
                    workload.name,
                    f"workload {workload.name!r}: its topology on {rule.key!r} has no domain: no NodePool it may use "
                    f"({', '.join(p.name for p in pools) or 'none'}) gives that label a value (a requirement with "
                    "In or a template label) and no running node carries it, so Karpenter would leave its pods "
                    "pending",
                )

    def group(self, workload: Workload) -> PodGroup:
        """The workload's peak pods, with its relaxation chain as fallbacks."""
        base = _selector_expressions(workload)
        groups: list[PodGroup] = []
        for variant in self._variants(workload):
            expressions = base + variant.node_terms[0]
            allowed, zones, kinds, pools, nodes = self._placement(workload, expressions, variant.prefer_no_schedule)
            rules = tuple(self._rule(workload, term) for term, _ in variant.topology)
            if any(rule.key == "zone" for rule in rules) and not self.known_zones:
                raise SizingInputError(
                    f"workload {workload.name!r}: zone topology needs the zones the NodePools use; "
                    "give `zones` (or a zone requirement on the NodePool)"
                )
            ports = frozenset((p.protocol, p.port) for p in workload.scheduling.host_ports)
            groups.append(
                PodGroup(
                    workload.name,
                    workload.requests,
                    workload.peak_pods,
                    allowed,
                    zones,
                    kinds,
                    pools=pools,
                    nodes=nodes,
                    topology=rules,
                    host_ports=ports,
                    relaxed=variant.relaxed,
                    labels=label_requirements(expressions),
                )
            )
        if all(not g.pools and not g.nodes for g in groups):
            custom = custom_requirements(base + self._variants(workload)[-1].node_terms[0])
            reasons = [
                f"NodePool {pool.name}: {reason}"
                for pool in self.pools
                if (reason := pool_admits(pool.label_requirements, custom)) is not None
            ]
            raise NeverRuns(
                workload.name,
                f"workload {workload.name!r}: no NodePool and no running node can take its pods "
                f"(node selector {dict(workload.node_selector)}, tolerations and node affinity checked "
                f"against NodePools {[p.name for p in self.pools]})"
                + (f"; custom labels: {'; '.join(reasons)}; Karpenter would leave them pending" if reasons else ""),
            )
        self._check_domains(workload, groups[-1])
        fallback = None
        for group in reversed(groups[1:]):
            fallback = _with_fallback(group, fallback)
        return _with_fallback(groups[0], fallback)


def custom_requirements(expressions: Sequence[LabelExpression]) -> tuple[LabelRequirement, ...]:
    """The pod's requirements on custom labels, one per key."""
    return merged(LabelRequirement.of(e.key, e.operator, e.values) for e in expressions if is_custom_key(e.key))


def label_requirements(expressions: Sequence[LabelExpression]) -> tuple[LabelRequirement, ...]:
    """The pod's requirements on labels other than zone, capacity type, NodePool and hostname, one per key."""
    skipped = (ZONE_KEY, CAPACITY_TYPE_KEY, NODEPOOL_KEY, HOSTNAME_KEY)
    return merged(LabelRequirement.of(e.key, e.operator, e.values) for e in expressions if e.key not in skipped)


def _with_fallback(group: PodGroup, fallback: PodGroup | None) -> PodGroup:
    from dataclasses import replace

    return replace(group, fallback=fallback)
