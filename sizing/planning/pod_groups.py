"""A workload's pods at peak as the simulation's pod groups: node selector, node affinity,
tolerations, topology spread, pod affinity and anti-affinity and host ports resolved against the
NodePools.

Karpenter turns a pod's node selector, its first required node-affinity term and its heaviest
preferred node-affinity term into requirements; preferred pod affinity and anti-affinity and
ScheduleAnyway spreads count as required until relaxed. The relaxation order (kubernetes-sigs/karpenter v1.14
`preferences.go`) becomes the chain of `PodGroup.fallback`s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
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
TOPOLOGY_KEYS = {HOSTNAME_KEY: "hostname", ZONE_KEY: "zone"}


@dataclass(frozen=True)
class PoolView:
    """What pods see of a NodePool: its name, types, zones, capacity types, template labels and taints."""

    name: str
    instances: tuple[InstanceType, ...]
    zones: frozenset[str] | None
    capacity_types: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()


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
        for pool in self.pools:
            labels = dict(pool.labels)
            labels[NODEPOOL_KEY] = pool.name
            if not tolerates_all(workload.scheduling.tolerations, pool.taints, prefer_no_schedule):
                continue
            if any(
                not expression.admits(labels)
                for expression in expressions
                if expression.key not in INSTANCE_KEYS and expression.key not in (ZONE_KEY, CAPACITY_TYPE_KEY)
            ):
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
        key = TOPOLOGY_KEYS.get(term.topology_key)
        if key is None:
            raise SizingInputError(
                f"{where}: topology key {term.topology_key!r} is not modelled; "
                f"supported keys are {sorted(TOPOLOGY_KEYS)}"
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
                )
            )
        if all(not g.pools and not g.nodes for g in groups):
            raise SizingInputError(
                f"workload {workload.name!r}: no NodePool and no running node can take its pods "
                f"(node selector {dict(workload.node_selector)}, tolerations and node affinity checked "
                f"against NodePools {[p.name for p in self.pools]})"
            )
        fallback = None
        for group in reversed(groups[1:]):
            fallback = _with_fallback(group, fallback)
        return _with_fallback(groups[0], fallback)


def _with_fallback(group: PodGroup, fallback: PodGroup | None) -> PodGroup:
    from dataclasses import replace

    return replace(group, fallback=fallback)
