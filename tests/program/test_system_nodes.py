"""The system nodes keep their pods to the add-ons: one IMDS hop, a taint only the add-ons tolerate.

Whether a pod may land on the system nodes is decided the way the scheduler does, with the
planner's own reading of pod specs (`sizing.kube`): the node group's labels against the pod's
node selector and required node affinity, its taints against the pod's tolerations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from offline.program import PROJECT_DIR
from sizing.kube.objects import read_parsed_objects
from sizing.kube.scheduling import Taint, Toleration, tolerates_all
from sizing.kube.workloads import Workload
from stackconfig.load import parse_stack_config
from stackobjects.planned import planned_objects

RELEASE = "kubernetes:helm.sh/v3:Release"
# The EKS API's taint effects, as Kubernetes shows them on the node.
EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
LOAD_TEST_JOB = Path(PROJECT_DIR) / "manifests" / "load-test" / "10-job.yaml"


def system_node(recording) -> tuple[dict[str, str], list[Taint]]:
    """The labels and taints every system node gets, from the recorded node group."""
    nodes = recording.one("eks:index:ManagedNodeGroup")
    labels = {"kubernetes.io/os": "linux", **nodes.input("labels")}
    taints = [
        Taint(taint["key"], EKS_EFFECTS[taint["effect"]], taint.get("value", ""))
        for taint in nodes.input("taints", None) or []
    ]
    return labels, taints


def selects(workload: Workload, labels: dict[str, str]) -> bool:
    """Whether the pod's node selector and required node affinity admit a node with `labels`."""
    if any(labels.get(key) != value for key, value in workload.node_selector.items()):
        return False
    terms = workload.scheduling.required_node_terms
    return not terms or any(all(expression.admits(labels) for expression in term) for term in terms)


def may_land(workload: Workload, recording) -> bool:
    labels, taints = system_node(recording)
    return selects(workload, labels) and tolerates_all(workload.scheduling.tolerations, taints)


def read_workloads(documents: list[dict]) -> dict[str, Workload]:
    return {w.name: w for w in read_parsed_objects([("objects", documents)]).workloads}


def test_the_system_nodes_answer_imds_one_hop_away(dev):
    # A pod is one hop past its node: it does not reach the metadata service, nor the node role.
    template = dev.one("aws:ec2/launchTemplate:LaunchTemplate", "cluster-system-nodes")
    assert template.input("metadataOptions.httpPutResponseHopLimit") == 1
    assert template.input("metadataOptions.httpTokens") == "required"


def test_karpenter_is_given_its_region(dev):
    # Under Pod Identity nothing else tells it: with one hop it cannot read it from IMDS.
    karpenter = dev.one(RELEASE, "addons-karpenter")
    assert {"name": "AWS_REGION", "value": "ap-northeast-1"} in karpenter.input("values.controller.env")
    assert dev.one(RELEASE, "addons-aws-load-balancer-controller").input("values.region") == "ap-northeast-1"


def test_the_system_nodes_carry_the_critical_addons_taint(dev):
    assert dev.one("eks:index:ManagedNodeGroup").input("taints") == [
        {"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"}
    ]


def _release_tolerations(recording) -> dict[str, list]:
    found = {
        chart: recording.one(RELEASE, f"addons-{chart}").input("values.tolerations")
        for chart in ("metrics-server", "aws-load-balancer-controller", "karpenter")
    }
    prometheus = recording.one(RELEASE, "monitoring-prometheus").input("values")
    found["prometheus-server"] = prometheus["server"]["tolerations"]
    found["kube-state-metrics"] = prometheus["kube-state-metrics"]["tolerations"]
    found["grafana"] = recording.one(RELEASE, "monitoring-grafana").input("values.tolerations")
    (coredns,) = [a for a in recording.of_type("aws:eks/addon:Addon") if a.input("addonName") == "coredns"]
    found["coredns"] = json.loads(coredns.input("configurationValues"))["tolerations"]
    return found


def test_every_add_on_on_the_system_nodes_tolerates_the_taint(dev):
    _, taints = system_node(dev)
    assert taints
    for chart, tolerations in _release_tolerations(dev).items():
        read = tuple(Toleration(t.get("key"), t["operator"], t.get("value", ""), t.get("effect")) for t in tolerations)
        assert tolerates_all(read, taints), chart


def test_the_test_app_cannot_land_on_the_system_nodes(dev):
    deployment = dev.one("kubernetes:apps/v1:Deployment")
    document = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": deployment.input("metadata"),
        "spec": deployment.input("spec"),
    }
    (app,) = read_workloads([document]).values()
    assert not may_land(app, dev)
    # Its node selector alone would keep it off; the taint does too, should the selector go.
    assert not tolerates_all(app.scheduling.tolerations, system_node(dev)[1])


def test_a_workload_without_the_toleration_cannot_land_there(dev):
    # A Deployment with no node selector at all, as `capacity.workloads` plans one: the system
    # nodes' labels admit it, and only the taint keeps it away.
    config = parse_stack_config(
        {
            "aws:region": "ap-northeast-1",
            "eks-autoscaling:deployTestApp": False,
            "eks-autoscaling:capacity": {
                "workloads": [{"name": "api", "requests": {"cpu": "250m", "memory": "256Mi"}, "maxReplicas": 2}]
            },
        }
    )
    documents = [obj for obj in planned_objects(config) if obj["kind"] == "Deployment"]
    (api,) = read_workloads(documents).values()
    labels, _ = system_node(dev)
    assert selects(api, labels)
    assert not may_land(api, dev)


@pytest.mark.parametrize("toleration", [{"key": "CriticalAddonsOnly", "operator": "Exists"}, {"operator": "Exists"}])
def test_only_a_workload_that_tolerates_it_may_land_there(dev, toleration):
    document = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main"}], "tolerations": [toleration]},
            },
        },
    }
    (agent,) = read_workloads([document]).values()
    assert may_land(agent, dev)


def test_the_load_generator_still_runs_on_the_system_nodes(dev):
    # It keeps off Karpenter's nodes, which leaves the system nodes: it tolerates their taint.
    job = yaml.safe_load(LOAD_TEST_JOB.read_text())
    (generator,) = read_workloads([job]).values()
    assert may_land(generator, dev)
