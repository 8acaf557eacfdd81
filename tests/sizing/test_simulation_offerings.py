"""Offerings and prices in the simulation: the capacity type and type a NodeClaim launches, and types
a zone lacks never planned there.

Launch: aws/karpenter-provider-aws v1.14 `pkg/providers/instance/instance.go` (`getCapacityType`:
spot when allowed and offered), `pkg/providers/instance/filter/filter.go` (`SpotOfferingFilter`:
no spot dearer than the cheapest on-demand offering), kubernetes-sigs/karpenter v1.14
`pkg/cloudprovider/types.go` (`OrderByPrice`: types by their cheapest compatible offering).
Candidates: `pkg/controllers/provisioning/scheduling/nodeclaim.go` keeps only types with a
compatible available offering in the NodeClaim's zones and capacity types."""

from collections import Counter

from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.simulation import (
    ANY_ZONE,
    NodeOption,
    NodePoolModel,
    PodGroup,
    RunningNode,
    Scenario,
    TopologyRule,
    simulate,
)
from sizing.kube.resources import Resources

ROOM = Resources(2000, 8192, 110)
BOTH = ("spot", "on-demand")
ZONES = frozenset({"z-a", "z-b", "z-c"})


def option(name, price, offerings=None, spot_price=None, room=ROOM):
    return NodeOption(name, room, room, price=price, spot_price=spot_price, offerings=offerings)


def pods(count, cpu=500, **kwargs):
    return PodGroup(kwargs.pop("workload", "web"), Resources(cpu, 256, 1), count, **kwargs)


def run(options, groups, capacity_types=BOTH, zones=ZONES, **kwargs):
    return simulate(
        Scenario(
            node_options=tuple(options),
            pod_groups=tuple(groups),
            capacity_types=capacity_types,
            zones=zones,
            **kwargs,
        )
    )


def every(zones, price):
    return {zone: price for zone in zones}


def test_spot_comes_before_on_demand_when_both_are_allowed():
    result = run([option("m", 0.10, spot_price=0.04)], [pods(2)])
    (node,) = result.nodes
    assert (node.capacity_type, node.price) == ("spot", 0.04)
    only_on_demand = run([option("m", 0.10, spot_price=0.04)], [pods(2)], capacity_types=("on-demand",))
    assert (only_on_demand.nodes[0].capacity_type, only_on_demand.nodes[0].price) == ("on-demand", 0.10)


def test_the_type_with_the_cheapest_spot_offering_is_launched_not_the_cheapest_on_demand():
    cheap_on_demand = option("a", 0.09, {"on-demand": {ANY_ZONE: 0.09}, "spot": {"z-a": 0.07, "z-b": 0.08}})
    cheap_spot = option("b", 0.10, {"on-demand": {ANY_ZONE: 0.10}, "spot": {"z-a": 0.05, "z-b": 0.09}})
    (node,) = run([cheap_on_demand, cheap_spot], [pods(2)], zones=frozenset({"z-a", "z-b"})).nodes
    assert (node.instance_type, node.capacity_type, node.price) == ("b", "spot", 0.05)
    assert node.zones == ("z-a", "z-b"), "the zones the launched type is offered in"


def test_spot_dearer_than_the_cheapest_on_demand_offering_launches_on_demand():
    """SpotOfferingFilter: every spot offering costs more than the cheapest on-demand one."""
    a = option("a", 0.10, {"on-demand": {ANY_ZONE: 0.10}, "spot": every(ZONES, 0.12)})
    b = option("b", 0.20, {"on-demand": {ANY_ZONE: 0.20}, "spot": every(ZONES, 0.15)})
    (node,) = run([a, b], [pods(2)]).nodes
    assert (node.instance_type, node.capacity_type, node.price) == ("a", "on-demand", 0.10)
    (spot_only,) = run([a, b], [pods(2)], capacity_types=("spot",)).nodes
    assert (spot_only.instance_type, spot_only.capacity_type, spot_only.price) == ("a", "spot", 0.12)


def test_a_type_without_any_spot_offering_launches_on_demand_when_no_type_has_one():
    a = option("a", 0.10, {"on-demand": {ANY_ZONE: 0.10}, "spot": {}})
    (node,) = run([a], [pods(2)]).nodes
    assert (node.capacity_type, node.price) == ("on-demand", 0.10)


def test_a_type_not_offered_in_the_pods_zone_is_never_planned_there():
    only_in_a = option("cheap", 0.05, {"on-demand": {"z-a": 0.05}})
    everywhere = option("dear", 0.10, {"on-demand": every(ZONES, 0.10)})
    in_b = run([only_in_a, everywhere], [pods(3, zones=frozenset({"z-b"}))], capacity_types=("on-demand",))
    assert [node.instance_type for node in in_b.nodes] == ["dear"]
    in_a = run([only_in_a, everywhere], [pods(3, zones=frozenset({"z-a"}))], capacity_types=("on-demand",))
    assert [node.instance_type for node in in_a.nodes] == ["cheap"]


def test_zone_spread_uses_a_type_only_in_the_zones_it_is_offered_in():
    only_in_a = option("cheap", 0.05, {"on-demand": {"z-a": 0.05}})
    everywhere = option("dear", 0.10, {"on-demand": every(ZONES, 0.10)})
    spread = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    result = run([only_in_a, everywhere], [pods(6, cpu=1500, topology=(spread,))], capacity_types=("on-demand",))
    assert not result.pending
    by_zone = Counter((node.zones[0], node.instance_type) for node in result.nodes)
    assert by_zone == {("z-a", "cheap"): 2, ("z-b", "dear"): 2, ("z-c", "dear"): 2}


def test_spot_offered_in_one_zone_only_serves_that_zone():
    spot_in_a = option("a", 0.10, {"spot": {"z-a": 0.03}, "on-demand": every(ZONES, 0.10)})
    spot_everywhere = option("b", 0.12, {"spot": every(ZONES, 0.06), "on-demand": every(ZONES, 0.12)})
    anti = TopologyRule("anti-affinity", "zone", frozenset({"web"}))
    result = run([spot_in_a, spot_everywhere], [pods(3, topology=(anti,))], capacity_types=("spot",))
    launched = sorted((node.zones[0], node.instance_type, node.price) for node in result.nodes)
    assert launched == [("z-a", "a", 0.03), ("z-b", "b", 0.06), ("z-c", "b", 0.06)]


def test_a_zone_no_type_is_offered_in_leaves_its_pods_pending_naming_the_zone():
    only_in_a = option("a", 0.05, {"on-demand": {"z-a": 0.05}})
    result = run([only_in_a], [pods(2, zones=frozenset({"z-c"}))], capacity_types=("on-demand",))
    assert result.pending_count == 2 and not result.nodes
    assert "no instance type of the NodePool that fits the pod is offered in zone z-c" in result.pending[0].reason


def test_several_node_pools_keep_their_own_offerings():
    only_in_a = option("a", 0.05, {"on-demand": {"z-a": 0.05}})
    everywhere = option("b", 0.10, {"on-demand": every(ZONES, 0.10)})
    pools = (
        NodePoolModel("first", (only_in_a,), zones=frozenset({"z-b"}), weight=10),
        NodePoolModel("second", (everywhere,), zones=frozenset({"z-b"})),
    )
    result = simulate(Scenario(node_options=(only_in_a,), pod_groups=(pods(2),), node_pools=pools))
    assert [(node.node_pool, node.instance_type) for node in result.nodes] == [("second", "b")], (
        "the heavier pool offers nothing in its zone, so the pod overflows"
    )


def test_offerings_everywhere_plan_the_same_fleet_as_no_offerings():
    plain = [option("s", 0.05, room=Resources(1000, 4096, 110)), option("l", 0.10)]
    offered = [
        option(o.name, o.price, {"on-demand": every(ZONES, o.price), "spot": every(ZONES, o.price)}, room=o.allocatable)
        for o in plain
    ]
    spread = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    groups = [pods(7, topology=(spread,)), pods(9, cpu=300, workload="api")]
    before, after = run(plain, groups), run(offered, groups)
    assert [(n.instance_type, n.capacity_type, n.price, n.pods) for n in before.nodes] == [
        (n.instance_type, n.capacity_type, n.price, n.pods) for n in after.nodes
    ]


def test_lowest_price_bounds_every_offering():
    assert option("m", 0.10, spot_price=0.04).lowest_price == 0.04
    assert option("m", 0.10).lowest_price == 0.10
    assert option("m", 0.10, {"on-demand": {"z-a": 0.10}, "spot": {"z-b": 0.02}}).lowest_price == 0.02


# -- offerings and topology on keys other than zone ---------------------------------------------------

CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
TEAM = "example.com/team"


def test_a_capacity_type_spread_commits_a_claim_to_spot_only_with_a_type_offered_as_spot():
    """A NodeClaim committed to spot keeps only the types with a spot offering, as Karpenter keeps only
    types with a compatible offering: the api's claim could hold the web pod on the big type, but that
    type has no spot offering, and the small one has no room left, so the web pod opens a spot claim."""
    big_on_demand = option("big", 0.05, {"on-demand": every(ZONES, 0.05)}, room=Resources(4000, 16384, 110))
    small_both = option("small", 0.10, {"on-demand": every(ZONES, 0.10), "spot": every(ZONES, 0.04)})
    # One web pod already on on-demand: the spread wants the next one on spot.
    running = RunningNode("running-1", big_on_demand, requested=Resources(3900, 1024, 10), zone="z-a", pods={"web": 1})
    spread = TopologyRule("spread", CAPACITY_TYPE_KEY, frozenset({"web"}), max_skew=1)
    # The api pod (larger, so placed first) opens a claim open to both capacity types.
    groups = [pods(1, cpu=1500, topology=(spread,)), pods(1, cpu=1600, workload="api")]
    result = run([big_on_demand, small_both], groups, running_nodes=(running,))
    assert not result.pending
    launched = [(node.capacity_type, node.instance_type, node.price, dict(node.pods)) for node in result.new_nodes]
    assert launched == [("spot", "small", 0.04, {"api": 1}), ("spot", "small", 0.04, {"web": 1})]


def test_a_claim_not_committed_after_all_keeps_its_custom_label_open():
    """The web pod finds the api's claim open to team beta and to zone z-b, but its one type is offered
    in z-a only: the claim is not committed, and a later pod asking for team alpha still joins it."""
    only_in_a = option("a", 0.05, {"on-demand": {"z-a": 0.05}})
    pool = NodePoolModel(
        "default",
        (only_in_a,),
        zones=frozenset({"z-a", "z-b"}),
        capacity_types=("on-demand",),
        labels=(LabelRequirement(TEAM, frozenset({"alpha", "beta"})),),
    )
    # A running web pod in z-a on a full team-alpha node: web's team spread wants beta, its zone
    # anti-affinity z-b.
    running = RunningNode(
        "running-1",
        only_in_a,
        requested=Resources(1900, 1024, 10),
        zone="z-a",
        node_pool="default",
        pods={"web": 1},
        labels={TEAM: "alpha"},
    )
    web_rules = (
        TopologyRule("spread", TEAM, frozenset({"web"}), max_skew=1),
        TopologyRule("anti-affinity", "zone", frozenset({"web"})),
    )
    groups = (
        pods(1, cpu=600, workload="api"),
        pods(1, cpu=500, workload="web", topology=web_rules),
        pods(1, cpu=400, workload="alpha-only", labels=(LabelRequirement(TEAM, frozenset({"alpha"})),)),
    )
    result = simulate(
        Scenario(node_options=(only_in_a,), pod_groups=groups, node_pools=(pool,), running_nodes=(running,))
    )
    assert [(group.workload, group.count) for group in result.pending] == [("web", 1)]
    assert "offered in zone z-b" in result.pending[0].reason
    (new,) = result.new_nodes
    assert dict(new.pods) == {"api": 1, "alpha-only": 1} and new.labels == {TEAM: "alpha"}


def test_no_capacity_type_left_names_the_key_and_its_values():
    anti = TopologyRule("anti-affinity", CAPACITY_TYPE_KEY, frozenset({"web"}))
    result = run([option("m", 0.10, spot_price=0.04)], [pods(3, topology=(anti,))])
    assert result.pending_count == 1
    assert result.pending[0].reason == (
        f"pod anti-affinity on {CAPACITY_TYPE_KEY}: the 2 values of {CAPACITY_TYPE_KEY} (on-demand, spot) "
        "of NodePool 'default' each already hold a pod it selects"
    )


def test_a_reason_lists_a_few_domains_and_counts_the_rest():
    key = "node.kubernetes.io/instance-type"
    types = [NodeOption(f"t{i}", ROOM, ROOM, price=0.10 + i / 100, labels={key: f"t{i}"}) for i in range(8)]
    anti = TopologyRule("anti-affinity", key, frozenset({"web"}))
    result = run(types, [pods(9, topology=(anti,))], capacity_types=("on-demand",))
    assert result.pending_count == 1
    assert result.pending[0].reason == (
        f"pod anti-affinity on {key}: the 8 values of {key} (t0, t1, t2, t3, t4, t5 and 2 more) "
        "of NodePool 'default' each already hold a pod it selects"
    )
