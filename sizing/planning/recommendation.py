"""Which instance-type restriction brings Karpenter's own choice closest to the optimum.

Candidates: the NodePool as it is (so the advice is never worse than leaving
it alone), each instance family, each size, each single type, and the set of
types the optimal fleet uses. Each candidate is judged by simulating
Karpenter on it, not by the solver: what matters is what Karpenter will do.

Ranking: candidates that place every pod and keep at most `max_pods_per_node`
workload pods per node (the blast-radius cap) come first; among them the
lowest cost per hour, then fewer nodes, then the simpler restriction. Among
candidates above the cap, fewer pods on the fullest node rank first. The cap
ranks, it does not bound: candidates are ranked with every pod pending at
once, and the chosen one is then judged again on its own rollout under its own
limits (`confirmed`), where its fullest node may carry more than the cap; it
stays chosen while it still ranks above the NodePool as it is, and the summary
then names both figures. A cost
lower bound (per resource, the cheapest price per unit of room times the
demand; with a cap, also ceil(pods / cap) of the cheapest node) skips
candidates that cannot beat the best one found. At most `MAX_CANDIDATES` are
simulated, lowest bounds first; the rest are counted as left by the budget.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sizing.karpenter.catalog import LABEL_FAMILY, LABEL_INSTANCE_TYPE, LABEL_SIZE
from sizing.karpenter.simulation import NodeOption, ProvisioningResult
from sizing.kube.resources import Resources
from sizing.planning.fleet import fleet_lower_bound
from sizing.planning.side_by_side import run_side_by_side

KIND_CURRENT = "current"
KIND_FAMILY = "family"
KIND_SIZE = "size"
KIND_TYPE = "type"
KIND_TYPES = "types"
_KIND_ORDER = (KIND_CURRENT, KIND_FAMILY, KIND_SIZE, KIND_TYPE, KIND_TYPES)
# Restrictions simulated besides the NodePool as it is; each is a whole simulation of the peak.
# Taken in order of their cost lower bound, the one chosen came within the first 7 on every
# scale benchmark workload (300 to 20,000 pods, with and without zone spread).
MAX_CANDIDATES = 8


@dataclass(frozen=True)
class Restriction:
    """Instance types allowed on top of the NodePool's requirements.

    requirement: the NodePool requirement that expresses it (None: no change).
    """

    kind: str
    label: str
    type_names: frozenset[str]
    requirement: Mapping[str, Any] | None


@dataclass(frozen=True)
class Outcome:
    """Karpenter's simulated fleet under one restriction (cost per hour, pods per node)."""

    restriction: Restriction
    node_count: int
    cost: float
    max_pods_per_node: int
    pending: int

    def acceptable(self, cap: int | None) -> bool:
        return self.pending == 0 and (cap is None or self.max_pods_per_node <= cap)


@dataclass(frozen=True)
class Recommendation:
    """The best restriction, the NodePool as it is, and how they compare with the optimum."""

    chosen: Outcome
    current: Outcome
    optimum_cost: float | None
    max_pods_per_node: int | None
    evaluated: int
    skipped: int
    price_unit: str
    left_by_budget: int = 0

    @property
    def changes_anything(self) -> bool:
        return self.chosen.restriction.kind != KIND_CURRENT

    def above_optimum_percent(self, outcome: Outcome) -> float | None:
        if self.optimum_cost is None or self.optimum_cost <= 0:
            return None
        return (outcome.cost / self.optimum_cost - 1) * 100

    def describe(self, outcome: Outcome) -> str:
        """E.g. "12 nodes, 2.304 USD/hour, 3 % above optimum, <= 29 pods per node"."""
        parts = [
            f"{outcome.node_count} node{'s' if outcome.node_count != 1 else ''}",
            f"{outcome.cost:.3f} {self.price_unit}",
        ]
        above = self.above_optimum_percent(outcome)
        if above is not None:
            # round() gives an int: sums of prices within a rounding error of the optimum read "0", not "-0".
            parts.append(f"{round(above)} % above optimum")
        parts.append(f"≤ {outcome.max_pods_per_node} pods per node")
        if outcome.pending:
            parts.append(f"{outcome.pending} pods pending")
        return ", ".join(parts)

    def summary(self) -> str:
        """One sentence: what to do and what it changes."""
        if not self.changes_anything:
            text = f"keep the NodePool as it is: {self.describe(self.current)}"
            if self.max_pods_per_node is not None and not self.current.acceptable(self.max_pods_per_node):
                text += f" (no candidate keeps every node at ≤ {self.max_pods_per_node} pods)"
            return text
        text = (
            f"restrict to {self.chosen.restriction.label}: {self.describe(self.chosen)} "
            f"(now: {self.describe(self.current)})"
        )
        if self.max_pods_per_node is not None and self.chosen.max_pods_per_node > self.max_pods_per_node:
            text += (
                f"; its own rollout puts {self.chosen.max_pods_per_node} pods on its fullest node, above "
                f"maxPodsPerNode {self.max_pods_per_node}, against {self.current.max_pods_per_node} for the "
                "NodePool as it is (the cap ranks candidates, it does not bound them)"
            )
        return text


def _outcome(restriction: Restriction, result: ProvisioningResult) -> Outcome:
    new_nodes = result.new_nodes
    return Outcome(
        restriction=restriction,
        node_count=len(new_nodes),
        cost=sum(node.price for node in new_nodes),
        max_pods_per_node=max((node.pod_count for node in result.nodes), default=0),
        pending=result.pending_count,
    )


def candidate_restrictions(
    labels: Mapping[str, Mapping[str, str]], optimal_types: Sequence[str] = ()
) -> list[Restriction]:
    """The NodePool as it is, then families, sizes, single types and the optimum's types.

    labels: instance-type name -> its node labels, for the types the NodePool allows.
    A family or size with a single type is left to that type's own candidate,
    and a set of types is listed once.
    """
    names = frozenset(labels)
    restrictions = [Restriction(KIND_CURRENT, "the NodePool as it is", names, None)]
    for kind, key in ((KIND_FAMILY, LABEL_FAMILY), (KIND_SIZE, LABEL_SIZE)):
        values: dict[str, set[str]] = {}
        for name, node_labels in labels.items():
            if key in node_labels:
                values.setdefault(node_labels[key], set()).add(name)
        if len(values) < 2:
            continue
        for value in sorted(values):
            if len(values[value]) < 2 or frozenset(values[value]) in {r.type_names for r in restrictions}:
                continue  # a single type reads better as itself; the same set needs saying once
            restrictions.append(
                Restriction(
                    kind, f"{kind} {value}", frozenset(values[value]), {"key": key, "operator": "In", "values": [value]}
                )
            )
    if len(names) > 1:
        for name in sorted(names):
            restrictions.append(
                Restriction(
                    KIND_TYPE, name, frozenset({name}), {"key": LABEL_INSTANCE_TYPE, "operator": "In", "values": [name]}
                )
            )
    chosen = frozenset(optimal_types) & names
    if 1 < len(chosen) < len(names) and chosen not in {r.type_names for r in restrictions}:
        restrictions.append(
            Restriction(
                KIND_TYPES,
                ", ".join(sorted(chosen)),
                chosen,
                {"key": LABEL_INSTANCE_TYPE, "operator": "In", "values": sorted(chosen)},
            )
        )
    return restrictions


def cost_lower_bound(options: Sequence[NodeOption], demand: Resources, cap: int | None) -> float:
    """No fleet of these types costs less than this per hour for `demand` (cpu m, memory MiB, pods)."""
    return fleet_lower_bound(options, demand, cap)[0]


def _rank(outcome: Outcome, cap: int | None) -> tuple[bool, bool, int, int, float, int, int, str]:
    over_cap = cap is not None and outcome.max_pods_per_node > cap
    return (
        outcome.pending > 0,
        over_cap,
        outcome.pending,
        outcome.max_pods_per_node if over_cap else 0,
        round(outcome.cost, 9),
        outcome.node_count,
        _KIND_ORDER.index(outcome.restriction.kind),
        outcome.restriction.label,
    )


def _ranked(
    options: Sequence[NodeOption],
    labels: Mapping[str, Mapping[str, str]],
    demand: Resources,
    max_pods_per_node: int | None,
    optimal_types: Sequence[str],
) -> tuple[list[Restriction], list[Restriction], list[float]]:
    """Every restriction (the NodePool as it is first), the others by their cost lower bound
    (ties in the order they were made), and those bounds."""
    by_name = {option.name: option for option in options}
    restrictions = candidate_restrictions({name: labels[name] for name in by_name}, optimal_types)
    bounded = [
        (cost_lower_bound([by_name[n] for n in r.type_names], demand, max_pods_per_node), index, r)
        for index, r in enumerate(restrictions)
    ]
    ranked = sorted(bounded[1:], key=lambda item: (item[0], item[1]))
    return restrictions, [r for _, _, r in ranked], [bound for bound, _, _ in ranked]


def _same(outcome: Outcome) -> Outcome:
    return outcome


def likely_outcomes(
    options: Sequence[NodeOption],
    labels: Mapping[str, Mapping[str, str]],
    simulate_on: Callable[[Sequence[NodeOption]], ProvisioningResult],
    demand: Resources,
    max_pods_per_node: int | None = None,
    max_candidates: int | None = MAX_CANDIDATES,
) -> dict[frozenset[str], Outcome]:
    """The NodePool as it is and the candidates `recommend` simulates unless one proves cheap
    early, before the optimum's types are known (so while the solver runs): by their types.
    Arguments as for `recommend`. What `recommend` would not have simulated is never used."""
    return {
        restriction.type_names: outcome_on(restriction, options, simulate_on)
        for restriction in likely_restrictions(options, labels, demand, max_pods_per_node, max_candidates)
    }


def likely_restrictions(
    options: Sequence[NodeOption],
    labels: Mapping[str, Mapping[str, str]],
    demand: Resources,
    max_pods_per_node: int | None = None,
    max_candidates: int | None = MAX_CANDIDATES,
) -> list[Restriction]:
    """The restrictions whose outcomes `likely_outcomes` gives, longest simulation first (none
    for a single instance type: nothing to rank)."""
    restrictions, ordered, _ = _ranked(options, labels, demand, max_pods_per_node, ())
    if len(restrictions) == 1:
        return []
    return [restrictions[0], *(ordered if max_candidates is None else ordered[:max_candidates])]


def outcome_on(
    restriction: Restriction,
    options: Sequence[NodeOption],
    simulate_on: Callable[[Sequence[NodeOption]], ProvisioningResult],
) -> Outcome:
    """The restriction's outcome: `simulate_on` its types among `options`."""
    return _outcome(restriction, simulate_on([option for option in options if option.name in restriction.type_names]))


def recommend(
    options: Sequence[NodeOption],
    labels: Mapping[str, Mapping[str, str]],
    simulate_on: Callable[[Sequence[NodeOption]], ProvisioningResult],
    demand: Resources,
    max_pods_per_node: int | None = None,
    optimum_cost: float | None = None,
    optimal_types: Sequence[str] = (),
    price_unit: str = "USD/hour",
    max_candidates: int | None = MAX_CANDIDATES,
    current: ProvisioningResult | None = None,
    workers: int = 1,
    known_outcomes: Mapping[frozenset[str], Outcome] | None = None,
) -> Recommendation:
    """The best restriction of `options` for Karpenter's own packing.

    simulate_on(types) simulates the peak with only those types allowed, the footing every
    candidate is ranked on, the NodePool as it is included; current: the fleet of the NodePool
    as it is that the recommendation shows as "now" (else its simulation on that footing);
    demand: requests of the pods that need new nodes (cpu m, memory MiB, pods);
    max_candidates: how many restrictions besides the NodePool as it is may be simulated, the
    lowest cost bounds first (None: all): a budget of work, so the advice is the same on any
    machine; workers: processes that may simulate candidates side by side (the advice is the
    same with any number); known_outcomes: outcomes already simulated, by their restriction's
    types (`likely_outcomes`), which are not simulated again.
    """
    restrictions, ordered, bounds = _ranked(options, labels, demand, max_pods_per_node, optimal_types)
    earlier = dict(known_outcomes or {})

    def simulated(restriction: Restriction) -> Callable[[], Outcome]:
        if restriction.type_names in earlier:
            return functools.partial(_same, earlier[restriction.type_names])
        return functools.partial(outcome_on, restriction, options, simulate_on)

    def worth_simulating(position: int, best: Outcome, evaluated: int) -> bool:
        bound = bounds[position]
        if best.acceptable(max_pods_per_node) and bound > best.cost + 1e-9:
            return False
        return max_candidates is None or evaluated <= max_candidates

    known: dict[int, Outcome] = {}

    def outcome_of(position: int, best: Outcome, evaluated: int) -> Outcome:
        """The candidate at `position`, simulated side by side with the next ones the loop below
        will simulate if none of them beats `best` (so with one worker or several, the same)."""
        if position not in known:
            batch = [position]
            ahead = position + 1
            while len(batch) < workers and ahead < len(ordered):
                if worth_simulating(ahead, best, evaluated + len(batch)):
                    batch.append(ahead)
                ahead += 1
            outcomes = run_side_by_side([simulated(ordered[p]) for p in batch], workers)
            known.update(zip(batch, outcomes, strict=True))
        return known[position]

    now = None if current is None else _outcome(restrictions[0], current)
    if now is not None and len(restrictions) == 1:
        # With nothing to compare it with (one instance type), the NodePool as it is needs no ranking.
        as_it_is = now
    else:
        # The NodePool as it is (every type: the longest simulation) side by side with every
        # candidate the budget allows, as if none were skipped: with one worker, it alone.
        ahead = [] if workers <= 1 else (ordered if max_candidates is None else ordered[:max_candidates])
        ahead = [r for r in ahead if r.type_names not in earlier]
        found = run_side_by_side([simulated(r) for r in [restrictions[0], *ahead]], workers)
        as_it_is = found[0]
        known.update((ordered.index(r), outcome) for r, outcome in zip(ahead, found[1:], strict=True))
    now = now or as_it_is
    best = as_it_is
    evaluated, skipped, left = 1, 0, 0
    for position in range(len(ordered)):
        if not worth_simulating(position, best, evaluated):
            if best.acceptable(max_pods_per_node) and bounds[position] > best.cost + 1e-9:
                skipped += 1
            else:
                left += 1
            continue
        outcome = outcome_of(position, best, evaluated)
        evaluated += 1
        if _rank(outcome, max_pods_per_node) < _rank(best, max_pods_per_node):
            best = outcome
    if best is as_it_is:
        best = now
    return Recommendation(
        chosen=best,
        current=now,
        optimum_cost=optimum_cost,
        max_pods_per_node=max_pods_per_node,
        evaluated=evaluated,
        skipped=skipped,
        price_unit=price_unit,
        left_by_budget=left,
    )


def confirmed(recommendation: Recommendation, chosen: ProvisioningResult) -> Recommendation:
    """The recommendation with its chosen restriction judged on `chosen`, its fleet on the same
    footing as the NodePool as it is (under its own limits); the NodePool as it is again when
    the restriction no longer ranks better there."""
    if not recommendation.changes_anything:
        return recommendation
    outcome = _outcome(recommendation.chosen.restriction, chosen)
    cap = recommendation.max_pods_per_node
    if _rank(outcome, cap) >= _rank(recommendation.current, cap):
        return replace(recommendation, chosen=recommendation.current)
    return replace(recommendation, chosen=outcome)
