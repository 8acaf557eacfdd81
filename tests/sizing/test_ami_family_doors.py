"""The AMI family filters a NodePool's instance types the same way through both doors: a workload
description (AL2023 unless `nodePool.amiFamily` says otherwise, as this project deploys) and
Kubernetes objects (the EC2NodeClass's family; AL2023 when the class is not given)."""

import textwrap

import pytest

from sizing.errors import SizingInputError
from sizing.kube.objects import read_objects
from sizing.planning.description import plan_input_from_document
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import plan_capacity
from tests.sizing.node_pools import node_class_yaml, node_pool_yaml

A1_ONLY = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["a1"]}]
WORKLOAD = {"name": "web", "requests": {"cpu": "100m", "memory": "64Mi"}, "maxReplicas": 2}
OBJECTS = node_pool_yaml(
    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["a1"]}
) + textwrap.dedent("""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: web, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
""")


def _refusal(plan_input):
    with pytest.raises(SizingInputError) as error:
        plan_capacity(plan_input)
    return str(error.value)


def test_an_a1_only_node_pool_is_refused_the_same_way_through_both_doors():
    description = plan_input_from_document({"nodePool": {"requirements": A1_ONLY}, "workloads": [WORKLOAD]})
    with_class = plan_input_from_objects(read_objects([("objects", OBJECTS + node_class_yaml("al2023@latest"))]))
    without_class = plan_input_from_objects(read_objects([("objects", OBJECTS)]))
    assert description.node_pool.ami_family == with_class.node_pool.ami_family == without_class.node_pool.ami_family
    expected = "no instance type is left that AMI family AL2023 can launch"
    assert expected in _refusal(description)
    assert expected in _refusal(with_class)
    assert expected in _refusal(without_class)


def test_another_family_launches_a1_through_both_doors():
    description = plan_input_from_document(
        {"nodePool": {"requirements": A1_ONLY, "amiFamily": "AL2"}, "workloads": [WORKLOAD]}
    )
    objects = plan_input_from_objects(read_objects([("objects", OBJECTS + node_class_yaml("al2@latest"))]))
    for plan_input in (description, objects):
        plan = plan_capacity(plan_input)
        assert plan.node_pool_limits and all(node.instance_type.startswith("a1.") for node in plan.fleet.nodes)


def test_an_unknown_family_in_a_description_is_refused_naming_the_allowed_ones():
    with pytest.raises(SizingInputError) as error:
        plan_input_from_document({"nodePool": {"amiFamily": "al2023"}, "workloads": [WORKLOAD]})
    assert str(error.value) == (
        "nodePool.amiFamily must be one of ['AL2', 'AL2023', 'Bottlerocket', 'Custom', 'Windows2019', "
        "'Windows2022', 'Windows2025'] (an EC2NodeClass amiFamily), got 'al2023'"
    )
