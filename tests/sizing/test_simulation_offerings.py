"""Offerings and prices in the simulation: the capacity type and type a NodeClaim launches, and types
a zone lacks never planned there.

Launch: aws/karpenter-provider-aws v1.14 `pkg/providers/instance/instance.go` (`getCapacityType`:
spot when allowed and offered), `pkg/providers/instance/filter/filter.go` (`SpotOfferingFilter`:
no spot dearer than the cheapest on-demand offering), kubernetes-sigs/karpenter v1.14
`pkg/cloudprovider/types.go` (`OrderByPrice`: types by their cheapest compatible offering).
Candidates: `pkg/controllers/provisioning/scheduling/nodeclaim.go` keeps only types with a
compatible available offering in the NodeClaim's zones and capacity types."""

from collections import Counter

from sizing.karpenter.simulation import ANY_ZONE, NodeOption, NodePoolModel, PodGroup, Scenario, TopologyRule, simulate
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
