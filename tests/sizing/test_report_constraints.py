"""The text report names each node's NodePool when there are several, and the soft constraints
the simulation relaxed."""

from sizing.kube.scheduling import HOSTNAME_KEY, LabelSelector, PodAffinityTerm, PodScheduling
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import plan_data, render_report

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)


def _plan(**kwargs):
    prefer = PodAffinityTerm(HOSTNAME_KEY, LabelSelector({"app": "missing"}), anti=False, weight=10)
    web = Workload(
        "web",
        500,
        512,
        replicas=2,
        max_surge=0,
        scheduling=PodScheduling(labels={"app": "web"}, pod_affinity=(prefer,)),
    )
    return plan_capacity(PlanInput(workloads=(web,), solver_work_limit=None, **kwargs))


def test_report_lists_relaxed_soft_constraints():
    plan = _plan(node_pool=NodePoolSpec(requirements=M5))
    text = render_report(plan)
    assert "Soft constraints Karpenter relaxes for web (as it does without limits): preferred pod affinity term" in text
    assert plan_data(plan)["fleet"]["relaxed"] == {"web": ["preferred pod affinity term"]}
    # One NodePool: the node rows do not repeat its name.
    rows = text.split("Fleet at peak")[1].split("\n\n")[1]
    assert rows.startswith("nodeclaim-1") and "NodePool" not in rows


def test_report_names_each_nodes_pool_when_there_are_several():
    heavy = NodePoolSpec(requirements=M5, name="heavy", weight=50, limits={"cpu": "2"})
    light = NodePoolSpec(requirements=M5, name="light")
    plan = _plan(node_pool=light, other_node_pools=(heavy,))
    text = render_report(plan)
    pools = {node.node_pool for node in plan.fleet.nodes}
    for pool in pools:
        assert f", NodePool {pool}" in text
    assert [n["nodePool"] for n in plan_data(plan)["fleet"]["nodes"]] == [n.node_pool for n in plan.fleet.nodes]
