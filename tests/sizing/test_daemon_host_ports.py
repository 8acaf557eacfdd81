"""DaemonSet host ports: a DaemonSet pod binding port P takes P on every node it runs on, so a
workload pod binding P never lands there. Karpenter (kubernetes-sigs/karpenter v1.14
`scheduler.go` buildDaemonOverheadGroups, `nodeclaim.go` filterInstanceTypesByRequirements)
skips the instance types whose compatible DaemonSets conflict with the pod's host ports."""

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.simulation import NodeOption, NodePoolModel, PodGroup, RunningNode, Scenario, simulate
from sizing.kube.resources import Resources
from sizing.kube.scheduling import HostPort, PodScheduling
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity

PORT = ("TCP", 9100)
FREE = NodeOption("free", Resources(4000, 8192, 110), Resources(4000, 8192, 110), price=2.0)
EXPORTER = NodeOption("exporter", Resources(4000, 8192, 110), Resources(4000, 8192, 110), price=1.0,
                      daemon_ports=frozenset({PORT}))


def _pods(count, ports=frozenset({PORT})):
    return PodGroup("agent", Resources(100, 128, 1), count, host_ports=ports)


def test_a_pod_binding_a_daemon_port_skips_the_types_running_that_daemon():
    result = simulate(Scenario(node_options=(EXPORTER, FREE), pod_groups=(_pods(2),)))
    assert not result.pending
    # The cheaper type runs the exporter DaemonSet on 9100; both pods go to the dearer free type,
    # one per node (two pods binding 9100 never share a node).
    assert [node.instance_type for node in result.nodes] == ["free", "free"]
    # A pod on another port, or on UDP 9100, may use the cheaper type.
    other = simulate(Scenario(node_options=(EXPORTER, FREE), pod_groups=(_pods(1, frozenset({("UDP", 9100)})),)))
    assert [node.instance_type for node in other.nodes] == ["exporter"]


def test_no_type_free_of_the_daemon_port_leaves_the_pod_pending_with_the_port_named():
    pools = (NodePoolModel("default", (EXPORTER,)),)
    result = simulate(Scenario(node_options=(EXPORTER,), pod_groups=(_pods(1),), node_pools=pools))
    assert result.pending_count == 1 and not result.nodes
    assert "9100/TCP" in result.pending[0].reason and "DaemonSet" in result.pending[0].reason


def test_a_running_node_with_the_daemon_port_is_passed_over():
    running = RunningNode("old", EXPORTER, zone=None)
    result = simulate(Scenario(node_options=(FREE,), pod_groups=(_pods(1),), running_nodes=(running,)))
    assert [node.instance_type for node in result.new_nodes] == ["free"]
    assert result.nodes[0].pod_count == 0


M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)


def _agent(**scheduling):
    return Workload("agent", 100, 128, replicas=2, max_surge=0,
                    scheduling=PodScheduling(labels={"app": "agent"}, host_ports=(HostPort(9100),), **scheduling))


def _exporter(**kwargs):
    return DaemonSet("node-exporter", 10, 32, scheduling=PodScheduling(host_ports=(HostPort(9100),)), **kwargs)


def test_planner_refuses_a_workload_whose_host_port_a_daemon_set_binds_everywhere():
    with pytest.raises(SizingInputError, match=r"'agent': host port 9100/TCP is bound by DaemonSet node-exporter"):
        plan_capacity(PlanInput(workloads=(_agent(),), node_pool=NodePoolSpec(requirements=M5),
                                daemon_sets=DEFAULT_DAEMON_SETS + (_exporter(),),
                                solver_work_limit=None))


def test_planner_sends_the_pods_to_types_the_daemon_set_does_not_select():
    # The exporter runs only on m5.large (node selector), so the agent pods go to m5.xlarge.
    exporter = _exporter(node_selector={"node.kubernetes.io/instance-type": "m5.large"})
    plan = plan_capacity(PlanInput(workloads=(_agent(),), node_pool=NodePoolSpec(requirements=M5),
                                   daemon_sets=DEFAULT_DAEMON_SETS + (exporter,),
                                   solver_work_limit=None))
    assert not plan.fleet.pending
    assert {node.instance_type for node in plan.fleet.nodes if node.pods.get("agent")} == {"m5.xlarge"}
    # Without that DaemonSet the cheaper m5.large takes them.
    plain = plan_capacity(PlanInput(workloads=(_agent(),), node_pool=NodePoolSpec(requirements=M5),
                                    solver_work_limit=None))
    assert {node.instance_type for node in plain.fleet.nodes if node.pods.get("agent")} == {"m5.large"}
