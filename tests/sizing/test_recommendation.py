"""The instance-type recommendation: never worse than the NodePool as it is, within the pod cap."""

from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate
from sizing.kube.resources import Resources
from sizing.planning.recommendation import (
    KIND_CURRENT,
    KIND_TYPE,
    Outcome,
    Recommendation,
    Restriction,
    candidate_restrictions,
    cost_lower_bound,
    likely_outcomes,
    recommend,
)

FAMILY = "karpenter.k8s.aws/instance-family"
SIZE = "karpenter.k8s.aws/instance-size"
TYPE = "node.kubernetes.io/instance-type"


def option(name, cpu, memory=16384, pods=110, price=1.0):
    room = Resources(cpu, memory, pods)
    return NodeOption(name, room, room, price)


def labels_of(options):
    return {o.name: {TYPE: o.name, FAMILY: o.name.split(".")[0], SIZE: o.name.split(".")[1]} for o in options}


def advise(options, groups, cap=None, optimum=None):
    def simulate_on(types):
        return simulate(Scenario(tuple(types), tuple(groups)))

    demand = sum((g.requests.scaled(g.count) for g in groups), Resources())
    return recommend(options, labels_of(options), simulate_on, demand, cap, optimum, price_unit="USD/hour")


def test_restricting_to_the_small_type_beats_karpenters_narrowing():
    # As in the simulation test: three 800m pods end on one large ($4) because each pod
    # narrows the claim. With only x.small allowed, each pod gets its own small node ($1):
    # $3, the cheapest candidate. x.medium alone: two mediums ($4), no better.
    options = [option("x.small", 1000, price=1), option("x.medium", 2000, price=2), option("x.large", 4000, price=4)]
    advice = advise(options, [PodGroup("web", Resources(800, 100, 1), 3)], optimum=3.0)
    assert advice.current.cost == 4 and advice.current.node_count == 1
    assert advice.chosen.restriction.label == "x.small"
    assert advice.chosen.restriction.requirement == {"key": TYPE, "operator": "In", "values": ["x.small"]}
    assert (advice.chosen.node_count, advice.chosen.cost, advice.chosen.max_pods_per_node) == (3, 3, 1)
    assert advice.summary() == (
        "restrict to x.small: 3 nodes, 3.000 USD/hour, 0 % above optimum, ≤ 1 pods per node "
        "(now: 1 node, 4.000 USD/hour, 33 % above optimum, ≤ 3 pods per node)"
    )


def test_the_blast_radius_cap_rules_out_big_nodes_even_when_they_are_cheaper():
    # 40 pods of 100m. Unrestricted, one y.huge ($3.2, 16 cores) takes all 40 pods. With at
    # most 10 pods per node, only y.large (1000m, $0.25) keeps nodes small enough when it is the
    # only type: four nodes of 10 pods each, $1.00.
    options = [option("y.large", 1000, price=0.25), option("y.huge", 16000, price=3.2)]
    groups = [PodGroup("api", Resources(100, 100, 1), 40)]
    advice = advise(options, groups, cap=10)
    assert advice.current.max_pods_per_node == 40
    assert advice.chosen.restriction.label == "y.large"
    assert advice.chosen.max_pods_per_node <= 10
    assert (advice.chosen.node_count, advice.chosen.cost) == (4, 1.0)


def test_keeps_the_nodepool_when_nothing_is_cheaper():
    options = [option("z.large", 2000, price=1.0)]
    advice = advise(options, [PodGroup("web", Resources(500, 100, 1), 8)])
    assert advice.chosen.restriction.kind == KIND_CURRENT
    assert not advice.changes_anything
    assert advice.summary().startswith("keep the NodePool as it is: 2 nodes")


def test_says_so_when_no_candidate_meets_the_cap():
    options = [option("z.large", 2000, price=1.0)]
    advice = advise(options, [PodGroup("web", Resources(100, 100, 1), 30)], cap=5)
    assert advice.chosen.restriction.kind == KIND_CURRENT
    assert "no candidate keeps every node at ≤ 5 pods" in advice.summary()


def test_the_cost_lower_bound_is_below_every_simulated_fleet():
    options = [option("a.large", 2000, 4096, price=1.0), option("a.xlarge", 4000, 8192, price=2.2)]
    demand = Resources(7000, 5000, 20)
    # cpu: 7000m at $1 per 2000m = $3.5; memory 5000Mi at $1 per 4096Mi = $1.22; pods: 20 at $1/110.
    assert cost_lower_bound(options, demand, None) == 3.5
    # With at most 4 pods per node: at least 5 nodes of the cheapest type, $5.
    assert cost_lower_bound(options, demand, 4) == 5.0


@st.composite
def cases(draw):
    options = []
    for _ in range(draw(st.integers(1, 5))):
        family = draw(st.sampled_from(["f1", "f2"]))
        size = draw(st.sampled_from(["large", "xlarge", "2xlarge"]))
        cpu = {"large": 2000, "xlarge": 4000, "2xlarge": 8000}[size]
        options.append(
            option(
                f"{family}.{size}", cpu, cpu * 4, draw(st.integers(4, 60)), draw(st.sampled_from([0.1, 0.2, 0.35, 0.4]))
            )
        )
    unique = {o.name: o for o in options}
    options = list(unique.values())
    groups = [
        PodGroup(
            f"w{g}",
            Resources(draw(st.sampled_from([100, 250, 500, 1000])), draw(st.sampled_from([128, 1024, 3000])), 1),
            draw(st.integers(1, 40)),
        )
        for g in range(draw(st.integers(1, 3)))
    ]
    return options, groups, draw(st.sampled_from([None, 8, 20, 60]))


@settings(max_examples=40, deadline=None)
@given(cases())
def test_never_worse_than_the_nodepool_as_it_is(case):
    options, groups, cap = case
    advice = advise(options, groups, cap)
    current, chosen = advice.current, advice.chosen
    if current.acceptable(cap):
        assert chosen.acceptable(cap)
        assert chosen.cost <= current.cost + 1e-9
    if advice.changes_anything:
        assert chosen.pending == 0
        if cap is not None and any(o.pending == 0 and o.max_pods_per_node <= cap for o in (current, chosen)):
            assert chosen.max_pods_per_node <= cap


def test_candidates_are_families_and_sizes_with_several_types_single_types_and_the_optimums_set():
    options = [option(name, 2000) for name in ("m5.large", "m5.xlarge", "c5.large", "r5.2xlarge")]
    restrictions = candidate_restrictions(labels_of(options), optimal_types=("c5.large", "m5.xlarge"))
    labels = [r.label for r in restrictions]
    # c5 and r5 have one type each, and size xlarge/2xlarge too: those read as the type itself.
    assert labels == [
        "the NodePool as it is",
        "family m5",
        "size large",
        "c5.large",
        "m5.large",
        "m5.xlarge",
        "r5.2xlarge",
        "c5.large, m5.xlarge",
    ]
    family = restrictions[1]
    assert family.requirement == {"key": FAMILY, "operator": "In", "values": ["m5"]}
    assert family.type_names == {"m5.large", "m5.xlarge"}


def test_the_recommendation_simulates_at_most_its_budget_of_candidates_lowest_bounds_first():
    options = [
        option(f"{family}.{size}", cpu, price=cpu / 1000 * factor)
        for family, factor in (("a", 1.0), ("b", 1.1), ("c", 1.2))
        for size, cpu in (("small", 1000), ("medium", 2000), ("large", 4000))
    ]
    groups = [PodGroup("web", Resources(800, 100, 1), 5)]
    demand = Resources(800 * 5, 100 * 5, 5)
    calls = []

    def simulate_on(types):
        calls.append(len(types))
        return simulate(Scenario(tuple(types), tuple(groups)))

    labels = labels_of(options)
    everything = recommend(options, labels, simulate_on, demand, price_unit="USD/hour", max_candidates=None)
    calls.clear()
    budget = recommend(options, labels, simulate_on, demand, price_unit="USD/hour", max_candidates=2)
    assert len(calls) == 3 and budget.evaluated == 3  # the NodePool as it is, then two restrictions
    assert budget.evaluated + budget.skipped + budget.left_by_budget == len(candidate_restrictions(labels))
    assert budget.left_by_budget > 0 and everything.left_by_budget == 0


def test_outcomes_simulated_while_the_solver_runs_give_the_same_advice_and_are_not_simulated_again():
    options = [
        option(f"{family}.{size}", cpu, price=cpu / 1000 * factor)
        for family, factor in (("a", 1.0), ("b", 1.1), ("c", 1.2))
        for size, cpu in (("small", 1000), ("medium", 2000), ("large", 4000))
    ]
    groups = [PodGroup("web", Resources(800, 100, 1), 5), PodGroup("api", Resources(1500, 900, 1), 3)]
    demand = sum((g.requests.scaled(g.count) for g in groups), Resources())
    calls = []

    def simulate_on(types):
        calls.append(frozenset(t.name for t in types))
        return simulate(Scenario(tuple(types), tuple(groups)))

    labels = labels_of(options)
    optimal_types = ("a.small", "b.medium")
    alone = recommend(options, labels, simulate_on, demand, optimal_types=optimal_types, max_candidates=3)
    simulated_alone = list(calls)
    calls.clear()
    early = likely_outcomes(options, labels, simulate_on, demand, max_candidates=3)
    assert len(early) == 4 and set(early) == set(calls)  # the NodePool as it is and three candidates
    calls.clear()
    seeded = recommend(
        options, labels, simulate_on, demand, optimal_types=optimal_types, max_candidates=3, known_outcomes=early
    )
    assert seeded == alone
    # Only what the early simulations could not know is simulated: the optimum's own types, if ranked.
    assert set(calls) == set(simulated_alone) - set(early) == {frozenset(optimal_types)}


def test_a_choice_above_the_cap_on_its_own_rollout_names_both_figures_and_the_rule():
    # Ranked with every pod pending at once, c6a.2xlarge kept within 30 pods per node; on its own
    # rollout under its own limits its fullest node carries 32, still fewer than the NodePool's 83.
    current = Outcome(Restriction(KIND_CURRENT, "the NodePool as it is", frozenset(), None), 7, 3.989, 83, 0)
    narrowed = Restriction(KIND_TYPE, "c6a.2xlarge", frozenset({"c6a.2xlarge"}), {"key": TYPE})
    advice = Recommendation(Outcome(narrowed, 13, 3.978, 30, 0), current, 3.87, 30, 8, 0, "USD/hour")
    assert "maxPodsPerNode" not in advice.summary()
    on_rollout = replace(advice, chosen=Outcome(narrowed, 13, 3.978, 32, 0))
    assert on_rollout.summary().endswith(
        "; its own rollout puts 32 pods on its fullest node, above maxPodsPerNode 30, against 83 for the "
        "NodePool as it is (the cap ranks candidates, it does not bound them)"
    )
    # The docs state the same rule.
    docs = " ".join((Path(__file__).parents[2] / "docs" / "sizing.md").read_text().split())
    assert "the cap ranks, it does not bound" in docs
    assert "within `capacity.maxPodsPerNode` pods per node" not in docs
