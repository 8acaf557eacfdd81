"""Topology spread, pod anti-affinity, host ports, several NodePools, minValues and relaxation in the
simulation. Cases marked "upstream" follow kubernetes-sigs/karpenter v1.14
pkg/controllers/provisioning/scheduling/topology_test.go (or suite_test.go / scheduling_test.go);
the others are first principles."""

import time
from collections import Counter

from sizing.karpenter.simulation import NodeOption, NodePoolModel, PodGroup, Scenario, TopologyRule, simulate
from sizing.kube.resources import Resources

SMALL = NodeOption("small", Resources(2000, 4096, 110), Resources(2000, 4096, 110), price=1.0)
LARGE = NodeOption("large", Resources(16000, 65536, 110), Resources(16000, 65536, 110), price=8.0)
ZONES = frozenset({"a", "b", "c"})


def _pods(count, cpu=100, **kwargs):
    return PodGroup(kwargs.pop("workload", "web"), Resources(cpu, 128, 1), count, **kwargs)


def _run(groups, options=(SMALL, LARGE), zones=ZONES, **kwargs):
    return simulate(Scenario(node_options=tuple(options), pod_groups=tuple(groups), zones=zones, **kwargs))


def _zone_skew(result, workload="web"):
    per_zone = Counter()
    for node in result.nodes:
        if node.pods.get(workload):
            assert len(node.zones) == 1, node
            per_zone[node.zones[0]] += node.pods[workload]
    return sorted(per_zone.values())


def test_twelve_replicas_with_required_hostname_anti_affinity_need_twelve_nodes():
    rule = TopologyRule("anti-affinity", "hostname", frozenset({"web"}))
    result = _run([_pods(12, topology=(rule,))])
    assert len(result.nodes) == 12 and not result.pending
    assert all(node.pod_count == 1 for node in result.nodes)
    # Without the rule the same pods share one node.
    assert len(_run([_pods(12)]).nodes) == 1


def test_six_replicas_spread_over_three_zones_with_max_skew_one_use_all_three_zones():
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    result = _run([_pods(6, topology=(rule,))])
    assert _zone_skew(result) == [2, 2, 2]
    assert {node.zones[0] for node in result.nodes} == set(ZONES)


def test_zone_spread_balances_four_pods_one_one_two():
    """upstream topology_test.go: It("should balance pods across zones (match labels)")."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    assert _zone_skew(_run([_pods(4, topology=(rule,))])) == [1, 1, 2]


def test_hostname_spread_balances_pods_across_nodes():
    """upstream topology_test.go: It("should balance pods across nodes") and
    It("should balance pods on the same hostname up to maxskew")."""
    one = TopologyRule("spread", "hostname", frozenset({"web"}), max_skew=1)
    assert [n.pod_count for n in _run([_pods(4, topology=(one,))]).nodes] == [1, 1, 1, 1]
    four = TopologyRule("spread", "hostname", frozenset({"web"}), max_skew=4)
    assert [n.pod_count for n in _run([_pods(4, topology=(four,))]).nodes] == [4]


def test_zone_spread_limited_to_the_pods_zones_leaves_the_rest_pending():
    """upstream topology_test.go: It("should not violate max-skew when unsat = do not schedule"): a pool
    limited to zones 2 and 3 takes pods until the skew against an empty zone reachable by the pod blocks."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    pools = (
        NodePoolModel("only-b-c", (SMALL,), zones=frozenset({"b", "c"})),
        NodePoolModel("zone-a-full", (SMALL,), zones=frozenset({"a"}), limits={"nodes": 0}),
    )
    result = simulate(
        Scenario(node_options=(SMALL,), pod_groups=(_pods(10, cpu=1100, topology=(rule,)),), node_pools=pools)
    )
    assert _zone_skew(result) == [1, 1]
    assert result.pending_count == 8


def test_zone_anti_affinity_places_one_pod_per_zone():
    """upstream topology_test.go: It("should support pod anti-affinity with a zone topology") converges,
    over batches, to one pod per zone and nothing more."""
    rule = TopologyRule("anti-affinity", "zone", frozenset({"web"}))
    result = _run([_pods(5, topology=(rule,))])
    assert _zone_skew(result) == [1, 1, 1]
    assert result.pending_count == 2


def test_inverse_hostname_anti_affinity_keeps_the_selected_pods_apart():
    """upstream topology_test.go: It("should separate nodes using simple pod anti-affinity on hostname")."""
    rule = TopologyRule("anti-affinity", "hostname", frozenset({"db"}))
    result = _run([_pods(1, cpu=50, topology=(rule,)), _pods(1, cpu=500, workload="db")])
    assert len(result.nodes) == 2
    assert all(len(node.pods) == 1 for node in result.nodes)


def test_two_pods_binding_the_same_host_port_never_share_a_node():
    ports = frozenset({("TCP", 8080)})
    result = _run([_pods(3, host_ports=ports), _pods(2, workload="other", host_ports=ports)])
    assert len(result.nodes) == 5
    # A different port does not conflict.
    assert (
        len(_run([_pods(1, host_ports=ports), _pods(1, workload="o", host_ports=frozenset({("TCP", 9)}))]).nodes) == 1
    )


def test_the_heavier_node_pool_is_tried_first_and_overflows_at_its_limits():
    """upstream suite_test.go: NodePools are ordered by weight; a pool at its limits passes pods on."""
    heavy = NodePoolModel("heavy", (SMALL,), limits={"nodes": 2}, weight=50)
    light = NodePoolModel("light", (LARGE,), weight=10)
    result = simulate(Scenario(node_options=(SMALL,), pod_groups=(_pods(40, cpu=900),), node_pools=(light, heavy)))
    # heavy: 2 small nodes of 2 pods; the other 36 go to light: 17 + 17 + 2.
    assert Counter(node.node_pool for node in result.nodes) == {"heavy": 2, "light": 3}
    assert not result.pending
    assert result.pool_remaining["heavy"] == {"nodes": 0}


def test_pods_restricted_to_a_pool_never_land_on_another():
    tainted = NodePoolModel("gpu-ish", (LARGE,), weight=100)
    plain = NodePoolModel("plain", (SMALL,))
    result = simulate(
        Scenario(node_options=(SMALL,), node_pools=(tainted, plain), pod_groups=(_pods(4, pools=frozenset({"plain"})),))
    )
    assert {node.node_pool for node in result.nodes} == {"plain"}


def test_min_values_keeps_a_claim_flexible_and_fails_when_too_few_types_fit():
    labels = {"small": {"family": "s"}, "large": {"family": "l"}}
    pool = NodePoolModel("p", (SMALL, LARGE), min_values={"family": 2}, type_labels=labels)
    # 30 pods of 100m: small holds 20, large 160; two families must stay, so a claim takes 20.
    result = simulate(Scenario(node_options=(SMALL,), node_pools=(pool,), pod_groups=(_pods(30),)))
    assert [node.pod_count for node in result.nodes] == [20, 10]
    # A pod only the large type fits cannot keep two families: it stays pending.
    big = simulate(Scenario(node_options=(SMALL,), node_pools=(pool,), pod_groups=(_pods(1, cpu=4000),)))
    assert big.pending_count == 1 and "minValues" in big.pending[0].reason


def test_schedule_anyway_spread_is_tried_then_relaxed_when_it_cannot_hold():
    """upstream topology_test.go: It("should violate max-skew when unsat = schedule anyway (capacity type)"),
    here with zones: the spread holds while nodes can be launched, and is dropped for the rest."""
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    relaxed = _pods(0, relaxed=("topologySpreadConstraints (ScheduleAnyway)",))
    pool_a = NodePoolModel("a-only", (SMALL,), zones=frozenset({"a"}))
    pool_b = NodePoolModel("b-blocked", (SMALL,), zones=frozenset({"b"}), limits={"nodes": 0})
    group = _pods(4, cpu=1100, topology=(rule,), fallback=relaxed)
    result = simulate(Scenario(node_options=(SMALL,), node_pools=(pool_a, pool_b), pod_groups=(group,)))
    assert not result.pending and result.placed_count == 4
    assert result.relaxed == {"web": ("topologySpreadConstraints (ScheduleAnyway)",)}
    strict = simulate(
        Scenario(node_options=(SMALL,), node_pools=(pool_a, pool_b), pod_groups=(_pods(4, cpu=1100, topology=(rule,)),))
    )
    assert strict.pending_count == 3


def test_twenty_thousand_pods_with_zone_spread_plan_in_seconds():
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    host = TopologyRule("spread", "hostname", frozenset({"api"}), max_skew=5)
    groups = [_pods(10_000, topology=(rule,)), _pods(10_000, workload="api", topology=(host,))]
    started = time.perf_counter()
    result = _run(groups)
    assert time.perf_counter() - started < 10
    assert not result.pending
    assert _zone_skew(result) in ([3333, 3333, 3334],)


CAPACITY_TYPE = "karpenter.sh/capacity-type"
BOTH_TYPES = f"the 2 values of {CAPACITY_TYPE} (on-demand, spot) of NodePool 'default'"


def test_each_rule_that_leaves_no_domain_is_named_with_its_key():
    """The pending reason names the first rule on the first key with no valid domain."""
    both = ("spot", "on-demand")
    affinity = TopologyRule("affinity", CAPACITY_TYPE, frozenset({"db"}))
    result = _run([_pods(2, topology=(affinity,))], capacity_types=both)
    assert result.pending[0].reason == f"pod affinity on {CAPACITY_TYPE}: none of {BOTH_TYPES} holds a pod it selects"

    spread = TopologyRule("spread", CAPACITY_TYPE, frozenset({"web"}), max_skew=1, min_domains=3)
    result = _run([_pods(3, cpu=1500, topology=(spread,))], options=(SMALL,), capacity_types=both)
    assert result.pending_count == 1 and result.pending[0].reason == (
        f"topology spread on {CAPACITY_TYPE} (maxSkew 1, minDomains 3): only {BOTH_TYPES}, "
        "so a value past maxSkew pods stays closed"
    )

    db_apart = TopologyRule("anti-affinity", CAPACITY_TYPE, frozenset({"db", "web"}))
    result = _run([_pods(2, cpu=1500, workload="db", topology=(db_apart,)), _pods(1)], capacity_types=both)
    assert [(group.workload, group.count) for group in result.pending] == [("web", 1)]
    assert result.pending[0].reason == f"pod anti-affinity on {CAPACITY_TYPE} of db: {BOTH_TYPES} each hold its pods"
