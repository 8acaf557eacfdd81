"""Required and preferred pod affinity by hostname and zone, in the simulation and the planner.

Cases marked "upstream" follow kubernetes-sigs/karpenter v1.14
pkg/controllers/provisioning/scheduling/topology_test.go, Context("Pod Affinity/Anti-Affinity");
the others are first principles.
"""

from collections import Counter

from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, TopologyRule, simulate
from sizing.kube.resources import Resources
from sizing.kube.objects import read_objects
from sizing.kube.scheduling import HOSTNAME_KEY, ZONE_KEY, LabelSelector, PodAffinityTerm, PodScheduling
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity

SMALL = NodeOption("small", Resources(2000, 4096, 110), Resources(2000, 4096, 110), price=1.0)
LARGE = NodeOption("large", Resources(16000, 65536, 110), Resources(16000, 65536, 110), price=8.0)
FIVE_PODS = NodeOption("five-pods", Resources(16000, 65536, 5), Resources(16000, 65536, 5), price=1.0)
ZONES = frozenset({"a", "b", "c"})


def _pods(workload, count, cpu=100, **kwargs):
    return PodGroup(workload, Resources(cpu, 128, 1), count, **kwargs)


def _run(groups, options=(SMALL, LARGE), zones=ZONES, **kwargs):
    return simulate(Scenario(node_options=tuple(options), pod_groups=tuple(groups), zones=zones, **kwargs))


def _affinity(key, *targets):
    return TopologyRule("affinity", key, frozenset(targets))


def _nodes_of(result, workload):
    return [node for node in result.nodes if node.pods.get(workload)]


def test_pod_affinity_by_hostname_lands_on_the_target_pods_node():
    """upstream: It("should respect pod affinity (hostname)"): ten pods spread one per node, a target
    pod and a pod with hostname affinity to it; the last two share a node."""
    spread = TopologyRule("spread", "hostname", frozenset({"spread"}), max_skew=1)
    result = _run([
        _pods("spread", 10, topology=(spread,)),
        _pods("target", 1),
        _pods("follower", 1, topology=(_affinity("hostname", "target"),)),
    ])
    assert not result.pending
    (target_node,) = _nodes_of(result, "target")
    (follower_node,) = _nodes_of(result, "follower")
    assert target_node.name == follower_node.name


def test_self_affinity_by_hostname_puts_every_pod_on_one_node():
    """upstream: It("should respect self pod affinity (hostname)")."""
    result = _run([_pods("web", 3, topology=(_affinity("hostname", "web"),))])
    assert not result.pending
    assert [node.pods["web"] for node in result.nodes] == [3]


def test_self_affinity_by_hostname_fills_one_node_and_leaves_the_rest_pending():
    """upstream: It("should respect self pod affinity for first empty topology domain only (hostname)"):
    the node holds five pods, so five schedule and five stay pending; no second node is opened."""
    result = _run([_pods("web", 10, topology=(_affinity("hostname", "web"),))], options=(FIVE_PODS,))
    assert [node.pods["web"] for node in result.nodes] == [5]
    assert result.pending_count == 5
    # Without the affinity the same pods take two nodes.
    assert len(_run([_pods("web", 10)], options=(FIVE_PODS,)).nodes) == 2


def test_self_affinity_by_zone_keeps_every_pod_in_one_zone():
    """upstream: It("should respect self pod affinity (zone)"); first principles: pods too large to
    share a node still all go to the zone the first one chose."""
    result = _run([_pods("web", 3, topology=(_affinity("zone", "web"),))])
    assert len(result.nodes) == 1 and result.nodes[0].pods["web"] == 3
    wide = _run([_pods("web", 6, cpu=1500, topology=(_affinity("zone", "web"),))], options=(SMALL,))
    assert len(wide.nodes) == 6 and not wide.pending
    assert {node.zones for node in wide.nodes} == {("a",)}


def test_self_affinity_by_zone_respects_the_pods_own_zone():
    """upstream: It("should respect self pod affinity (zone w/ constraint)")."""
    result = _run([_pods("web", 3, topology=(_affinity("zone", "web"),), zones=frozenset({"c"}))])
    assert [node.zones for node in result.nodes] == [("c",)]
    assert result.nodes[0].pods["web"] == 3


def test_matching_affinities_with_incompatible_zones_open_two_nodes():
    """upstream: It("should allow two nodes to be created when two pods with matching affinities have
    incompatible selectors"): both pods carry the same label and zone self-affinity, one limited to
    zone b, the other to zone c."""
    rule = _affinity("zone", "one", "two")
    result = _run([
        _pods("one", 1, topology=(rule,), zones=frozenset({"b"})),
        _pods("two", 1, topology=(rule,), zones=frozenset({"c"})),
    ])
    assert not result.pending
    assert _nodes_of(result, "one")[0].zones == ("b",)
    assert _nodes_of(result, "two")[0].zones == ("c",)


def test_affinity_to_a_pod_that_does_not_exist_leaves_the_pods_pending():
    """upstream: It("should not schedule pods with affinity to a non-existent pod") and
    It("should fail to schedule pods with unsatisfiable dependencies")."""
    zone = _run([_pods("web", 10, topology=(_affinity("zone", "missing"),))])
    assert zone.pending_count == 10 and not zone.nodes
    host = _run([_pods("db", 1, topology=(_affinity("hostname", "web"),))])
    assert host.pending_count == 1 and not host.nodes


def test_zone_affinity_to_an_unconstrained_target_waits_for_its_zone():
    """upstream: It("should support pod affinity with zone topology (unconstrained target)"): the
    target's NodeClaim is not committed to a zone, so in this batch only the target schedules."""
    result = _run([
        _pods("follower", 10, topology=(_affinity("zone", "target"),)),
        _pods("target", 1),
    ])
    assert result.placed_count == 1 and _nodes_of(result, "target")
    assert result.pending_count == 10
    assert {p.workload for p in result.pending} == {"follower"}


def test_zone_affinity_to_a_constrained_target_follows_it_into_its_zone():
    """upstream: It("should support pod affinity with zone topology (constrained target)"): the
    followers come first in the queue, fail, and land in the target's zone on the second round."""
    result = _run([
        _pods("follower", 10, topology=(_affinity("zone", "target"),)),
        _pods("target", 1, zones=frozenset({"a"})),
    ])
    assert not result.pending
    per_zone = Counter()
    for node in result.nodes:
        per_zone[node.zones] += node.pod_count
    assert per_zone == {("a",): 11}


def test_dependent_hostname_affinities_all_schedule_together():
    """upstream: It("should handle multiple dependent affinities"): db <- web <- cache <- ui by hostname."""
    result = _run([
        _pods("db", 1),
        _pods("web", 1, topology=(_affinity("hostname", "db"),)),
        _pods("cache", 1, topology=(_affinity("hostname", "web"),)),
        _pods("ui", 1, topology=(_affinity("hostname", "cache"),)),
    ])
    assert not result.pending
    assert len(result.nodes) == 1 and result.nodes[0].pod_count == 4


def test_affinity_to_pods_scheduled_later_is_met_when_the_queue_retries():
    """First principles (Karpenter's Queue retries failed pods while it makes progress): pods are taken
    largest first, so the 1-cpu app pods with hostname affinity to a 100m agent fail first, then join
    the agent's node."""
    result = _run([
        _pods("app", 3, cpu=1000, topology=(_affinity("hostname", "agent"),)),
        _pods("agent", 1),
    ], options=(LARGE,))
    assert not result.pending
    assert len(result.nodes) == 1
    assert dict(result.nodes[0].pods) == {"agent": 1, "app": 3}


def test_hostname_affinity_stops_at_the_target_nodes_room():
    """First principles: pods with hostname affinity to one pod can only use that pod's node; what does
    not fit there stays pending rather than opening another node."""
    result = _run([
        _pods("db", 1, cpu=1000, zones=frozenset({"a"})),
        _pods("web", 5, cpu=400, topology=(_affinity("hostname", "db"),)),
    ], options=(SMALL,))
    assert len(result.nodes) == 1
    assert result.nodes[0].pods == {"db": 1, "web": 2}
    assert result.pending_count == 3


def test_zone_affinity_to_another_workload_uses_its_zones_only():
    """First principles: a workload pinned to zone b; pods with zone affinity to it all land in b,
    on as many nodes as they need."""
    result = _run([
        _pods("db", 1, cpu=1500, zones=frozenset({"b"})),
        _pods("api", 4, cpu=1500, topology=(_affinity("zone", "db"),)),
    ], options=(SMALL,))
    assert not result.pending
    assert len(result.nodes) == 5
    assert {node.zones for node in result.nodes} == {("b",)}


def test_preferred_pod_affinity_that_cannot_hold_is_relaxed():
    """upstream: It("should allow violation of preferred pod affinity"); the relaxation is recorded."""
    preferred = _pods("web", 1, topology=(_affinity("hostname", "missing"),))
    relaxed = _pods("web", 1, relaxed=("preferred pod affinity term",))
    result = _run([PodGroup(**{**preferred.__dict__, "fallback": relaxed})])
    assert not result.pending and result.placed_count == 1
    assert result.relaxed == {"web": ("preferred pod affinity term",)}


# -- the planner ------------------------------------------------------------------------------

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)
THREE_ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def _plan(workloads, **kwargs):
    kwargs.setdefault("solver_work_limit", None)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=NodePoolSpec(requirements=M5), **kwargs))


def _workload(name, replicas, cpu=100, labels=None, **scheduling):
    return Workload(name, cpu, 128, replicas=replicas, max_surge=0,
                    scheduling=PodScheduling(labels=labels or {"app": name}, **scheduling))


def test_planner_keeps_zone_affinity_pods_with_their_target():
    """First principles through the planner: a cache with required zone affinity to a db pinned to one
    zone plans every cache pod in that zone."""
    db = Workload("db", 1500, 1024, replicas=1, max_surge=0, node_selector={ZONE_KEY: "us-east-1b"},
                  scheduling=PodScheduling(labels={"app": "db"}))
    cache = _workload("cache", 6, cpu=1000, pod_affinity=(
        PodAffinityTerm(ZONE_KEY, LabelSelector({"app": "db"}), anti=False),))
    plan = _plan([db, cache], zones=THREE_ZONES)
    assert not plan.fleet.pending
    zones = {node.zones for node in plan.fleet.nodes if node.pods.get("cache")}
    assert zones == {("us-east-1b",)}


def test_planner_relaxes_preferred_pod_affinity_and_says_so():
    """upstream: It("should allow violation of a pod affinity preference with a conflicting required
    constraint"): three pods one per host by a hostname spread, preferring the node of another pod;
    all schedule, one per node."""
    from sizing.kube.scheduling import TopologySpread

    spread = TopologySpread(HOSTNAME_KEY, 1, "DoNotSchedule", LabelSelector({"app": "web"}))
    prefer = PodAffinityTerm(HOSTNAME_KEY, LabelSelector({"security": "s2"}), anti=False, weight=50)
    web = _workload("web", 3, topology_spread=(spread,), pod_affinity=(prefer,))
    other = _workload("other", 1, labels={"security": "s2"})
    plan = _plan([web, other])
    assert not plan.fleet.pending
    assert sorted(node.pods.get("web", 0) for node in plan.fleet.nodes if node.pods.get("web")) == [1, 1, 1]
    assert "preferred pod affinity term" in plan.fleet.relaxed["web"]


def test_planner_self_affinity_by_hostname_needs_one_node_large_enough():
    """First principles: pods with required self-affinity by hostname must share one node, so the plan
    keeps them together and, past one node's room, leaves the rest pending instead of spreading."""
    term = PodAffinityTerm(HOSTNAME_KEY, LabelSelector({"app": "web"}), anti=False)
    plan = _plan([_workload("web", 4, cpu=500, pod_affinity=(term,))])
    web_nodes = [node for node in plan.fleet.nodes if node.pods.get("web")]
    assert len(web_nodes) == 1 and web_nodes[0].pods["web"] == 4


def test_object_reader_accepts_pod_affinity():
    text = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: cache}}
    spec:
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: db}}
            topologyKey: topology.kubernetes.io/zone
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            podAffinityTerm:
              labelSelector: {matchLabels: {app: db}}
              topologyKey: kubernetes.io/hostname
      containers:
      - name: c
        resources: {requests: {cpu: 100m, memory: 128Mi}}
"""
    objects = read_objects([("cache.yaml", text)])
    assert not objects.unmodelled
    terms = objects.workloads[0].scheduling.pod_affinity
    assert [(t.topology_key, t.anti, t.weight) for t in terms] == [
        (ZONE_KEY, False, None), (HOSTNAME_KEY, False, 10)]
