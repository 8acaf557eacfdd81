"""Cases taken from Karpenter's own tests (kubernetes-sigs/karpenter v1.14), one per upstream `It`.

Each docstring names the upstream file and the `It("...")` it follows. Upstream runs against a fake
cloud provider; here the instance types are small stand-ins with the same shape (or m5.large /
m5.xlarge through the planner), and what is asserted is what the upstream test asserts.
"""

from dataclasses import replace

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.simulation import (
    NodeOption,
    NodePoolModel,
    PodGroup,
    RunningNode,
    Scenario,
    TopologyRule,
    simulate,
)
from sizing.kube.resources import Resources
from sizing.kube.scheduling import (
    HostPort,
    LabelExpression,
    LabelSelector,
    PodScheduling,
    Taint,
    Toleration,
    TopologySpread,
)
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity

PROVISIONING = "kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go"
SCHEDULING = "kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go"
INSTANCE_SELECTION = "kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/instance_selection_test.go"

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)


def _option(name, cpu, memory_gib, price, pods=110):
    size = Resources(cpu * 1000, memory_gib * 1024, pods)
    return NodeOption(name, size, size, price=price)


def _plan(workloads, pool=NodePoolSpec(requirements=M5), **kwargs):
    kwargs.setdefault("solver_work_limit", None)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=pool, **kwargs))


def _workload(name="pod", cpu=100, memory=128, replicas=1, **scheduling):
    return Workload(name, cpu, memory, replicas=replicas, max_surge=0, scheduling=PodScheduling(**scheduling))


def _pools_of(plan, workload):
    return {node.node_pool for node in plan.fleet.nodes if node.pods.get(workload)}


# -- taints and tolerations ---------------------------------------------------------------------

GPU_TAINT = Taint("nvidia.com/gpu", "NoSchedule", "true")


@pytest.mark.parametrize(
    "toleration",
    [
        Toleration("nvidia.com/gpu", "Equal", "true", "NoSchedule"),
        Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),
        Toleration("nvidia.com/gpu", "Exists"),
        Toleration(None, "Exists"),
    ],
    ids=["equal", "exists-with-effect", "exists-key-only", "exists-everything"],
)
def test_pods_that_tolerate_taints_schedule(toleration):
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go:
    It("should schedule pods that tolerate taints")."""
    pool = NodePoolSpec(requirements=M5, taints=(GPU_TAINT,))
    plan = _plan([_workload(tolerations=(toleration,))], pool=pool)
    assert not plan.fleet.pending and plan.fleet.placed_count == 1


@pytest.mark.parametrize(
    "toleration",
    [
        None,
        Toleration("nvidia.com/gpu", "Equal", "false", "NoSchedule"),
        Toleration("nvidia.com/gpu", "Exists", effect="NoExecute"),
        Toleration("other", "Exists"),
    ],
    ids=["none", "wrong-value", "wrong-effect", "wrong-key"],
)
def test_pods_that_do_not_tolerate_taints_are_refused(toleration):
    """The converse of kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go:
    It("should schedule pods that tolerate taints"): with the only NodePool tainted, a pod whose
    toleration does not match key, value and effect has nowhere to go."""
    pool = NodePoolSpec(requirements=M5, taints=(GPU_TAINT,))
    tolerations = () if toleration is None else (toleration,)
    with pytest.raises(SizingInputError, match="no NodePool and no running node can take its pods"):
        _plan([_workload(tolerations=tolerations)], pool=pool)


def test_a_prefer_no_schedule_pool_is_passed_over_while_another_matches():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go:
    It("should not match NodePool with PreferNoSchedule taint when other NodePool match")."""
    preferring = NodePoolSpec(requirements=M5, name="zz-prefer", taints=(Taint("foo", "PreferNoSchedule", "bar"),))
    plain = NodePoolSpec(requirements=M5, name="plain")
    # Equal weights go by name descending, so the tainted pool would be tried first.
    plan = _plan([_workload()], pool=plain, other_node_pools=(preferring,))
    assert _pools_of(plan, "pod") == {"plain"}


def test_prefer_no_schedule_is_tolerated_after_the_preferences_are_relaxed():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go:
    It("should tolerate PreferNoSchedule taint only after trying to relax Affinity terms")."""
    pool = NodePoolSpec(requirements=M5, taints=(Taint("foo", "PreferNoSchedule", "bar"),))
    impossible = (LabelExpression("topology.kubernetes.io/zone", "In", ("invalid",)),)
    plan = _plan([_workload(preferred_node_terms=((1, impossible),))], pool=pool)
    assert not plan.fleet.pending
    assert plan.fleet.relaxed["pod"][-1] == "PreferNoSchedule taints tolerated"


# -- NodePool weights and limits ----------------------------------------------------------------


def test_the_heaviest_node_pool_takes_every_pod():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Weighted NodePools"):
    It("should schedule to the nodepool with the highest priority always")."""
    pools = (
        NodePoolSpec(requirements=M5, name="unweighted"),
        NodePoolSpec(requirements=M5, name="twenty", weight=20),
        NodePoolSpec(requirements=M5, name="hundred", weight=100),
    )
    plan = _plan([_workload(replicas=3)], pool=pools[0], other_node_pools=pools[1:])
    assert _pools_of(plan, "pod") == {"hundred"}


def test_an_explicitly_selected_pool_wins_over_heavier_ones():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Weighted NodePools"):
    It("should schedule to explicitly selected nodepool even if other nodePools are higher priority")."""
    pools = (
        NodePoolSpec(requirements=M5, name="targeted"),
        NodePoolSpec(requirements=M5, name="twenty", weight=20),
        NodePoolSpec(requirements=M5, name="hundred", weight=100),
    )
    pinned = Workload("pod", 100, 128, replicas=1, max_surge=0, node_selector={"karpenter.sh/nodepool": "targeted"})
    plan = _plan([pinned], pool=pools[0], other_node_pools=pools[1:])
    assert _pools_of(plan, "pod") == {"targeted"}


TWO_CPU = _option("two-cpu", 2, 4, price=1.0)
FOUR_CPU = _option("four-cpu", 4, 8, price=2.0)


def _single_pool(groups, limits, options=(TWO_CPU, FOUR_CPU), running=()):
    return simulate(Scenario(node_options=options, pod_groups=tuple(groups), limits=limits, running_nodes=running))


def test_limits_already_used_stop_the_pool():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Resource Limits"):
    It("should not schedule when limits are exceeded"): a NodeClaim of 100 cpu against a limit of 20."""
    big = NodeOption("big", Resources(100_000, 4096, 110), Resources(100_000, 4096, 110), price=1.0)
    result = _single_pool(
        [PodGroup("pod", Resources(100, 128, 1), 1, nodes=frozenset())],
        {"cpu": 20_000},
        running=(RunningNode("existing", big, requested=big.allocatable),),
    )
    assert result.pending_count == 1 and not result.new_nodes


def test_a_pod_schedules_when_a_type_fits_the_limits():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Resource Limits"):
    It("should schedule if limits would be met") and It("should not schedule if limits would be
    exceeded"): 1.75 cpu fits a 2-cpu type under a limit of 2; 2.1 cpu needs a type the limit forbids."""
    fits = _single_pool([PodGroup("pod", Resources(1750, 128, 1), 1)], {"cpu": 2000})
    assert [node.instance_type for node in fits.nodes] == ["two-cpu"]
    too_big = _single_pool([PodGroup("pod", Resources(2100, 128, 1), 1)], {"cpu": 2000})
    assert too_big.pending_count == 1 and not too_big.nodes


def test_limits_partially_schedule_pods_that_need_their_own_nodes():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Resource Limits"):
    It("should partially schedule if limits would be exceeded"): two 1.5-cpu pods with hostname
    anti-affinity under a 3-cpu limit; one schedules, one does not."""
    anti = TopologyRule("anti-affinity", "hostname", frozenset({"foo"}))
    result = _single_pool([PodGroup("foo", Resources(1500, 128, 1), 2, topology=(anti,))], {"cpu": 3000})
    assert result.placed_count == 1 and result.pending_count == 1


def test_a_nodeclaim_of_an_earlier_round_counts_against_the_limits_of_the_next():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Resource Limits"):
    It("should not schedule to a nodepool after a scheduling round if limits would be exceeded"): a
    1.75-cpu pod launches a 2-cpu node under a limit of 2; a second one, a round later, does not
    schedule. Here the rounds are two HPA steps 15 s apart."""
    from sizing.planning.scenarios import HPA_RAMP, ScenarioRunner, ScenarioSetup

    pod = PodGroup("pod", Resources(1750, 128, 1), 2)
    setup = ScenarioSetup(
        (TWO_CPU, FOUR_CPU), (pod,), (PodGroup("pod", pod.requests, 0),), (((0, 1), (15, 2)),), None, ("on-demand",)
    )
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 2000})
    assert [node.instance_type for node in ramp.result.nodes] == ["two-cpu"]
    assert ramp.result.pending_count == 1 and "exceed the NodePool limits" in ramp.result.pending[0].reason


def test_the_nodes_limit_stops_the_third_node():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Resource Limits"):
    It("should not schedule if limits would be exceeded (node)")."""
    anti = TopologyRule("anti-affinity", "hostname", frozenset({"foo"}))
    result = _single_pool([PodGroup("foo", Resources(1500, 128, 1), 3, topology=(anti,))], {"nodes": 2})
    assert len(result.nodes) == 2 and result.pending_count == 1
    assert "node limits have been exhausted" in result.pending[0].reason


def test_a_pool_at_its_limits_overflows_to_the_next_by_weight():
    """First principles, following Karpenter's NodePool loop in scheduler.go (each NodePool's template is
    tried in weight order and one that cannot launch passes the pod on): the heavy pool's limit holds
    two nodes, the rest go to the lighter pool."""
    anti = TopologyRule("anti-affinity", "hostname", frozenset({"foo"}))
    pools = (
        NodePoolModel("heavy", (TWO_CPU,), limits={"nodes": 2}, weight=50),
        NodePoolModel("light", (TWO_CPU,), weight=10),
    )
    result = simulate(
        Scenario(
            node_options=(TWO_CPU,),
            node_pools=pools,
            pod_groups=(PodGroup("foo", Resources(1500, 128, 1), 5, topology=(anti,)),),
        )
    )
    assert not result.pending
    assert [node.node_pool for node in result.nodes] == ["heavy", "heavy", "light", "light", "light"]


# -- minValues ----------------------------------------------------------------------------------

ONE_CPU = NodeOption("instance-type-1", Resources(1000, 1024, 110), Resources(1000, 1024, 110), price=0.52)
FOUR = NodeOption("instance-type-2", Resources(4000, 4096, 110), Resources(4000, 4096, 110), price=1.0)
TYPE_LABELS = {
    "instance-type-1": {"node.kubernetes.io/instance-type": "instance-type-1"},
    "instance-type-2": {"node.kubernetes.io/instance-type": "instance-type-2"},
}


def _min_values(options, minimum, count=2):
    pool = NodePoolModel(
        "default", options, min_values={"node.kubernetes.io/instance-type": minimum}, type_labels=TYPE_LABELS
    )
    pods = PodGroup("pod", Resources(900, 900, 1), count)
    return simulate(Scenario(node_options=options, node_pools=(pool,), pod_groups=(pods,)))


def test_min_values_keep_two_types_so_each_claim_takes_one_pod():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/instance_selection_test.go:
    It("should schedule respecting the minValues from instance-type requirements"): both 0.9-cpu pods
    fit together only on instance-type-2, so keeping two types puts them on two nodes."""
    result = _min_values((ONE_CPU, FOUR), 2)
    assert not result.pending
    assert len(result.nodes) == 2 and all(node.options >= 2 for node in result.nodes)
    # Without minValues they share one instance-type-2.
    assert [node.instance_type for node in _min_values((ONE_CPU, FOUR), 1).nodes] == ["instance-type-2"]


def test_min_values_that_the_types_cannot_meet_leave_the_pod_pending():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("with MinValuesPolicy
    set to Strict"): It("should not schedule when minValues requirement is not met") (two types,
    minValues 3)."""
    result = _min_values((ONE_CPU, FOUR), 3, count=1)
    assert result.pending_count == 1 and not result.nodes
    assert "minValues" in result.pending[0].reason


# -- host ports ---------------------------------------------------------------------------------


def test_pods_with_the_same_host_port_go_to_different_nodes():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go:
    It("should schedule pods with the same host port to different nodes")."""
    pods = PodGroup("pod", Resources(100, 128, 1), 2, host_ports=frozenset({("TCP", 8080)}))
    result = simulate(Scenario(node_options=(FOUR_CPU,), pod_groups=(pods,)))
    assert len(result.nodes) == 2 and all(node.pod_count == 1 for node in result.nodes)


def test_a_daemon_set_host_port_blocks_the_pod():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should account for daemonset hostports"): no node is launched for the pod."""
    exporter = DaemonSet("ds", 200, 256, scheduling=PodScheduling(host_ports=(HostPort(8080),)))
    pod = _workload(host_ports=(HostPort(8080),))
    with pytest.raises(SizingInputError, match="host port 8080/TCP is bound by DaemonSet ds"):
        _plan([pod], daemon_sets=DEFAULT_DAEMON_SETS + (exporter,))


def test_a_daemon_set_host_port_counts_only_where_the_daemon_set_runs():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should not account for daemonset hostports when daemonset would not schedule on selected node")."""
    large_only = DaemonSet(
        "on-xlarge",
        200,
        256,
        node_selector={"node.kubernetes.io/instance-type": "m5.xlarge"},
        scheduling=PodScheduling(host_ports=(HostPort(8080),)),
    )
    pinned = Workload(
        "pod",
        100,
        128,
        replicas=1,
        max_surge=0,
        node_selector={"node.kubernetes.io/instance-type": "m5.large"},
        scheduling=PodScheduling(host_ports=(HostPort(8080),)),
    )
    plan = _plan([pinned], daemon_sets=DEFAULT_DAEMON_SETS + (large_only,))
    assert [node.instance_type for node in plan.fleet.nodes] == ["m5.large"]


# -- DaemonSet overhead by compatibility --------------------------------------------------------

HEAVY = 1000  # millicores: with the EKS defaults this and a 1-cpu pod no longer fit an m5.large


def _node_type_with(daemon_set, pool=NodePoolSpec(requirements=M5), tolerations=()):
    pod = _workload(cpu=1000, memory=1024, tolerations=tolerations)
    plan = _plan([pod], pool=pool, daemon_sets=DEFAULT_DAEMON_SETS + (daemon_set,))
    return [node.instance_type for node in plan.fleet.nodes]


def test_daemon_sets_are_counted():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should account for daemonsets"): the DaemonSet's requests push the pod to the larger type."""
    assert _node_type_with(DaemonSet("ds", HEAVY, 1024)) == ["m5.xlarge"]
    assert _plan([_workload(cpu=1000, memory=1024)]).fleet.nodes[0].instance_type == "m5.large"


def test_daemon_sets_without_matching_tolerations_are_ignored():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should ignore daemonsets without matching tolerations")."""
    pool = NodePoolSpec(requirements=M5, taints=(Taint("foo", "NoSchedule", "bar"),))
    everything = (Toleration(None, "Exists"),)
    assert _node_type_with(DaemonSet("ds", HEAVY, 1024), pool, everything) == ["m5.large"]


def test_daemon_sets_with_a_node_selector_matching_the_pool_label_are_counted():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should account for daemonsets with a custom label nodeSelector that matches the nodepool")."""
    pool = NodePoolSpec(requirements=M5, labels={"team": "web"})
    assert _node_type_with(DaemonSet("ds", HEAVY, 1024, node_selector={"team": "web"}), pool) == ["m5.xlarge"]
    assert _node_type_with(DaemonSet("ds", HEAVY, 1024, node_selector={"team": "data"}), pool) == ["m5.large"]


def test_daemon_sets_are_filtered_by_instance_type_requirements():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should filter out daemonsets based on instance type requirements"): a DaemonSet that selects
    only m5.xlarge does not weigh on m5.large."""
    xlarge_only = DaemonSet("ds", HEAVY, 1024, node_selector={"node.kubernetes.io/instance-type": "m5.xlarge"})
    assert _node_type_with(xlarge_only) == ["m5.large"]


def test_daemon_sets_are_counted_on_a_prefer_no_schedule_pool():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go, Context("Daemonsets"):
    It("should consider a daemonset schedulable with a PreferNoSchedule taint"): DaemonSet pods
    tolerate PreferNoSchedule for this check (isDaemonPodCompatible)."""
    pool = NodePoolSpec(requirements=M5, taints=(Taint("test", "PreferNoSchedule"),))
    assert _node_type_with(DaemonSet("ds", HEAVY, 1024), pool) == ["m5.xlarge"]


# -- pod-level resources ------------------------------------------------------------------------


def test_pod_level_requests_decide_the_type():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go:
    It("should schedule based on the pod level resources requests"): pod-level requests (9.9 cpu,
    3.9Gi) win over the containers' (5 cpu, 1Gi; init 6 cpu), so the 10-cpu type is chosen, not a
    smaller one."""
    from sizing.kube.objects import read_objects

    text = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: pod}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: pod}}
    spec:
      resources: {requests: {cpu: 9900m, memory: 3994Mi}}
      initContainers:
      - {name: init, resources: {requests: {cpu: "6", memory: 2Gi}}}
      containers:
      - {name: main, resources: {requests: {cpu: "5", memory: 1Gi}}}
"""
    (workload,) = read_objects([("pod.yaml", text)]).workloads
    assert (workload.cpu_millicores, workload.memory_mib) == (9900, 3994)
    options = (_option("ten", 10, 4, 1.0), _option("eleven", 11, 5, 1.1), _option("nine", 9, 3, 0.9))
    group = PodGroup("pod", Resources(workload.cpu_millicores, workload.memory_mib, 1), 1)
    result = simulate(Scenario(node_options=options, pod_groups=(group,)))
    assert [node.instance_type for node in result.nodes] == ["ten"]


RESOURCES = "kubernetes-sigs/karpenter pkg/utils/resources/suite_test.go"
APP_AND_SIDECAR = {
    "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
    "initContainers": [
        {"name": "mesh", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    ],
}


def test_pod_level_requests_replace_the_containers():
    """kubernetes-sigs/karpenter pkg/utils/resources/suite_test.go, Context("Pod Level Resources"):
    It("should calculate resource requests when the pod level resources is specified")."""
    from sizing.kube.manifests import pod_requests

    spec = {
        "resources": {"limits": {"cpu": "4", "memory": "4Gi"}, "requests": {"cpu": "2", "memory": "2Gi"}},
        "containers": [
            {
                "name": "app",
                "resources": {"limits": {"cpu": "3", "memory": "3Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            }
        ],
    }
    assert pod_requests(spec, "pod") == (2000, 2048)


def test_pod_level_requests_alone_replace_containers_and_sidecars():
    """kubernetes-sigs/karpenter pkg/utils/resources/suite_test.go, Context("Pod Level Resources"):
    It("should calculate resource requests when only the pod level resources request is specified")."""
    from sizing.kube.manifests import pod_requests

    spec = {**APP_AND_SIDECAR, "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}
    assert pod_requests(spec, "pod") == (2000, 2048)


def test_pod_level_requests_default_to_the_pod_level_limits():
    """kubernetes-sigs/karpenter pkg/utils/resources/suite_test.go, Context("Pod Level Resources"):
    It("should calculate resource requests when the pod level resources requests is defaulted from
    limits"). The upstream test writes the requests the API server defaults from the limits (10 cpu,
    10Gi, although app and sidecar request 2 cpu and 2Gi); here the pod is given as a user writes it,
    limits only, and the planner does that defaulting."""
    from sizing.kube.manifests import pod_requests

    spec = {**APP_AND_SIDECAR, "resources": {"limits": {"cpu": "10", "memory": "10Gi"}}}
    assert pod_requests(spec, "pod") == (10_000, 10_240)


# -- topology on capacity type, instance-type labels and custom labels --------------------------

TOPOLOGY = "kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ARCH = "kubernetes.io/arch"


def _labelled(name, cpu, arch, price):
    size = Resources(cpu * 1000, cpu * 2048, 110)
    return NodeOption(name, size, size, price=price, labels={ARCH: arch, "node.kubernetes.io/instance-type": name})


AMD = _labelled("amd-2", 2, "amd64", 1.0)
ARM = _labelled("arm-2", 2, "arm64", 0.8)


def _spread(key, skew=1, selects=("pod",)):
    return TopologyRule("spread", key, frozenset(selects), max_skew=skew)


def _per_domain(result, domain_of, before=()):
    """Pods of workload "pod" per domain: those placed by the batch, plus `before` as (domain, pods)."""
    counts = dict(before)
    for node in result.nodes:
        for workload, pods in node.pods.items():
            if workload == "pod":
                counts[domain_of(node)] = counts.get(domain_of(node), 0) + pods
    return counts


def _capacity_types(pool_kinds, groups, running=()):
    pool = NodePoolModel("default", (TWO_CPU, FOUR_CPU), capacity_types=pool_kinds)
    return simulate(
        Scenario(node_options=(TWO_CPU, FOUR_CPU), node_pools=(pool,), pod_groups=groups, running_nodes=running)
    )


@pytest.mark.parametrize("kinds", [("on-demand", "spot")], ids=["spot-and-on-demand"])
def test_pods_balance_across_capacity_types(kinds):
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("CapacityType"):
    It("should balance pods across capacity types") and It("should respect NodePool capacity type
    constraints"): four pods spread by maxSkew 1 over the NodePool's spot and on-demand go 2 and 2."""
    pods = PodGroup("pod", Resources(100, 128, 1), 4, topology=(_spread(CAPACITY_TYPE),))
    result = _capacity_types(kinds, (pods,))
    assert not result.pending
    assert _per_domain(result, lambda node: node.capacity_type) == {"on-demand": 2, "spot": 2}


def _full_node(name, capacity_type, option=TWO_CPU, labels=None):
    """A running node whose one pod of the spread's workload leaves no room for another."""
    return RunningNode(
        name, option, requested=option.allocatable, capacity_type=capacity_type, pods={"pod": 1}, labels=labels or {}
    )


def test_capacity_type_spread_does_not_violate_max_skew():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("CapacityType"):
    It("should not violate max-skew when unsat = do not schedule (capacity type)"): with one pod on a
    (full) spot node and the NodePool now on-demand only, two of five pods schedule on on-demand and three
    stay pending. Also It("should balance pods across capacity-types (no constraints)"), the same with the
    roles of spot and on-demand swapped."""
    pods = PodGroup("pod", Resources(1100, 128, 1), 5, topology=(_spread(CAPACITY_TYPE),))
    result = _capacity_types(("on-demand",), (pods,), running=(_full_node("spot-node", "spot"),))
    assert _per_domain(result, lambda node: node.capacity_type, {"spot": 1}) == {"spot": 1, "on-demand": 2}
    assert result.pending_count == 3
    swapped = _capacity_types(("spot",), (pods,), running=(_full_node("od-node", "on-demand"),))
    assert _per_domain(swapped, lambda node: node.capacity_type, {"on-demand": 1}) == {"on-demand": 1, "spot": 2}


def test_capacity_type_spread_schedule_anyway_is_relaxed():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("CapacityType"):
    It("should violate max-skew when unsat = schedule anyway (capacity type)"): the five pods all go to
    on-demand once the ScheduleAnyway spread is relaxed."""
    relaxed = PodGroup("pod", Resources(1100, 128, 1), 5, relaxed=("topologySpreadConstraints (ScheduleAnyway)",))
    pods = PodGroup("pod", Resources(1100, 128, 1), 5, topology=(_spread(CAPACITY_TYPE),), fallback=relaxed)
    result = _capacity_types(("on-demand",), (pods,), running=(_full_node("spot-node", "spot"),))
    assert _per_domain(result, lambda node: node.capacity_type, {"spot": 1}) == {"spot": 1, "on-demand": 5}
    assert not result.pending


def test_capacity_type_spread_is_limited_by_the_pods_own_capacity_type():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("Combined Capacity
    Type Topology and Node Affinity"): It("should limit spread options by nodeSelector"): five pods that
    select spot and five that select on-demand, each spreading by capacity type, go 5 and 5; and
    Context("CapacityType"): It("should balance pods across capacity-types (node required affinity
    constrained)"): pods required on spot see only the spot domain, so all five share it."""
    rule = _spread(CAPACITY_TYPE)
    spot = PodGroup("pod", Resources(100, 128, 1), 5, capacity_types=frozenset({"spot"}), topology=(rule,))
    on_demand = replace(spot, capacity_types=frozenset({"on-demand"}))
    result = _capacity_types(("on-demand", "spot"), (spot, on_demand))
    assert not result.pending
    assert _per_domain(result, lambda node: node.capacity_type) == {"on-demand": 5, "spot": 5}
    alone = _capacity_types(("on-demand", "spot"), (spot,), running=(_full_node("od-node", "on-demand"),))
    assert _per_domain(alone, lambda node: node.capacity_type, {"on-demand": 1}) == {"on-demand": 1, "spot": 5}


def test_pods_spread_over_both_capacity_type_and_zone():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("Combined Zonal and
    Capacity Type Topology"): It("should spread pods while respecting both constraints"): no capacity
    type and no zone ends up more than maxSkew 1 above another, pod count by pod count."""
    zones = frozenset({"zone-a", "zone-b", "zone-c"})
    pool = NodePoolModel("default", (TWO_CPU, FOUR_CPU), zones=zones, capacity_types=("on-demand", "spot"))
    for count in (2, 5, 8, 19):
        pods = PodGroup("pod", Resources(100, 128, 1), count, topology=(_spread(CAPACITY_TYPE), _spread("zone")))
        result = simulate(Scenario(node_options=pool.node_options, node_pools=(pool,), pod_groups=(pods,)))
        assert not result.pending
        by_kind = _per_domain(result, lambda node: node.capacity_type, {"on-demand": 0, "spot": 0})
        by_zone = _per_domain(result, lambda node: node.zones[0], dict.fromkeys(zones, 0))
        assert sum(by_zone.values()) == count and len(by_kind) == 2 and len(by_zone) == 3
        assert max(by_kind.values()) - min(by_kind.values()) <= 1
        assert max(by_zone.values()) - min(by_zone.values()) <= 1


def test_arch_spread_counts_a_running_node_of_the_other_arch():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("CapacityType"):
    It("should balance pods across arch (no constraints)"): one pod on an amd64 node, the NodePool now
    arm64 only: two of five pods spread by architecture schedule, three stay pending."""
    pool = NodePoolModel("default", (ARM,))
    pods = PodGroup("pod", Resources(1100, 128, 1), 5, topology=(_spread(ARCH),))
    running = RunningNode("amd-node", AMD, requested=AMD.allocatable, pods={"pod": 1})
    result = simulate(Scenario(node_options=(ARM,), node_pools=(pool,), pod_groups=(pods,), running_nodes=(running,)))
    assert _per_domain(result, lambda node: {"amd-2": "amd64", "arm-2": "arm64"}[node.instance_type], {"amd64": 1}) == {
        "amd64": 1,
        "arm64": 2,
    }
    assert result.pending_count == 3


def _arch_pair(anti):
    """Two pods of the same label: one required on arm64, one with (anti-)affinity to it by architecture;
    both spread by hostname, so they never share a node."""
    hostname = TopologyRule("spread", "hostname", frozenset({"first", "second"}))
    first = PodGroup(
        "first",
        Resources(2000, 128, 1),
        1,
        allowed_types=frozenset({"arm-4"}),
        topology=(hostname,),
        labels=(LabelRequirement(ARCH, frozenset({"arm64"})),),
    )
    kind = "anti-affinity" if anti else "affinity"
    second = PodGroup(
        "second",
        Resources(1000, 128, 1),
        1,
        topology=(hostname, TopologyRule(kind, ARCH, frozenset({"first", "second"}))),
    )
    options = (_labelled("amd-4", 4, "amd64", 1.0), _labelled("arm-4", 4, "arm64", 1.2))
    pool = NodePoolModel("default", options)
    result = simulate(Scenario(node_options=options, node_pools=(pool,), pod_groups=(first, second)))
    assert not result.pending
    return {workload: node.instance_type for node in result.nodes for workload in node.pods}


def test_pod_affinity_by_architecture():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("Pod
    Affinity/Anti-Affinity"): It("should respect pod affinity (arch)"): same architecture, not the same node."""
    assert _arch_pair(anti=False) == {"first": "arm-4", "second": "arm-4"}


def test_pod_anti_affinity_by_architecture():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go, Context("Pod
    Affinity/Anti-Affinity"): It("should not violate pod anti-affinity (arch)"): the second pod goes to
    the other architecture."""
    assert _arch_pair(anti=True) == {"first": "arm-4", "second": "amd-4"}


def test_a_topology_key_no_node_pool_defines_leaves_its_pods_unplaced():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go: It("should ignore unknown
    topology keys"): Karpenter does not schedule the pod spreading over a key no NodePool gives values,
    and schedules the other pod. So does the planner: that workload never runs, named with the key,
    and the other is planned as if alone."""
    spread = TopologySpread("unknown", 1, "DoNotSchedule", LabelSelector({"test": "test"}))
    spreading = _workload("spreading", labels={"test": "test"}, topology_spread=(spread,))
    plan = _plan([spreading, _workload("plain")])
    (never,) = plan.never_running
    assert never.workload == "spreading" and never.pods == 1
    assert never.reason.startswith("workload 'spreading': its topology on 'unknown' has no domain")
    alone = _plan([_workload("plain")])
    assert plan.fleet.placed_count == alone.fleet.placed_count == 1
    assert plan.node_pool_limits == alone.node_pool_limits
    with pytest.raises(SizingInputError, match="workload 'spreading': its topology on 'unknown' has no domain"):
        _plan([spreading])


# -- custom labels ------------------------------------------------------------------------------

CUSTOM = "kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go"
TEST_KEY = "test-key"


def _custom(pool_requirement=None, template=None, pod_expression=None, node_selector=None):
    requirements = M5 + ((pool_requirement,) if pool_requirement else ())
    pool = NodePoolSpec(requirements=requirements, labels=template or {})
    terms = ((LabelExpression(*pod_expression),),) if pod_expression else ()
    pod = Workload(
        "pod",
        100,
        128,
        replicas=1,
        max_surge=0,
        node_selector=node_selector or {},
        scheduling=PodScheduling(required_node_terms=terms),
    )
    return _plan([pod], pool=pool)


TEST_VALUE_IN_POOL = {"key": TEST_KEY, "operator": "In", "values": ["test-value"]}


@pytest.mark.parametrize(
    "pool_requirement, template, pod_expression, node_selector, label",
    [
        # Describe("Custom Constraints"), Context("NodePool with Labels")
        (None, {TEST_KEY: "test-value"}, None, None, "test-value"),
        (None, {TEST_KEY: "test-value"}, (TEST_KEY, "In", ("test-value", "another-value")), None, "test-value"),
        # Context("Scheduling Logic")
        (None, None, (TEST_KEY, "NotIn", ("test-value",)), None, None),
        (None, None, (TEST_KEY, "DoesNotExist"), None, None),
        (TEST_VALUE_IN_POOL, None, None, None, "test-value"),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "In", ("test-value",)), None, "test-value"),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "Exists"), None, "test-value"),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "NotIn", ("another-value",)), None, "test-value"),
    ],
    ids=[
        "should schedule unconstrained pods that don't have matching node selectors (template label)",
        "should schedule pods that have matching requirements",
        "should schedule pods that have node selectors with NotIn operator and undefined key",
        "should schedule pods that with DoesNotExists operator and undefined key",
        "should schedule unconstrained pods that don't have matching node selectors (requirement)",
        "should schedule pods that have node selectors with matching value and In operator",
        "should schedule the pod with Exists operator and defined key",
        "should schedule pods that have node selectors with different value and NotIn operator",
    ],
)
def test_custom_labels_that_schedule(pool_requirement, template, pod_expression, node_selector, label):
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, Describe("Custom
    Constraints"): the `It`s named in the ids. A custom requirement or template label narrows no instance
    type; the node carries the label."""
    plan = _custom(pool_requirement, template, pod_expression, node_selector)
    (node,) = plan.fleet.nodes
    assert node.pods == {"pod": 1}
    assert node.labels.get(TEST_KEY) == label


@pytest.mark.parametrize(
    "pool_requirement, template, pod_expression, node_selector",
    [
        (None, {TEST_KEY: "test-value"}, None, {TEST_KEY: "different-value"}),
        (None, None, None, {TEST_KEY: "test-value"}),
        (None, {TEST_KEY: "test-value"}, (TEST_KEY, "In", ("another-value",)), None),
        (None, None, (TEST_KEY, "In", ("test-value",)), None),
        (None, None, (TEST_KEY, "Exists"), None),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "NotIn", ("test-value",)), None),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "DoesNotExist"), None),
        (TEST_VALUE_IN_POOL, None, (TEST_KEY, "In", ("another-value",)), None),
    ],
    ids=[
        "should not schedule pods that have conflicting node selectors",
        "should not schedule pods that have node selectors with undefined key",
        "should not schedule pods that have conflicting requirements",
        "should not schedule pods that have node selectors with In operator and undefined key",
        "should not schedule pods that have node selectors with Exists operator and undefined key",
        "should not schedule pods that have node selectors with matching value and NotIn operator",
        "should not schedule the pod with DoesNotExists operator and defined key",
        "should not schedule pods that have node selectors with different value and In operator",
    ],
)
def test_custom_labels_that_do_not_schedule(pool_requirement, template, pod_expression, node_selector):
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, Describe("Custom
    Constraints"): the `It`s named in the ids. Karpenter leaves the pod pending; the planner refuses the
    workload, naming the label."""
    with pytest.raises(SizingInputError) as error:
        _custom(pool_requirement, template, pod_expression, node_selector)
    assert TEST_KEY in str(error.value) and "pending" in str(error.value)


def _two_pods(second_operator, second_value):
    pool = NodePoolSpec(
        requirements=M5 + ({"key": TEST_KEY, "operator": "In", "values": ["test-value", "another-value"]},)
    )
    first = _workload("first", required_node_terms=((LabelExpression(TEST_KEY, "In", ("test-value",)),),))
    second = _workload("second", required_node_terms=((LabelExpression(TEST_KEY, second_operator, (second_value,)),),))
    plan = _plan([first, second], pool=pool)
    assert not plan.fleet.pending
    return {workload: (node.name, node.labels[TEST_KEY]) for node in plan.fleet.nodes for workload in node.pods}


def test_compatible_custom_labels_share_a_node():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, Context("Scheduling Logic"):
    It("should schedule compatible pods to the same node")."""
    placed = _two_pods("NotIn", "another-value")
    assert placed["first"] == placed["second"] and placed["first"][1] == "test-value"


def test_incompatible_custom_labels_go_to_different_nodes():
    """kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, Context("Scheduling Logic"):
    It("should schedule incompatible pods to the different node")."""
    placed = _two_pods("In", "another-value")
    assert placed["first"][0] != placed["second"][0]
    assert (placed["first"][1], placed["second"][1]) == ("test-value", "another-value")
