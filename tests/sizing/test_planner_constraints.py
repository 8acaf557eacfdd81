"""The planner with pod-level constraints, several NodePools, taints, template labels, DaemonSet
compatibility and AMI families (first principles, and upstream cases where cited)."""

from collections import Counter

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import load_catalog
from sizing.kube.scheduling import (
    HOSTNAME_KEY,
    ZONE_KEY,
    LabelExpression,
    LabelSelector,
    PodAffinityTerm,
    PodScheduling,
    Taint,
    Toleration,
    TopologySpread,
)
from sizing.kube.workloads import DaemonSet, Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, node_options, plan_capacity

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)
APP = {"app": "web"}


def _plan(workloads, pool=NodePoolSpec(requirements=M5), **kwargs):
    kwargs.setdefault("solver_work_limit", None)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=pool, **kwargs))


def _web(replicas=12, **scheduling):
    return Workload("web", 100, 128, replicas=replicas, max_surge=0, scheduling=PodScheduling(labels=APP, **scheduling))


def test_required_hostname_anti_affinity_needs_one_node_per_replica():
    anti = PodAffinityTerm(HOSTNAME_KEY, LabelSelector(APP), anti=True)
    plan = _plan([_web(pod_affinity=(anti,))])
    assert len(plan.fleet.nodes) == 12 and not plan.fleet.pending
    # The limits cover the twelve nodes.
    assert plan.limits.cpu_millicores >= 12 * 2000


def test_zone_spread_over_three_zones_reaches_every_zone():
    spread = TopologySpread(ZONE_KEY, 1, "DoNotSchedule", LabelSelector(APP))
    plan = _plan([_web(6, topology_spread=(spread,))], zones=("us-east-1a", "us-east-1b", "us-east-1c"))
    per_zone = Counter(node.zones[0] for node in plan.fleet.nodes for _ in range(node.pods["web"]))
    assert sorted(per_zone.values()) == [2, 2, 2]
    assert any("optimal fleet was not computed" in note for note in plan.notes) or plan.optimal is None


def test_zone_topology_without_known_zones_is_refused():
    spread = TopologySpread(ZONE_KEY, 1, "DoNotSchedule", LabelSelector(APP))
    with pytest.raises(SizingInputError, match="zone topology needs the zones"):
        _plan([_web(6, topology_spread=(spread,))])


def test_a_pod_selecting_a_template_label_lands_on_that_node_pool():
    data = NodePoolSpec(requirements=M5, name="data", labels={"team": "data"}, weight=10)
    general = NodePoolSpec(requirements=M5, name="general", weight=50)
    pinned = Workload("etl", 500, 512, replicas=3, max_surge=0, node_selector={"team": "data"})
    free = Workload("api", 500, 512, replicas=3, max_surge=0)
    plan = _plan([pinned, free], pool=general, other_node_pools=(data,))
    pools = {(node.node_pool, workload) for node in plan.fleet.nodes for workload in node.pods}
    # etl needs the label; api, with no selector, may share etl's in-flight NodeClaim.
    assert ("data", "etl") in pools and ("general", "etl") not in pools


def test_pods_without_a_toleration_never_land_on_a_tainted_pool():
    taint = Taint("dedicated", "NoSchedule", "gpu")
    tainted = NodePoolSpec(requirements=M5, name="tainted", taints=(taint,), weight=100)
    plain = NodePoolSpec(requirements=M5, name="plain")
    # batch is larger, so it is scheduled first and opens a NodeClaim on the heavier tainted pool.
    tolerant = Workload(
        "batch",
        600,
        512,
        replicas=2,
        max_surge=0,
        scheduling=PodScheduling(tolerations=(Toleration("dedicated", "Equal", "gpu", "NoSchedule"),)),
    )
    plan = _plan(
        [Workload("api", 500, 512, replicas=2, max_surge=0), tolerant], pool=plain, other_node_pools=(tainted,)
    )
    placed = {(node.node_pool, workload) for node in plan.fleet.nodes for workload in node.pods}
    assert ("tainted", "api") not in placed and ("plain", "api") in placed
    assert ("tainted", "batch") in placed


def test_required_node_affinity_terms_are_tried_in_order():
    """upstream preferences.go: a failing first required term is dropped and the next one tried."""
    impossible = (LabelExpression("karpenter.k8s.aws/instance-family", "In", ("c5",)),)
    m5 = (LabelExpression("karpenter.k8s.aws/instance-family", "In", ("m5",)),)
    plan = _plan([_web(2, required_node_terms=(impossible, m5))])
    assert not plan.fleet.pending and plan.fleet.nodes[0].instance_type.startswith("m5.")


def test_daemon_sets_count_on_nodes_whose_pool_labels_they_select():
    """upstream v1.14 (kubernetes-sigs/karpenter#2975): DaemonSets compatible with the NodePool count
    on its nodes, including selectors on the NodePool name, template labels, zone and capacity type."""
    pool = NodePoolSpec(requirements=M5, name="web", labels={"team": "web"})
    selecting = (
        DaemonSet("by-pool", 300, 0, node_selector={"karpenter.sh/nodepool": "web"}),
        DaemonSet("by-label", 200, 0, node_selector={"team": "web"}),
        DaemonSet("by-capacity", 100, 0, node_selector={"karpenter.sh/capacity-type": "on-demand"}),
        DaemonSet("elsewhere", 999, 0, node_selector={"team": "other"}),
    )
    base = PlanInput(workloads=(_web(1),), node_pool=pool, daemon_sets=(), solver_work_limit=None)
    with_ds = PlanInput(workloads=(_web(1),), node_pool=pool, daemon_sets=selecting, solver_work_limit=None)
    before = {o.name: o.daemon_overhead for o in node_options(base)}
    after = {o.name: o.daemon_overhead for o in node_options(with_ds)}
    assert after["m5.large"].cpu - before["m5.large"].cpu == 600
    assert after["m5.large"].pods - before["m5.large"].pods == 3


def test_al2023_node_class_cannot_launch_a1_types():
    """aws/karpenter-provider-aws v1.14.1 compatibility.go amiFamilyCheck: a1.* is not offered on AL2023."""
    a1 = (
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["a1", "m6g"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
    )
    al2 = NodePoolSpec(requirements=a1, ami_family="AL2")
    names = {o.name for o in node_options(PlanInput(workloads=(_web(1),), node_pool=al2))}
    assert any(n.startswith("a1.") for n in names) and any(i.name.startswith("a1.") for i in load_catalog())
    # AL2023 is also what a NodePoolSpec assumes when it is not told.
    for pool in (NodePoolSpec(requirements=a1, ami_family="AL2023"), NodePoolSpec(requirements=a1)):
        al2023 = {o.name for o in node_options(PlanInput(workloads=(_web(1),), node_pool=pool))}
        assert al2023 and not any(n.startswith("a1.") for n in al2023)


def test_pools_limits_nodes_overflow_to_the_next_pool():
    first = NodePoolSpec(requirements=M5, name="first", weight=90)
    second = NodePoolSpec(requirements=M5, name="second", limits={"nodes": 1}, weight=100)
    anti = PodAffinityTerm(HOSTNAME_KEY, LabelSelector(APP), anti=True)
    plan = _plan([_web(3, pod_affinity=(anti,))], pool=first, other_node_pools=(second,))
    assert Counter(node.node_pool for node in plan.fleet.nodes) == {"second": 1, "first": 2}
