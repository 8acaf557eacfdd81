"""The provisioning simulation on small cases worked out by hand.

Instance types here are made up so that the arithmetic stays readable:
cpu in millicores, memory in MiB, prices in USD/hour.
"""

from sizing.karpenter.simulation import NodeOption, PodGroup, RunningNode, Scenario, simulate
from sizing.kube.resources import Resources


def option(name, cpu, memory=8192, pods=110, price=1.0, capacity_cpu=None, overhead=Resources(), spot=None):
    allocatable = Resources(cpu, memory, pods)
    capacity = Resources(capacity_cpu if capacity_cpu is not None else cpu, memory, pods)
    return NodeOption(name, capacity, allocatable, price, daemon_overhead=overhead, spot_price=spot)


def pods(workload, cpu, memory=100, count=1, **constraints):
    return PodGroup(workload, Resources(cpu, memory, 1), count, **constraints)


def fleet(result):
    """(instance type, {workload: pods}) per node, in node order."""
    return [(node.instance_type, dict(node.pods)) for node in result.nodes]


def test_pods_go_by_cpu_then_memory_descending():
    # One type with 2000m / 2048Mi. Listed order: p1 (500m, 1024Mi), p2 (1500m, 512Mi), p3 (500m, 1536Mi).
    # Karpenter's order: p2 (most cpu), then p3 before p1 (same cpu, more memory).
    #   p2 opens claim 1 (1500m/512Mi); p3 joins it (2000m/2048Mi, exactly full);
    #   p1 no longer fits claim 1 and opens claim 2.
    # In listed order p1 and p2 would have shared the first node instead.
    scenario = Scenario(
        node_options=(option("t", 2000, memory=2048),),
        pod_groups=(pods("p1", 500, 1024), pods("p2", 1500, 512), pods("p3", 500, 1536)),
    )
    assert fleet(simulate(scenario)) == [("t", {"p2": 1, "p3": 1}), ("t", {"p1": 1})]


def test_in_flight_claims_are_tried_fewest_pods_first():
    # One type with 4000m. a1 and a2 (2500m each) cannot share a node: claims 1 and 2.
    # s (500m): both claims hold one pod, the tie goes to the older claim 1 (3000m, 2 pods).
    # t (400m): claim 2 now has fewer pods, so t goes there (2900m) although claim 1
    # (first fit) still had room for it.
    scenario = Scenario(
        node_options=(option("t4", 4000),),
        pod_groups=(pods("a1", 2500), pods("a2", 2500), pods("s", 500), pods("t", 400)),
    )
    assert fleet(simulate(scenario)) == [("t4", {"a1": 1, "s": 1}), ("t4", {"a2": 1, "t": 1})]


def test_each_pod_narrows_the_claims_instance_types_and_the_cheapest_left_launches():
    # small 1000m ($1), medium 2000m ($2), large 4000m ($4); three pods of 800m.
    # Pod 1 opens a claim that could be any of the three; pod 2 (fewest pods: the only
    # claim) brings it to 1600m, leaving medium and large; pod 3 to 2400m, leaving large.
    # Karpenter launches one large ($4) where medium + small ($3) would have been cheaper.
    scenario = Scenario(
        node_options=(option("small", 1000, price=1), option("medium", 2000, price=2), option("large", 4000, price=4)),
        pod_groups=(pods("web", 800, count=3),),
    )
    result = simulate(scenario)
    assert fleet(result) == [("large", {"web": 3})]
    assert result.nodes[0].options == 1
    assert result.cost == 4


def test_a_pods_own_instance_constraint_narrows_the_claim():
    # any (800m, 200Mi) opens a claim that could be small, medium or large; only-medium
    # (800m, 100Mi: after it by memory) may run on medium alone, so the claim keeps medium.
    scenario = Scenario(
        node_options=(option("small", 1000, price=1), option("medium", 2000, price=2), option("large", 4000, price=4)),
        pod_groups=(pods("any", 800, 200), pods("only-medium", 800, 100, allowed_types=frozenset({"medium"}))),
    )
    assert fleet(simulate(scenario)) == [("medium", {"any": 1, "only-medium": 1})]


def test_launch_takes_the_cheapest_type_left_and_breaks_price_ties_by_name():
    # One 500m pod fits everything; b-type and a-type cost the same and less than c-type.
    scenario = Scenario(
        node_options=(
            option("c-type", 1000, price=0.5),
            option("b-type", 2000, price=0.2),
            option("a-type", 2000, price=0.2),
        ),
        pod_groups=(pods("web", 500),),
    )
    assert fleet(simulate(scenario)) == [("a-type", {"web": 1})]


def test_daemonset_overhead_and_pod_slots_count_against_allocatable():
    # 2000m and 4 pod slots, DaemonSets take 200m and 2 slots: 1800m and 2 slots are left.
    # Three 500m pods: two fit by slots on the first node, the third opens a second one.
    ds = Resources(200, 0, 2)
    scenario = Scenario(
        node_options=(option("t", 2000, pods=4, overhead=ds),),
        pod_groups=(pods("web", 500, count=3),),
    )
    result = simulate(scenario)
    assert fleet(result) == [("t", {"web": 2}), ("t", {"web": 1})]
    assert result.nodes[0].used == Resources(1200, 200, 4)


def test_subtract_max_reserves_the_largest_candidate_and_leaves_pods_pending():
    # small: capacity 2000m, large: 8000m; one pod slot each; limit cpu 10000m.
    # Pod 1 (1500m) opens a claim that could be small or large: remaining 10000 - 8000 = 2000.
    # Pod 2 cannot join (no slot left) and opens a claim restricted to types of at most
    # 2000m capacity, i.e. small: remaining 0. Pod 3 finds no type within 0m: pending.
    # Both claims then launch small, using 4000m of the 10000m limit.
    scenario = Scenario(
        node_options=(
            option("small", 1900, pods=1, price=1, capacity_cpu=2000),
            option("large", 7900, pods=1, price=4, capacity_cpu=8000),
        ),
        pod_groups=(pods("web", 1500, count=3),),
        limits={"cpu": 10000},
    )
    result = simulate(scenario)
    assert fleet(result) == [("small", {"web": 1}), ("small", {"web": 1})]
    assert result.nodes[0].options == 2 and result.nodes[1].options == 1
    assert result.remaining == {"cpu": 0}
    assert [(p.workload, p.count) for p in result.pending] == [("web", 1)]
    assert "exceed the NodePool limits" in result.pending[0].reason
    assert result.limit_usage()["cpu"] == 4000


def test_node_limit_is_counted_per_claim():
    scenario = Scenario(
        node_options=(option("t", 1000, pods=1),),
        pod_groups=(pods("web", 500, count=3),),
        limits={"nodes": 2},
    )
    result = simulate(scenario)
    assert len(result.nodes) == 2
    assert result.pending_count == 1
    assert "node limits have been exhausted" in result.pending[0].reason


def test_a_claim_launched_by_an_earlier_batch_lets_the_next_launch_overshoot():
    # Limit cpu 3000m. A small node (capacity 2000m) launched a moment ago has not reported
    # its capacity yet, so the scheduler sees 3000m left and opens a claim for one more
    # small node. Once both report, the NodePool uses 4000m: 1000m over its limit.
    small = option("small", 1900, pods=1, capacity_cpu=2000)
    scenario = Scenario(
        node_options=(small,),
        pod_groups=(pods("web", 1500),),
        limits={"cpu": 3000},
        running_nodes=(RunningNode("just-launched", small, Resources(1500, 100, 1), capacity_reported=False),),
    )
    result = simulate(scenario)
    assert fleet(result) == [("small", {}), ("small", {"web": 1})]
    assert result.pending == ()
    assert result.limit_usage()["cpu"] == 4000 > scenario.limits["cpu"]


def test_running_nodes_are_filled_first_fit_before_any_claim():
    # Running nodes with 1000m (node-a) and 3000m (node-b) free; four 800m pods.
    # First fit in node order: node-a takes one (1000m free), node-b the other three
    # (2400m of 3000m); no NodeClaim is needed.
    t = option("t", 4000)
    scenario = Scenario(
        node_options=(t,),
        pod_groups=(pods("web", 800, count=4),),
        running_nodes=(
            RunningNode("node-a", t, Resources(3000, 0, 1)),
            RunningNode("node-b", t, Resources(1000, 0, 1)),
        ),
    )
    result = simulate(scenario)
    assert fleet(result) == [("t", {"web": 1}), ("t", {"web": 3})]
    assert result.new_nodes == ()


def test_zone_constraints_keep_pods_of_different_zones_apart():
    # Both pods would share one 4000m node, but they require different zones.
    scenario = Scenario(
        node_options=(option("t", 4000),),
        pod_groups=(
            pods("in-a", 1000, zones=frozenset({"zone-a"})),
            pods("in-b", 1000, 50, zones=frozenset({"zone-b"})),
        ),
        zones=frozenset({"zone-a", "zone-b"}),
    )
    result = simulate(scenario)
    assert fleet(result) == [("t", {"in-a": 1}), ("t", {"in-b": 1})]
    assert [node.zones for node in result.nodes] == [("zone-a",), ("zone-b",)]


def test_a_pod_requiring_a_zone_outside_the_nodepool_stays_pending():
    scenario = Scenario(
        node_options=(option("t", 4000),),
        pod_groups=(pods("elsewhere", 1000, zones=frozenset({"zone-c"})),),
        zones=frozenset({"zone-a"}),
    )
    result = simulate(scenario)
    assert result.nodes == ()
    assert result.pending_count == 1 and "fits the pod" in result.pending[0].reason


def test_spot_is_preferred_when_allowed_and_priced_at_its_spot_price():
    # With spot allowed the claim launches spot; the cheapest spot type wins even though
    # its on-demand price is higher.
    scenario = Scenario(
        node_options=(option("a", 2000, price=1.0, spot=0.5), option("b", 2000, price=0.8, spot=0.6)),
        pod_groups=(pods("web", 500),),
        capacity_types=("on-demand", "spot"),
    )
    node = simulate(scenario).nodes[0]
    assert (node.instance_type, node.capacity_type, node.price) == ("a", "spot", 0.5)


def test_a_pod_pinned_to_on_demand_keeps_its_claim_on_demand():
    scenario = Scenario(
        node_options=(option("a", 2000, price=1.0, spot=0.5), option("b", 2000, price=0.8, spot=0.6)),
        pod_groups=(pods("web", 500, capacity_types=frozenset({"on-demand"})),),
        capacity_types=("on-demand", "spot"),
    )
    node = simulate(scenario).nodes[0]
    assert (node.instance_type, node.capacity_type, node.price) == ("b", "on-demand", 0.8)


def test_identical_pods_spread_over_equal_claims_one_at_a_time():
    # Two claims of one 3000m pod each on 4000m nodes; then four 250m pods alternate
    # between them (fewest pods first, ties to the older claim): two each.
    scenario = Scenario(
        node_options=(option("t", 4000),),
        pod_groups=(pods("big", 3000, count=2), pods("small", 250, count=4)),
    )
    assert fleet(simulate(scenario)) == [("t", {"big": 1, "small": 2}), ("t", {"big": 1, "small": 2})]


def test_a_claim_with_many_candidate_types_fills_up_to_the_roomiest_one():
    # Twenty types of 4000m and 10 pod slots (prices $1..$20); 25 pods of 100m.
    # Every type stays a candidate; slots run out first: 10 + 10 + 5 pods, each on the
    # cheapest type t0.
    options = tuple(option(f"t{i}", 4000, pods=10, price=1.0 + i) for i in range(20))
    result = simulate(Scenario(options, (pods("w", 100, count=25),)))
    assert fleet(result) == [("t0", {"w": 10}), ("t0", {"w": 10}), ("t0", {"w": 5})]
    assert [node.options for node in result.nodes] == [20, 20, 20]
