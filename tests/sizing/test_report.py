"""The plan report: text (eks-node-viewer-like) and JSON carry the same plan, figure by figure."""

import json
import re

import pytest

from sizing.karpenter.catalog import InstanceType
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import plan_data, render_report, render_text


def m5(size, vcpu, memory_mib, enis, ips, price):
    return InstanceType(
        f"m5.{size}", "m", "m5", 5, size, "amd64", "nitro", vcpu, memory_mib, enis, ips, 0, {"us-east-1": price}
    )


CATALOG = (m5("large", 2, 8192, 3, 10, 0.096), m5("xlarge", 4, 16384, 4, 15, 0.192))
ONLY_LARGE = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},)


def plan_for(workloads, requirements=ONLY_LARGE, region="us-east-1", limits=None, **options):
    options.setdefault("solver_work_limit", None)
    return plan_capacity(
        PlanInput(
            workloads=tuple(workloads),
            node_pool=NodePoolSpec(requirements=requirements, limits=limits or {}),
            region=region,
            catalog=CATALOG,
            **options,
        )
    )


def test_the_dev_stack_plan_reads_like_eks_node_viewer():
    # 10 replicas x 100m with 100 % surge: 20 pods. An m5.large has 1930m allocatable, less
    # 125m of DaemonSets: 18 pods fit on the first node, 2 on the second.
    plan = plan_for([Workload("test-app", 100, 64, replicas=10, max_surge="100%")])
    text = render_report(plan)
    rows = re.findall(r"^(nodeclaim-\d+) cpu +[█░]+ +(\d+)% \((\d+) pods\) +(\S+)", text, re.MULTILINE)
    assert rows == [("nodeclaim-1", "100", "18", "m5.large/0.0960"), ("nodeclaim-2", "17", "2", "m5.large/0.0960")]
    assert len(re.findall(r"^ +memory [█░]+", text, re.MULTILINE)) == 2
    assert "2 nodes (2250m/3860m)" in text and "0.192 USD/hour | 140.16 USD/month" in text
    assert "Pods: 10 at peak (HPA maxReplicas) + 10 rollout surge = 20 (test-app: 10 + 10)" in text
    # Limits: the rollout and the disruption need two m5.large (4 cores, 15154Mi -> 15Gi);
    # + 10 %: 4.4 -> 5 cores, 16.5 -> 17Gi.
    assert '  limits:\n    cpu: "5"\n    memory: 17Gi\n' in text
    assert re.search(
        r"^  rollout +20 pods: 2 nodes \(2 × m5\.large\): 4 cpu, 15154Mi  ← sets the cpu and memory limit: "
        r"decides as without limits from 4 cpu, 15360Mi \(15Gi\) up$",
        text,
        re.MULTILINE,
    )
    assert re.search(r"^  peak +10 pods: 1 node \(1 × m5\.large\): 2 cpu, 7577Mi$", text, re.MULTILINE)
    assert "Pending pods under the planned limits: none" in text
    assert "Recommendation: keep the NodePool as it is: 2 nodes, 0.192 USD/hour" in text


def test_json_carries_the_same_plan():
    plan = plan_for([Workload("test-app", 100, 64, replicas=10, max_surge="100%")])
    data = json.loads(json.dumps(plan_data(plan)))
    assert data == plan_data(plan)
    assert data["limits"]["spec"] == {"cpu": "5", "memory": "17Gi"} == plan.node_pool_limits
    assert data["limits"]["minimum"] == {"cpu": 4000, "memory": 15 * 1024}
    assert data["limits"]["bindingScenario"] == {"cpu": "rollout", "memory": "rollout"}
    assert {name: run["nodeCount"] for name, run in data["scenarios"].items()} == {
        "peak": 1,
        "hpa-ramp": 1,
        "rollout": 2,
        "disruption": 2,
    }
    assert data["pods"] == {"peak": 10, "surge": 10, "withSurge": 20}
    assert {name: run["pods"] for name, run in data["scenarios"].items()} == {
        "peak": 10,
        "hpa-ramp": 10,
        "rollout": 20,
        "disruption": 10,
    }
    assert [n["pods"] for n in data["fleet"]["nodes"]] == [18, 2]
    assert data["fleet"]["nodes"][0]["requested"] == {"cpu": 1925, "memory": 1152, "pods": 21}
    assert data["fleet"]["cost"] == pytest.approx(0.192)
    assert data["recommendation"]["chosen"]["kind"] == "current"
    assert data["priceUnit"] == "USD/hour" and data["notes"] == []


def test_current_limits_that_are_too_small_are_reported_with_what_they_change():
    # The reference setup's limits (cpu 1000) are plenty; cpu 2 allows one m5.large only: the
    # peak's ten pods fit on it and the rollout's surge leaves two pending. A drifted node is still
    # replaced at the limit (the pool runs one node over it until the old node goes).
    plan = plan_for([Workload("test-app", 100, 64, replicas=10, max_surge="100%")], limits={"cpu": "2"})
    text = render_report(plan)
    assert "Current limits (cpu: 2) change what Karpenter decides:\n  rollout: test-app: 2 more pods pending" in text
    data = plan_data(plan)
    assert data["currentLimits"]["keepsDecisions"] is False
    assert list(data["currentLimits"]["changes"]) == ["rollout"]
    (change,) = data["currentLimits"]["changes"]["rollout"]
    assert (change["kind"], change["pods"], change["withoutLimits"]) == ("pending", 2, 0)
    enough = plan_for([Workload("test-app", 100, 64, replicas=10, max_surge="100%")], limits={"cpu": "1000"})
    assert "Current limits (cpu: 1000) keep every scenario's decisions." in render_report(enough)


def test_a_region_without_prices_reports_capacity_units_and_says_why():
    plan = plan_for([Workload("web", 500, 512, replicas=4)], region="eu-west-3")
    text = render_report(plan)
    assert "vCPU-equivalent" in text and "USD/month" not in text
    assert any("capacity units" in note for note in plan.notes)
    assert "Note: no on-demand prices for eu-west-3" in text
    assert plan_data(plan)["priceUnit"] == "vCPU-equivalent"


def test_a_recommendation_comes_with_its_requirement_and_limits():
    # Both sizes allowed, pods of 1500m: the first claim narrows to m5.xlarge for two pods
    # ($0.192), the third pod opens a claim that launches m5.large ($0.096): $0.288 with two
    # pods on one node. Only m5.large: one pod per node, three nodes, also $0.288. With at
    # most one pod per node, only the restriction keeps within the cap.
    both = ({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},)
    plan = plan_for([Workload("batch", 1500, 512, replicas=3, max_surge=0)], requirements=both, max_pods_per_node=1)
    text = render_report(plan)
    assert plan.recommendation.chosen.restriction.label == "m5.large"
    assert "Recommendation: restrict to m5.large: 3 nodes, 0.288 USD/hour, ≤ 1 pods per node" in text
    # "now" is the fleet shown at the top: the rollout under the planned limits.
    assert "(now: 2 nodes, 0.288 USD/hour, ≤ 2 pods per node)" in text
    assert "2 nodes (" in text.split("\n\n")[1]
    assert (
        "add to the NodePool requirements: {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}"
        in text
    )
    assert plan.recommended_limits is not None
    assert plan_data(plan)["recommendation"]["limits"]["spec"] == plan.recommended_limits.spec()


def test_long_fleets_are_cut_in_the_text_but_complete_in_json():
    plan = plan_for([Workload("many", 1000, 64, replicas=30, max_surge=0)])
    text = render_report(plan, max_rows=5)
    assert len(re.findall(r"^nodeclaim-\d+ +cpu", text, re.MULTILINE)) == 5
    assert "… and 25 more nodes" in text
    assert len(plan_data(plan)["fleet"]["nodes"]) == 30


def test_running_nodes_take_pods_first_and_only_nodepool_nodes_count_in_the_limits():
    # A managed node group node (m5.xlarge, 3920m allocatable, 500m and 5 pods bound) has
    # room for 34 pods of 100m: all 20 peak pods land there, nothing is launched. The limits
    # are then the floor of 1 core and 1 GiB, + 10 % rounded up: 2 cores, 2Gi (no m5.large fits:
    # the NodePool launches nothing, which is what every scenario needs).
    from sizing.kube.resources import Resources
    from sizing.kube.workloads import ExistingNode

    node = ExistingNode("ng-node-1", "m5.xlarge", Resources(500, 1024, 5), in_node_pool=False)
    plan = plan_for(
        [Workload("test-app", 100, 64, replicas=10, max_surge="100%", node_selector={"kubernetes.io/arch": "amd64"})],
        existing_nodes=(node,),
    )
    assert [(n.name, n.pod_count, n.existing) for n in plan.fleet.nodes] == [("ng-node-1", 20, True)]
    assert plan.node_pool_limits == {"cpu": "2", "memory": "2Gi"}
    assert all(run.usage.pods == 0 for run in plan.scenarios.values())
    assert "ng-node-1 cpu" in render_report(plan) and "on-demand, running" in render_report(plan)


def test_the_gap_to_the_solvers_fleet_is_reported():
    # Three 1500m pods on m5.large (1805m free after DaemonSets) or m5.xlarge (3795m).
    # Karpenter: one m5.xlarge with two pods and one m5.large: $0.288. No fleet is cheaper
    # (three m5.large cost the same; one m5.xlarge cannot hold 4500m), but the simple bound
    # ($0.228) does not prove it, so the solver runs.
    both = ({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},)
    plan = plan_for([Workload("batch", 1500, 512, replicas=3, max_surge=0)], requirements=both, solver_work_limit=2000)
    assert plan.optimal is not None
    assert plan.optimal.cost == pytest.approx(0.288)
    assert plan.optimal.lower_bound_cost <= plan.optimal.cost + 1e-9
    assert plan.gap.cost == pytest.approx(0.0) and plan.gap.percent == pytest.approx(0.0)
    text = render_report(plan)
    assert f"the fleet above launches nodes for ({plan.optimal.status}): " in text
    assert "Gap: Karpenter launches +0 nodes and +0.000 USD/hour (0.0 %) against the optimal fleet" in text
    assert plan_data(plan)["optimal"]["cost"] == pytest.approx(0.288)


def test_candidates_left_by_the_recommendation_budget_are_counted_and_noted():
    from benchmarks.scale import workloads

    plan = plan_capacity(
        PlanInput(workloads=workloads(300, spread=False), solver_work_limit=None, max_pods_per_node=30)
    )
    data = plan_data(plan)["recommendation"]
    assert data["candidatesSimulated"] == 9 and data["candidatesLeftByBudget"] > 0
    assert f"{data['candidatesLeftByBudget']} more were left unsimulated" in render_report(plan)


def _numbers(value):
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [value]
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return []


def _derivable(data):
    """Every number of the JSON, and what the text derives from them: a cost per month (× 730),
    cores (/ 1000), GiB (/ 1024), and a share of one figure in another (requests over allocatable)."""
    numbers = sorted(set(_numbers(data)))
    found = set(numbers)
    for value in numbers:
        found |= {value * 730, value / 1000, value / 1024}
        found |= {100 * value / other for other in numbers if other}
    return found


def _shown_by(figure, candidates):
    decimals = len(figure.split(".")[1]) if "." in figure else 0
    return any(f"{candidate:.{decimals}f}" == figure for candidate in candidates)


@pytest.mark.parametrize("limits", [None, {"cpu": "2"}])
def test_the_text_is_rendered_from_the_json_alone(limits):
    """Every figure of the text comes from the JSON: the text rendered from the JSON as printed
    (serialised and read back) is the report, changing a figure in the JSON changes the text, and
    each figure the text shows is a JSON figure or derived from JSON figures."""
    plan = plan_for(
        [Workload("test-app", 100, 64, replicas=10, max_surge="100%")], limits=limits, solver_work_limit=2000
    )
    data = json.loads(json.dumps(plan_data(plan)))
    text = render_report(plan)
    assert render_text(data) == text
    for path in (("fleet", "cost"), ("limits", "minimum", "cpu"), ("scenarios", "rollout", "pods"), ("pods", "surge")):
        changed = json.loads(json.dumps(data))
        holder = changed
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = holder[path[-1]] * 7 + 3
        assert render_text(changed) != text, path
    candidates = _derivable(data)
    # Figures of names (m5.large, nodeclaim-1, test-app) are words, not figures.
    words = re.sub(r"[A-Za-z][\w.-]*[A-Za-z0-9]|\b\d+(?=[a-z-])", " ", text)
    figures = re.findall(r"(?<![\w.])\d+(?:\.\d+)?", words)
    assert figures and [f for f in figures if not _shown_by(f, candidates)] == []
