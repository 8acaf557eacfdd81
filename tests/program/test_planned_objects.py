"""What a stack's capacity plan reads: the objects the stack deploys, and its shorthand entries as objects."""

from __future__ import annotations

import pytest

from offline.program import PROJECT_DIR
from sizing.kube.objects import read_objects
from sizing.planning.description import daemon_set, workload
from stackconfig.errors import StackConfigError
from stackconfig.load import load_stack_file, parse_stack_config
from stackobjects.app import app_objects
from stackobjects.karpenter import node_pool
from stackobjects.planned import planned_objects
from stackplan.capacity import plan_for, plan_input_for_stack, plan_source

DEV_ZONES = ["ap-northeast-1a", "ap-northeast-1c"]


def _config(**sections):
    return parse_stack_config({"aws:region": "us-east-1", **{f"eks-autoscaling:{k}": v for k, v in sections.items()}})


def _by_kind(objects):
    found = {}
    for obj in objects:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def test_the_test_app_is_planned_from_the_objects_it_is_deployed_as():
    config = load_stack_file(PROJECT_DIR / "Pulumi.dev.yaml")
    planned = planned_objects(config, DEV_ZONES)
    deployed = app_objects(
        config.app, nodepool_name=config.node_pool.name, vpc_cidr=config.network.cidr, tags=config.resource_tags
    )
    assert planned[: len(deployed)] == deployed
    kinds = _by_kind(planned)
    assert [obj["metadata"]["name"] for obj in kinds["HorizontalPodAutoscaler"]] == ["test-app"]


def test_the_node_pool_is_planned_without_the_limits_the_plan_computes():
    config = load_stack_file(PROJECT_DIR / "Pulumi.dev.yaml")
    (pool,) = _by_kind(planned_objects(config, DEV_ZONES))["NodePool"]
    plan = plan_for(config, DEV_ZONES)
    deployed = node_pool(config.node_pool, zones=DEV_ZONES, limits=plan.node_pool_limits, node_class_name="default")
    assert "limits" not in pool["spec"]
    assert pool == {**deployed, "spec": {k: v for k, v in deployed["spec"].items() if k != "limits"}}


def test_the_node_class_gives_the_plan_its_ami_family():
    config = _config(addons={"karpenter": {"amiAlias": "al2023@v20260714"}})
    (node_class,) = _by_kind(planned_objects(config, ["us-east-1a"]))["EC2NodeClass"]
    assert node_class["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert plan_input_for_stack("dev", PROJECT_DIR).node_pool.ami_family == "AL2023"


def test_explicit_limits_are_planned_and_checked():
    config = _config(nodePool={"limits": {"cpu": "1"}})
    (pool,) = _by_kind(planned_objects(config, ["us-east-1a"]))["NodePool"]
    assert pool["spec"]["limits"] == {"cpu": "1"}
    with pytest.raises(
        StackConfigError,
        match=r"`nodePool.limits` \{'cpu': '1'\} change what Karpenter decides \(peak: test-app/test-app: 10 more pods pending",
    ):
        plan_for(config, ["us-east-1a"])


def test_without_the_test_app_only_the_capacity_workloads_are_planned():
    entry = {"name": "api", "requests": {"cpu": "500m", "memory": "1Gi"}, "maxReplicas": 4}
    config = _config(deployTestApp=False, capacity={"workloads": [entry]})
    kinds = _by_kind(planned_objects(config, ["us-east-1a"]))
    assert [obj["metadata"]["name"] for obj in kinds["Deployment"]] == ["api"]
    # The entry's maxReplicas is an HPA's: the HPA scales the Deployment from one replica.
    (hpa,) = kinds["HorizontalPodAutoscaler"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "api" and (
        hpa["spec"]["minReplicas"],
        hpa["spec"]["maxReplicas"],
    ) == (1, 4)
    assert "Ingress" not in kinds
    assert [w.name for w in plan_for(config, ["us-east-1a"]).input.workloads] == ["api"]


def test_capacity_entries_read_as_objects_are_the_entries_as_the_description_reads_them():
    workloads = [
        {"name": "api", "requests": {"cpu": "500m", "memory": "1Gi"}, "maxReplicas": 40, "maxSurge": "25%"},
        {
            "name": "batch",
            "requests": {"cpu": 2, "memory": "3Gi"},
            "maxReplicas": 3,
            "maxSurge": 0,
            "nodeSelector": {"karpenter.sh/capacity-type": "on-demand"},
        },
        {"name": "web", "requests": {"cpu": "250m", "memory": "512Mi"}, "maxReplicas": 6},
    ]
    daemon_sets = [
        {"name": "logs", "requests": {"cpu": "100m", "memory": "128Mi"}},
        {"name": "probe", "requests": {"memory": "32Mi"}, "nodeSelector": {"kubernetes.io/arch": "amd64"}},
        {"name": "idle"},
    ]
    config = _config(deployTestApp=False, capacity={"workloads": workloads, "daemonSets": daemon_sets})
    objects_yaml, _ = plan_source(config, ["us-east-1a"])
    read = read_objects([("objects", objects_yaml)])

    def fields(item):
        return (item.name, item.cpu_millicores, item.memory_mib, dict(item.node_selector))

    expected_workloads = [workload(entry) for entry in config.capacity.workloads]
    assert [(*fields(w), w.replicas, w.surge) for w in read.workloads] == [
        (*fields(w), w.replicas, w.surge) for w in expected_workloads
    ]
    assert [fields(d) for d in read.daemon_sets] == [fields(daemon_set(e)) for e in config.capacity.daemon_sets]
    assert read.unmodelled == ()


def test_the_stack_settings_reach_the_plan_input():
    config = _config(
        capacity={
            "headroomPercent": 25,
            "maxPodsPerNode": 7,
            "priceOverrides": {"m5.large": 0.2},
            "solverWorkLimit": 150,
        }
    )
    plan_input = plan_for(config, ["us-east-1a", "us-east-1b"]).input
    assert (
        plan_input.headroom_percent,
        plan_input.max_pods_per_node,
        dict(plan_input.price_overrides),
        plan_input.solver_work_limit,
    ) == (25, 7, {"m5.large": 0.2}, 150)
    assert (plan_input.region, plan_input.zones) == ("us-east-1", ("us-east-1a", "us-east-1b"))


def test_a_capacity_entrys_storage_request_is_planned_against_the_stacks_root_volume():
    # Five pods of 15Gi: the default 20Gi root volume (17Gi for pods) takes one node each; a 100Gi
    # volume (100 - 1 - 10 = 89Gi) holds them all, as the stack's EC2NodeClass gives the plan its volume.
    entry = {
        "name": "scratch",
        "requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "15Gi"},
        "maxReplicas": 5,
        "maxSurge": 0,
    }
    capacity = {"workloads": [entry], "solverWorkLimit": 50}
    small = _config(deployTestApp=False, capacity=capacity)
    (deployment,) = _by_kind(planned_objects(small, ["us-east-1a"]))["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["ephemeral-storage"] == "15Gi"
    assert plan_for(small, ["us-east-1a"]).input.node_pool.storage_bytes == 20 * 2**30
    assert len(plan_for(small, ["us-east-1a"]).fleet.new_nodes) == 5
    large = _config(deployTestApp=False, capacity=capacity, addons={"karpenter": {"rootVolumeSize": 100}})
    assert len(plan_for(large, ["us-east-1a"]).fleet.new_nodes) == 1
