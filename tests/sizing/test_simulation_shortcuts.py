"""The simulation's shortcuts give what the plain rules give: a maxSkew-1 spread over a group's own
pods placed a round (one pod per domain) at a time, as one pod at a time; running nodes a group's
hostname anti-affinity keeps it off left out of a pass at once, as when weighed one by one."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.karpenter.simulation import NodeOption, PodGroup, RunningNode, Scenario, TopologyRule, simulate
from sizing.karpenter.simulation import existing_nodes as existing_nodes_module
from sizing.karpenter.simulation import scheduler as scheduler_module
from sizing.karpenter.simulation.rounds import fewest_first
from sizing.karpenter.simulation.topology import OwnSpread, hostname_excluders
from sizing.kube.resources import Resources

ZONES = ("za", "zb", "zc")


def _one_at_a_time(claims, pods):
    held = {index: count for count, index, _ in claims}
    room = {index: room for _, index, room in claims}
    taken = {}
    for _ in range(pods):
        index = min((i for i in held if room[i] > 0), key=lambda i: (held[i], i))
        held[index] += 1
        room[index] -= 1
        taken[index] = taken.get(index, 0) + 1
    return taken


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fewest_first_matches_one_pod_at_a_time(data):
    size = data.draw(st.integers(1, 8))
    indices = data.draw(st.lists(st.integers(0, 50), min_size=size, max_size=size, unique=True))
    claims = [(data.draw(st.integers(0, 12)), index, data.draw(st.integers(0, 9))) for index in indices]
    pods = data.draw(st.integers(0, sum(room for _, _, room in claims)))
    assert fewest_first(claims, pods) == _one_at_a_time(claims, pods)


def test_fewest_first_refuses_more_pods_than_room():
    with pytest.raises(ValueError, match="do not fit"):
        fewest_first([(0, 1, 2), (3, 2, 1)], 4)
    with pytest.raises(ValueError, match=">= 0"):
        fewest_first([(0, 1, 2)], -1)


def test_a_million_pods_on_two_claims_take_few_steps():
    # Two claims far apart: the lead, not the pod count, sets the steps.
    assert fewest_first([(0, 0, 10**6), (999_000, 1, 10**6)], 10**6) == {0: 999_500, 1: 500}


OPTIONS = (
    NodeOption("small", Resources(2000, 4096, 110), Resources(1900, 3500, 29), price=1.0),
    NodeOption("medium", Resources(4000, 16384, 110), Resources(3800, 15000, 58), price=2.5),
    NodeOption("large", Resources(16000, 65536, 110), Resources(15500, 62000, 234), price=8.0),
)


@st.composite
def spread_scenarios(draw):
    groups = []
    for g in range(draw(st.integers(1, 5))):
        workload = draw(st.sampled_from(["web", "api", f"w{g}"]))
        rules = []
        if draw(st.integers(0, 3)) > 0:
            rules.append(
                TopologyRule(
                    "spread",
                    "zone",
                    frozenset({workload}),
                    max_skew=draw(st.sampled_from([1, 1, 2])),
                    min_domains=draw(st.sampled_from([None, None, 3, 4])),
                )
            )
        if draw(st.integers(0, 4)) == 0:
            rules.append(
                TopologyRule(draw(st.sampled_from(["spread", "anti-affinity"])), "hostname", frozenset({workload}))
            )
        groups.append(
            PodGroup(
                workload,
                Resources(
                    draw(st.sampled_from([100, 250, 500, 1000, 1500])), draw(st.sampled_from([128, 512, 2048])), 1
                ),
                draw(st.integers(0, 120)),
                zones=draw(st.one_of(st.none(), st.sets(st.sampled_from(ZONES), min_size=2).map(frozenset))),
                topology=tuple(rules),
            )
        )
    running = tuple(
        RunningNode(
            f"running-{r}",
            draw(st.sampled_from(OPTIONS)),
            Resources(draw(st.sampled_from([0, 500, 1500])), 256, 2),
            zone=draw(st.sampled_from(ZONES)),
            pods={draw(st.sampled_from(["web", "api"])): draw(st.integers(0, 3))},
        )
        for r in range(draw(st.integers(0, 3)))
    )
    limits = draw(st.sampled_from([{}, {"nodes": 7}, {"cpu": 30000}]))
    return Scenario(
        node_options=draw(st.sampled_from([OPTIONS, OPTIONS[:1], OPTIONS[1:]])),
        pod_groups=tuple(groups),
        zones=frozenset(draw(st.sampled_from([ZONES, ZONES[:2]]))),
        running_nodes=running,
        limits=limits,
    )


def _pod_by_pod(scenario, monkeypatch):
    with monkeypatch.context() as patched:
        patched.setattr(OwnSpread, "in_rounds", lambda self: False)
        return simulate(scenario)


@settings(max_examples=80, deadline=None)
@given(spread_scenarios())
def test_rounds_place_what_one_pod_at_a_time_places(scenario):
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = _pod_by_pod(scenario, monkeypatch)
    assert simulate(scenario) == expected


def test_rounds_are_taken_on_a_large_spread(monkeypatch):
    """The case the rounds are for: many pods over three zones take a few rounds, not a pass per pod."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}))
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(PodGroup("web", Resources(250, 512, 1), 3000, topology=(rule,)),),
        zones=frozenset(ZONES),
    )
    rounds = []
    original = scheduler_module.Simulator._place_rounds

    def counted(self, *args, **kwargs):
        placed = original(self, *args, **kwargs)
        rounds.append(placed)
        return placed

    monkeypatch.setattr(scheduler_module.Simulator, "_place_rounds", counted)
    result = simulate(scenario)
    assert sum(rounds) > 2900
    assert replace(result) == _pod_by_pod(scenario, monkeypatch)
    per_zone = {}
    for node in result.nodes:
        per_zone[node.zones[0]] = per_zone.get(node.zones[0], 0) + node.pods["web"]
    assert sorted(per_zone.values()) == [1000, 1000, 1000]


def test_a_claim_open_to_every_zone_is_used_before_any_round(monkeypatch):
    """A claim of an unconstrained pod, not yet committed to a zone and holding the fewest pods,
    takes the spread's next pod: rounds over the zones' own claims wait until it is committed."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}))
    small = frozenset({"small"})
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(
            PodGroup("batch", Resources(1500, 3000, 1), 1),
            PodGroup("web", Resources(1000, 512, 1), 3, allowed_types=small, topology=(rule,)),
            PodGroup("web", Resources(100, 128, 1), 30, topology=(rule,)),
        ),
        zones=frozenset(ZONES),
    )
    result = simulate(scenario)
    assert result == _pod_by_pod(scenario, monkeypatch)
    batch = next(node for node in result.nodes if node.pods.get("batch"))
    assert batch.pods["web"] > 0 and batch.zones == ("za",)


@settings(max_examples=50, deadline=None)
@given(spread_scenarios())
def test_nodes_left_out_for_anti_affinity_are_the_ones_it_closes(scenario):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(existing_nodes_module, "hostname_excluders", lambda group, inverse: frozenset())
        expected = simulate(scenario)
    assert simulate(scenario) == expected


def test_a_running_fleet_of_one_pod_per_node_is_not_weighed_node_by_node(monkeypatch):
    rule = TopologyRule("anti-affinity", "hostname", frozenset({"web"}))
    running = tuple(
        RunningNode(f"node-{i}", OPTIONS[0], Resources(500, 512, 2), zone=ZONES[i % 3], pods={"web": 1})
        for i in range(300)
    )
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(PodGroup("web", Resources(500, 512, 1), 30, topology=(rule,)),),
        zones=frozenset(ZONES),
        running_nodes=running,
    )
    weighed = []
    original = existing_nodes_module.ExistingNodes.fit

    def counted(self, index, run, valid):
        weighed.append(index)
        return original(self, index, run, valid)

    monkeypatch.setattr(existing_nodes_module.ExistingNodes, "fit", counted)
    result = simulate(scenario)
    assert len(result.new_nodes) == 30 and not result.pending
    assert hostname_excluders(scenario.pod_groups[0], existing_nodes_module.Inverse(scenario.pod_groups)) == {"web"}
    assert weighed == []


def test_running_nodes_with_room_take_pods_before_any_round(monkeypatch):
    """Rounds hand out pods on claims only: while a running node can take one, pods go one at a time."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}))
    running = tuple(RunningNode(f"node-{zone}", OPTIONS[0], Resources(1400, 1024, 2), zone=zone) for zone in ZONES)
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(
            PodGroup("web", Resources(1000, 512, 1), 3, topology=(rule,)),
            PodGroup("web", Resources(100, 128, 1), 30, topology=(rule,)),
        ),
        zones=frozenset(ZONES),
        running_nodes=running,
    )
    result = simulate(scenario)
    assert result == _pod_by_pod(scenario, monkeypatch)
    on_running = sum(node.pods.get("web", 0) for node in result.nodes if node.existing)
    assert on_running == 15


def test_a_spread_of_max_skew_two_is_placed_one_pod_at_a_time(monkeypatch):
    """With maxSkew 2 a zone may take two pods in a row, so its pods are not placed in rounds
    (a case random inputs found where rounds would differ)."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=2)
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(
            PodGroup("web", Resources(100, 128, 1), 9, topology=(rule,)),
            PodGroup("web", Resources(100, 512, 1), 2),
        ),
        zones=frozenset(ZONES),
    )
    assert simulate(scenario) == _pod_by_pod(scenario, monkeypatch)


def test_a_spread_whose_min_domains_are_not_reached_is_placed_one_pod_at_a_time(monkeypatch):
    """minDomains 4 over three zones counts the lowest as 0: one pod per zone, the rest pending."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}), min_domains=4)
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(PodGroup("web", Resources(100, 128, 1), 6, topology=(rule,)),),
        zones=frozenset(ZONES),
    )
    result = simulate(scenario)
    assert result == _pod_by_pod(scenario, monkeypatch)
    assert result.placed_count == 3 and result.pending_count == 3


def test_zones_not_level_are_levelled_one_pod_at_a_time(monkeypatch):
    """Zones a pod apart are levelled one pod at a time before any round (a case random inputs
    found where rounds taken before the zones are level place pods differently)."""
    api = TopologyRule("spread", "zone", frozenset({"api"}))
    web = TopologyRule("spread", "zone", frozenset({"web"}))
    scenario = Scenario(
        node_options=OPTIONS,
        pod_groups=(
            PodGroup("api", Resources(100, 128, 1), 3, topology=(api,)),
            PodGroup("api", Resources(1000, 128, 1), 2),
            PodGroup("web", Resources(1000, 512, 1), 9, topology=(web,)),
        ),
        zones=frozenset(ZONES),
        limits={"cpu": 30000},
    )
    assert simulate(scenario) == _pod_by_pod(scenario, monkeypatch)
