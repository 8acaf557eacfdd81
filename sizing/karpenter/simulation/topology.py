"""Topology spread, pod anti-affinity and host ports: where the next pod of a group may go.

Follows `topologygroup.go` of kubernetes-sigs/karpenter v1.14. A rule's key is "hostname" or a node
label whose domains come from the NodePools (`domains`): zone, capacity type, an instance-type label
or a custom label.

- hostname spread: a node may hold maxSkew pods the selector counts (a new node is always a
  domain with 0, so the minimum is 0);
- spread on another key: a domain is valid while count + 1 - min(count over the pod's domains) <=
  maxSkew (min taken as 0 while fewer domains than minDomains exist); among valid domains the
  NodeClaim commits to the one with the fewest pods;
- anti-affinity: no node (hostname) or domain already holding a selected pod; and the inverse,
  no pod that another workload's anti-affinity selects goes where that workload's pods are;
- pod affinity: a node (hostname) or domain that already holds a selected pod; when none holds one
  anywhere and the pod selects itself, any domain (the first pod then fixes it for the others,
  so pods with self-affinity by hostname share one NodeClaim and by zone one zone). Karpenter
  records a pod's domain for affinity only once its NodeClaim is committed to one, so pods
  whose affinity targets an unconstrained workload in the same batch find no domain and wait;
- host ports: two pods binding the same (protocol, port) never share a node.

One deviation: Karpenter leaves a NodeClaim that takes an anti-affinity pod open to every empty
domain and counts the pod in all of them, so it places one such pod per batch and needs several
batches to converge. The simulation commits the claim to the first empty domain at once, which
gives the fleet those batches converge to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from sizing.karpenter.labels import ZONE_KEY
from sizing.karpenter.simulation.model import (
    AFFINITY,
    ANTI_AFFINITY,
    HOSTNAME,
    SPREAD,
    ZONE,
    PodGroup,
    TopologyRule,
)
from sizing.karpenter.simulation.state import TopologyCounts

UNLIMITED = 2**62


class Inverse:
    """Anti-affinity rules of other workloads, indexed by the workloads they select."""

    def __init__(self, groups: Iterable[PodGroup]):
        self.by_target: dict[str, list[tuple[str, TopologyRule]]] = {}
        for group in groups:
            for candidate in _with_fallbacks(group):
                for rule in candidate.topology:
                    if rule.kind != ANTI_AFFINITY:
                        continue
                    for target in rule.selects:
                        if target == group.workload:
                            continue
                        owners = self.by_target.setdefault(target, [])
                        if (group.workload, rule) not in owners:
                            owners.append((group.workload, rule))

    def against(self, workload: str, key: str) -> list[str]:
        """Workloads whose anti-affinity on `key` selects `workload`."""
        return [owner for owner, rule in self.by_target.get(workload, ()) if rule.key == key]

    def keys(self, workload: str) -> set[str]:
        """The keys other than hostname of the anti-affinity rules that select `workload`."""
        return {rule.key for _, rule in self.by_target.get(workload, ()) if rule.key != HOSTNAME}

    def targets(self, workload: str) -> bool:
        return workload in self.by_target


def _with_fallbacks(group: PodGroup) -> Iterable[PodGroup]:
    current: PodGroup | None = group
    while current is not None:
        yield current
        current = current.fallback


def bootstraps(rule: TopologyRule, group: PodGroup, placed: Mapping[str, int]) -> bool:
    """Whether a pod affinity rule lets the pod start its own domain: it selects the pod's own
    workload and no selected pod is placed yet (Karpenter's `nextDomainAffinity`)."""
    return group.workload in rule.selects and not any(placed.get(w, 0) for w in rule.selects)


def hostname_bootstrap(group: PodGroup, placed: Mapping[str, int]) -> bool:
    """Whether the next pod of `group` starts a hostname affinity domain (then it goes alone,
    and the node it lands on is the only one open to the rest)."""
    return any(
        rule.kind == AFFINITY and rule.key == HOSTNAME and bootstraps(rule, group, placed) for rule in group.topology
    )


def hostname_cap(
    group: PodGroup,
    workloads_on_node: Mapping[str, int],
    ports_on_node: AbstractSet[tuple[str, int]],
    inverse: Inverse,
    placed: Mapping[str, int],
) -> int:
    """How many more pods of `group` a node holding `workloads_on_node` may take (topology and ports);
    `placed`: pods placed so far per workload, anywhere."""
    cap = UNLIMITED
    for rule in group.topology:
        if rule.key != HOSTNAME:
            continue
        present = sum(workloads_on_node.get(w, 0) for w in rule.selects)
        counts_self = group.workload in rule.selects
        if rule.kind == AFFINITY:
            if present == 0 and not bootstraps(rule, group, placed):
                return 0
        elif rule.kind == SPREAD:
            if counts_self:
                cap = min(cap, rule.max_skew - present)
            elif present > rule.max_skew:
                cap = 0
        else:
            if present > 0:
                return 0
            if counts_self:
                cap = min(cap, 1)
    for owner in inverse.against(group.workload, HOSTNAME):
        if workloads_on_node.get(owner, 0) > 0:
            return 0
    if group.host_ports:
        if group.host_ports & ports_on_node:
            return 0
        cap = min(cap, 1)
    return max(cap, 0)


def hostname_excluders(group: PodGroup, inverse: Inverse) -> frozenset[str]:
    """The workloads any pod of which on a node keeps the group's pods off it (hostname pod
    anti-affinity, the group's own or another's that selects it): `hostname_cap` is 0 there."""
    own = (rule.selects for rule in group.topology if rule.key == HOSTNAME and rule.kind == ANTI_AFFINITY)
    return frozenset().union(*own, inverse.against(group.workload, HOSTNAME))


def domain_keys(group: PodGroup, inverse: Inverse) -> tuple[str, ...]:
    """The keys other than hostname whose domain counts decide where the group's pods go, sorted."""
    keys = {rule.key for rule in group.topology if rule.key != HOSTNAME} | inverse.keys(group.workload)
    return tuple(sorted(keys))


def valid_domains(
    group: PodGroup, key: str, domains: frozenset[str], counts: TopologyCounts, inverse: Inverse
) -> frozenset[str]:
    """The domains of `key` the next pod of `group` may go to now."""
    valid = set(domains)
    for rule in group.topology:
        if rule.key != key:
            continue
        if rule.kind == AFFINITY:
            holding = {domain for domain in domains if counts.in_domain(rule.selects, key, domain, "spread") > 0}
            if holding:
                valid &= holding
            elif group.workload not in rule.selects:
                return frozenset()
        elif rule.kind == SPREAD:
            per_domain = {domain: counts.in_domain(rule.selects, key, domain, "spread") for domain in domains}
            if not per_domain:
                return frozenset()
            lowest = min(per_domain.values())
            if rule.min_domains is not None and len(domains) < rule.min_domains:
                lowest = 0
            extra = 1 if group.workload in rule.selects else 0
            valid &= {domain for domain, count in per_domain.items() if count + extra - lowest <= rule.max_skew}
        else:
            valid &= {domain for domain in domains if counts.in_domain(rule.selects, key, domain, "anti") == 0}
    for owner in inverse.against(group.workload, key):
        valid &= {domain for domain in domains if counts.in_domain(frozenset({owner}), key, domain, "anti") == 0}
    return frozenset(valid)


def commit_domain(group: PodGroup, key: str, options: frozenset[str], counts: TopologyCounts) -> str:
    """The domain of `key` a NodeClaim commits to for a pod of `group`: the fewest pods of its first
    spread on the key, else the first by name."""
    ordered = sorted(options)
    for rule in group.topology:
        if rule.key == key and rule.kind == SPREAD:
            return min(ordered, key=lambda domain: counts.in_domain(rule.selects, key, domain, "spread"))
    return ordered[0]


class OwnSpread:
    """`valid_domains` kept up to date pod by pod for the common case: the group's only domain rule
    is a topology spread over its own pods, and no other workload's anti-affinity selects it.

    The per-domain counts are read once and then moved by `add`, so the next pod's valid domains
    cost one pass over the domains instead of a count over every selected workload.
    """

    def __init__(self, rule: TopologyRule, domains: frozenset[str], counts: TopologyCounts):
        self.rule = rule
        self.key = rule.key
        self.per_domain = {domain: counts.in_domain(rule.selects, rule.key, domain, "spread") for domain in domains}
        self.floor_at_zero = rule.min_domains is not None and len(domains) < rule.min_domains

    @classmethod
    def of(
        cls, group: PodGroup, domains: Mapping[str, frozenset[str]], counts: TopologyCounts, inverse: Inverse
    ) -> OwnSpread | None:
        rules = [rule for rule in group.topology if rule.key != HOSTNAME]
        if len(rules) != 1 or len(domains) != 1:
            return None
        (rule,) = rules
        if inverse.against(group.workload, rule.key) or rule.kind != SPREAD:
            return None
        if rule.selects != frozenset({group.workload}) or not domains.get(rule.key):
            return None
        return cls(rule, domains[rule.key], counts)

    def valid(self) -> dict[str, frozenset[str]]:
        per_domain = self.per_domain
        # A domain is valid while its count stays within the skew of the lowest plus one pod.
        ceiling = (0 if self.floor_at_zero else min(per_domain.values())) + self.rule.max_skew - 1
        return {self.key: frozenset([domain for domain, count in per_domain.items() if count <= ceiling])}

    def add(self, domain: str | None, count: int) -> None:
        if domain is not None and domain in self.per_domain:
            self.per_domain[domain] += count

    def in_rounds(self) -> bool:
        """Whether the next pods go one to each domain in turn: maxSkew 1, no minDomains floor and
        every domain at the same count, so that after each domain takes one they are level again."""
        counts = self.per_domain.values()
        return self.rule.max_skew == 1 and not self.floor_at_zero and min(counts) == max(counts)


def tracked_keys(groups: Iterable[PodGroup]) -> frozenset[str]:
    """Every key other than hostname some group's topology counts pods by (relaxed variants too)."""
    return frozenset(
        rule.key for group in groups for candidate in _with_fallbacks(group) for rule in candidate.topology
    ) - {HOSTNAME}


# At most this many domains are listed in a reason; the rest are counted.
_LISTED_DOMAINS = 6


def _where(key: str, domains: frozenset[str], pools: Sequence[str]) -> str:
    """The domains of `key` the pod may use, as a reason names them ("the 3 zones (a, b, c) of NodePool 'x'")."""
    count = len(domains)
    if key == ZONE:
        noun = f"{count} zone{'s' if count != 1 else ''}"
    else:
        noun = f"{count} value{'s' if count != 1 else ''} of {key}"
    ordered = sorted(domains)
    listed = ", ".join(ordered[:_LISTED_DOMAINS])
    if count > _LISTED_DOMAINS:
        listed += f" and {count - _LISTED_DOMAINS} more"
    where = f"the {noun} ({listed})"
    if pools:
        where += f" of NodePool {', '.join(repr(p) for p in pools)}"
    return where


def block_reason(
    group: PodGroup, key: str, domains: frozenset[str], counts: TopologyCounts, inverse: Inverse, pools: Sequence[str]
) -> str:
    """Why no domain of `key` is valid for the next pod of `group`: the first rule on the key that
    alone leaves none, named with its parameters and the domains of the NodePools `pools` the pod may use."""
    label = ZONE_KEY if key == ZONE else key
    where = _where(key, domains, pools)
    domain = "zone" if key == ZONE else "value"
    for rule in group.topology:
        alone = replace(group, topology=(rule,), fallback=None)
        if rule.key != key or valid_domains(alone, key, domains, counts, Inverse(())):
            continue
        if rule.kind == ANTI_AFFINITY:
            return f"pod anti-affinity on {label}: {where} each already hold a pod it selects"
        if rule.kind == AFFINITY:
            return f"pod affinity on {label}: none of {where} holds a pod it selects"
        if rule.min_domains is not None and len(domains) < rule.min_domains:
            return (
                f"topology spread on {label} (maxSkew {rule.max_skew}, minDomains {rule.min_domains}): "
                f"only {where}, so a {domain} past maxSkew pods stays closed"
            )
        return f"topology spread on {label} (maxSkew {rule.max_skew}): no {domain} of {where} keeps the skew"
    owners = sorted(set(inverse.against(group.workload, key)))
    if owners:
        return f"pod anti-affinity on {label} of {', '.join(owners)}: {where} each hold its pods"
    return f"no {domain} of {where} satisfies the pod's topology spread and pod (anti-)affinity on {label} together"
