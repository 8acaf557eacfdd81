"""The Kubernetes objects a stack's capacity plan reads.

They are the objects the stack deploys, built by the functions its components register them
with: the test app's objects (its Deployment and HorizontalPodAutoscaler are what the planner
reads), the NodePool before its limits are known and the EC2NodeClass. The shorthand entries of
`capacity.workloads` and `capacity.daemonSets` join them as the Deployments (each scaled by an
HPA up to its `maxReplicas`, from Kubernetes' default minReplicas of 1) and DaemonSets they stand
for. `python -m sizing plan` given the deployed manifests reads the same objects, so it
plans what the stack plans.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.planning.description_model import DaemonSetEntry, WorkloadEntry
from stackobjects.app import NAME_LABEL, app_objects
from stackobjects.karpenter import DEFAULT_NODE_CLASS_NAME, ec2_node_class, node_pool_to_plan

# The node role is named by AWS when it is created. The plan reads the class's AMI and kubelet
# settings, which decide what a node can hold; the role changes nothing there.
ROLE_BEFORE_DEPLOY = "node-role-named-at-deploy"


def planned_objects(config: Any, zones: Sequence[str] = ()) -> list[dict]:
    """The objects to plan `config` from. zones: the zones the NodePool may use when
    `nodePool.zones` is unset (empty when they are not known, which leaves the NodePool's zone
    requirement out)."""
    pool = config.node_pool
    node_pool_zones = list(pool.zones) if pool.zones is not None else list(zones)
    objects = []
    if config.deploy_test_app:
        objects += app_objects(
            config.app, nodepool_name=pool.name, vpc_cidr=config.network.cidr, tags=config.resource_tags
        )
    objects.append(node_pool_to_plan(pool, zones=node_pool_zones, node_class_name=DEFAULT_NODE_CLASS_NAME))
    karpenter = config.addons.karpenter
    objects.append(
        ec2_node_class(
            name=DEFAULT_NODE_CLASS_NAME,
            role_name=ROLE_BEFORE_DEPLOY,
            cluster_name=config.cluster_name,
            ami_alias=karpenter.ami_alias,
            tags=config.resource_tags,
            volume_size_gi=karpenter.root_volume_size,
        )
    )
    for entry in config.capacity.workloads:
        objects += [workload_deployment(entry), workload_autoscaler(entry)]
    objects += [daemon_set_object(entry) for entry in config.capacity.daemon_sets]
    return objects


def workload_deployment(entry: WorkloadEntry) -> dict:
    """A `capacity.workloads` entry as a Deployment: `maxReplicas` pods with the entry's requests,
    rolling out with its `maxSurge`, on the nodes its `nodeSelector` names."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": entry.name},
        "spec": {
            "replicas": entry.max_replicas,
            "selector": {"matchLabels": {NAME_LABEL: entry.name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": entry.max_surge}},
            "template": _pod_template(
                entry.name, entry.requests.model_dump(exclude_none=True, by_alias=True), entry.node_selector
            ),
        },
    }


def workload_autoscaler(entry: WorkloadEntry) -> dict:
    """The HPA a `capacity.workloads` entry stands for: up to `maxReplicas`, from one replica."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": entry.name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": entry.name},
            "minReplicas": 1,
            "maxReplicas": entry.max_replicas,
        },
    }


def daemon_set_object(entry: DaemonSetEntry) -> dict:
    """A `capacity.daemonSets` entry as a DaemonSet: one pod with its requests on every node it selects."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": entry.name},
        "spec": {
            "selector": {"matchLabels": {NAME_LABEL: entry.name}},
            "template": _pod_template(
                entry.name, entry.requests.model_dump(exclude_none=True, by_alias=True), entry.node_selector
            ),
        },
    }


def _pod_template(name: str, requests: dict, node_selector: dict) -> dict:
    spec: dict = {"containers": [{"name": "main", "resources": {"requests": requests}}]}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {"metadata": {"labels": {NAME_LABEL: name}}, "spec": spec}
