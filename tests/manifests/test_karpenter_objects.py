"""The NodePool and EC2NodeClass: YAML defaults, the Provisioner mapping, presets and the CRDs' CEL rules."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sizing.karpenter.catalog import load_catalog
from sizing.karpenter.crd_rules import crd_rules, rule_violations
from sizing.karpenter.labels import AWS_WELL_KNOWN
from sizing.karpenter.requirements import filter_instance_types, parse_requirements
from stackconfig.ami import DEFAULT_AMI_ALIAS
from stackconfig.nodepool import NodePoolConfig
from stackobjects.app import load_manifest
from stackobjects.karpenter import (
    MANIFEST_DIR,
    NODEPOOL_PRESETS,
    ec2_node_class,
    node_pool,
    node_pool_to_plan,
)

REFERENCE_ZONES = ["ap-northeast-1a", "ap-northeast-1c"]
REFERENCE_LIMITS = {"cpu": "8", "memory": "32Gi"}
REFERENCE_CLUSTER = "karpenter-test"
REFERENCE_TAGS = {"eks-autoscaling:cluster": "karpenter-test"}
# The v1alpha5 Provisioner of the reference write-up.
PROVISIONER = {
    "ttlSecondsUntilExpired": 900,
    "ttlSecondsAfterEmpty": 30,
    "requirements": [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["ap-northeast-1a", "ap-northeast-1c"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ],
}


# The CRDs' own CEL rules, evaluated (sizing.karpenter.crd_rules): "path: message" per rule broken.
def nodepool_cel_violations(obj: dict) -> list[str]:
    return [violation.describe() for violation in rule_violations(obj, "NodePool")]


def ec2nodeclass_cel_violations(obj: dict) -> list[str]:
    return [violation.describe() for violation in rule_violations(obj, "EC2NodeClass")]


def _reference_pool(config: NodePoolConfig = NodePoolConfig()) -> dict:
    return node_pool(config, zones=REFERENCE_ZONES, limits=REFERENCE_LIMITS, node_class_name="default")


def _reference_class(**overrides) -> dict:
    arguments: dict[str, Any] = dict(
        name="default",
        role_name=f"KarpenterNodeRole-{REFERENCE_CLUSTER}",
        cluster_name=REFERENCE_CLUSTER,
        ami_alias=DEFAULT_AMI_ALIAS,
        tags=REFERENCE_TAGS,
    )
    arguments.update(overrides)
    return ec2_node_class(**arguments)


def _seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600}
    assert re.fullmatch(r"([0-9]+[smh])+", duration), duration
    return sum(int(number) * units[unit] for number, unit in re.findall(r"([0-9]+)([smh])", duration))


def _requirement_set(requirements) -> set:
    return {(r["key"], r["operator"], tuple(sorted(r.get("values", [])))) for r in requirements}


SPOT_CONFIG = NodePoolConfig.model_validate_json(
    """{"name": "spot", "preset": "spot", "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "1m", "expireAfter": "720h", "budgets": [{"nodes": "10%"}], "weight": 10}"""
)


def test_default_config_reproduces_the_manifest_files():
    assert _reference_pool() == load_manifest(MANIFEST_DIR / "nodepool.yaml")
    assert _reference_class() == load_manifest(MANIFEST_DIR / "ec2nodeclass.yaml")


def test_nodepool_maps_the_reference_provisioner():
    pool = _reference_pool()
    disruption = pool["spec"]["disruption"]
    template_spec = pool["spec"]["template"]["spec"]
    # ttlSecondsAfterEmpty -> WhenEmpty after the same delay
    assert disruption["consolidationPolicy"] == "WhenEmpty"
    assert _seconds(disruption["consolidateAfter"]) == PROVISIONER["ttlSecondsAfterEmpty"]
    # ttlSecondsUntilExpired -> template.spec.expireAfter
    assert _seconds(template_spec["expireAfter"]) == PROVISIONER["ttlSecondsUntilExpired"]
    assert "expireAfter" not in disruption
    # Same requirements, plus the OS that v1 no longer defaults.
    assert _requirement_set(template_spec["requirements"]) == _requirement_set(
        PROVISIONER["requirements"] + [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
    )
    # provider -> an EC2NodeClass reference
    assert template_spec["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    # limits.resources.{cpu,memory} -> a flat limits map
    assert pool["spec"]["limits"] == REFERENCE_LIMITS
    assert pool["apiVersion"] == "karpenter.sh/v1" and pool["metadata"]["name"] == "test-app"


def test_ec2nodeclass_maps_the_reference_provider():
    spec = _reference_class()["spec"]
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": REFERENCE_CLUSTER}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": REFERENCE_CLUSTER}}]
    assert spec["role"] == "KarpenterNodeRole-karpenter-test" and "instanceProfile" not in spec
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert spec["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "rootVolume": True,
            "ebs": {"volumeSize": "20Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
        }
    ]
    assert spec["tags"] == REFERENCE_TAGS


def test_presets_are_valid_requirement_lists_for_the_sizing_library():
    for name, requirements in NODEPOOL_PRESETS.items():
        parsed = parse_requirements([requirement.to_dict() for requirement in requirements], where=name)
        keys = [requirement.key for requirement in parsed]
        assert len(keys) == len(set(keys)), name
        assert "topology.kubernetes.io/zone" not in keys, "zones come from nodePool.zones or the VPC"
        # Karpenter v1 defaults none of these, so every preset states them.
        assert {"kubernetes.io/arch", "kubernetes.io/os", "karpenter.sh/capacity-type"} <= set(keys), name


def test_reference_preset_admits_only_m5_large_on_demand():
    requirements = parse_requirements([r.to_dict() for r in NODEPOOL_PRESETS["reference"]])
    assert [instance.name for instance in filter_instance_types(load_catalog(), requirements)] == ["m5.large"]
    assert _requirement_set(r.to_dict() for r in NODEPOOL_PRESETS["reference"]) >= {
        ("karpenter.sh/capacity-type", "In", ("on-demand",)),
    }


def test_spot_preset_follows_the_spot_write_up():
    requirements = {r.key: r for r in NODEPOOL_PRESETS["spot"]}
    assert requirements["karpenter.sh/capacity-type"].values == ("spot", "on-demand")
    assert requirements["karpenter.k8s.aws/instance-category"].values == ("c", "m", "r")
    size = requirements["karpenter.k8s.aws/instance-size"]
    assert (size.operator, set(size.values)) == ("NotIn", {"nano", "micro", "small", "medium", "large"})
    generation = requirements["karpenter.k8s.aws/instance-generation"]
    assert (generation.operator, generation.values) == ("Gt", ("2",))
    assert requirements["kubernetes.io/arch"].values == ("amd64",)
    assert requirements["kubernetes.io/os"].values == ("linux",)
    parsed = parse_requirements([requirement.to_dict() for requirement in NODEPOOL_PRESETS["spot"]])
    admitted = filter_instance_types(load_catalog(), parsed)
    # Spot needs several instance types to choose from (Karpenter warns below 5).
    assert len(admitted) >= 5
    for instance in admitted:
        labels = instance.labels()
        assert labels["karpenter.k8s.aws/instance-category"] in {"c", "m", "r"}
        assert labels["karpenter.k8s.aws/instance-size"] not in {"nano", "micro", "small", "medium", "large"}
        assert int(labels["karpenter.k8s.aws/instance-generation"]) > 2


def test_every_nodepool_setting_reaches_the_object():
    pool = node_pool(
        SPOT_CONFIG,
        zones=["us-east-1a", "us-east-1b"],
        limits={"cpu": "100", "nodes": "5"},
        node_class_name="spot-class",
    )
    spec = pool["spec"]
    assert pool["metadata"]["name"] == "spot"
    assert spec["template"]["spec"]["requirements"] == [r.to_dict() for r in NODEPOOL_PRESETS["spot"]] + [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a", "us-east-1b"]}
    ]
    assert spec["template"]["spec"]["nodeClassRef"]["name"] == "spot-class"
    assert spec["template"]["spec"]["expireAfter"] == "720h"
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "1m",
        "budgets": [{"nodes": "10%"}],
    }
    assert spec["limits"] == {"cpu": "100", "nodes": "5"}
    assert spec["weight"] == 10
    assert "weight" not in _reference_pool()["spec"]


def test_the_node_pool_to_plan_is_the_deployed_one_before_its_limits():
    deployed = node_pool(SPOT_CONFIG, zones=["us-east-1a"], limits={"cpu": "16"}, node_class_name="spot-class")
    planned = node_pool_to_plan(SPOT_CONFIG, zones=["us-east-1a"], node_class_name="spot-class")
    assert "limits" not in planned["spec"]
    del deployed["spec"]["limits"]
    assert planned == deployed


def test_the_node_pool_to_plan_carries_the_limits_set_in_the_config():
    config = NodePoolConfig.model_validate({"limits": {"cpu": 12}})
    planned = node_pool_to_plan(config, zones=REFERENCE_ZONES, node_class_name="default")
    assert planned["spec"]["limits"] == {"cpu": "12"}


def test_the_node_pool_to_plan_leaves_out_zones_it_does_not_know():
    requirements = node_pool_to_plan(NodePoolConfig(), zones=[], node_class_name="default")["spec"]["template"]["spec"][
        "requirements"
    ]
    assert [r for r in requirements if r["key"] == "topology.kubernetes.io/zone"] == []
    with pytest.raises(ValueError, match="lists a zone twice"):
        node_pool_to_plan(NodePoolConfig(), zones=["a", "a"], node_class_name="default")


def test_requirements_override_replaces_the_preset():
    config = NodePoolConfig.model_validate_json(
        """{"preset": "spot", "requirements": [
             {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m6i", "m7i"], "minValues": 2},
             {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}"""
    )
    requirements = _reference_pool(config)["spec"]["template"]["spec"]["requirements"]
    assert requirements == [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m6i", "m7i"], "minValues": 2},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": REFERENCE_ZONES},
    ]


def test_ec2nodeclass_parameters_reach_the_object():
    kubelet = {"maxPods": 58, "kubeReserved": {"cpu": "80m"}}
    spec = _reference_class(
        name="big", role_name="role-x", cluster_name="c2", ami_alias="al2023@v20251209",
        tags={"team": "platform"}, kubelet=kubelet, volume_size_gi=100,
    )["spec"]  # fmt: skip
    assert spec["role"] == "role-x"
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20251209"}]
    discovery = [{"tags": {"karpenter.sh/discovery": "c2"}}]
    assert spec["subnetSelectorTerms"] == spec["securityGroupSelectorTerms"] == discovery
    assert spec["tags"] == {"team": "platform"}
    assert spec["kubelet"] == kubelet
    assert spec["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "100Gi"
    assert "kubelet" not in _reference_class()["spec"]


@pytest.mark.parametrize(
    "builder",
    [
        _reference_pool,
        lambda: node_pool(SPOT_CONFIG, zones=["us-east-1a"], limits={"cpu": "8"}, node_class_name="default"),
    ],
)
def test_nodepools_pass_the_crd_cel_rules(builder):
    assert nodepool_cel_violations(builder()) == []


def test_ec2nodeclasses_pass_the_crd_cel_rules():
    assert ec2nodeclass_cel_violations(_reference_class()) == []
    kubelet = {
        "imageGCHighThresholdPercent": 85,
        "imageGCLowThresholdPercent": 80,
        "evictionHard": {"memory.available": "5%"},
    }
    with_kubelet = _reference_class(kubelet=kubelet)
    assert ec2nodeclass_cel_violations(with_kubelet) == []


@pytest.mark.parametrize(
    "requirement, message",
    [
        ({"key": "kubernetes.io/os", "operator": "In", "values": []}, "operator 'In' must have a value"),
        ({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["-1"]}, "single positive integer"),
        (
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"], "minValues": 2},
            "'minValues' must have at least",
        ),
        ({"key": "karpenter.sh/foo", "operator": "Exists"}, 'label domain "karpenter.sh" is restricted'),
        ({"key": "karpenter.k8s.aws/foo", "operator": "Exists"}, 'label domain "karpenter.k8s.aws" is restricted'),
        ({"key": "kubernetes.io/hostname", "operator": "Exists"}, 'label "kubernetes.io/hostname" is restricted'),
    ],
)
def test_nodepool_cel_emulation_catches_bad_requirements(requirement, message):
    pool = _reference_pool()
    pool["spec"]["template"]["spec"]["requirements"].append(requirement)
    assert any(message in problem for problem in nodepool_cel_violations(pool))


def test_nodepool_cel_emulation_catches_bad_references_and_budgets():
    pool = _reference_pool()
    pool["spec"]["template"]["spec"]["nodeClassRef"].update(group="", kind="NodeClass")
    pool["spec"]["disruption"]["budgets"].append({"nodes": "1", "schedule": "@daily"})
    problems = nodepool_cel_violations(pool)
    assert problems == [
        "spec.disruption.budgets: 'schedule' must be set with 'duration' (at [2])",
        "spec.template.spec.nodeClassRef.group: group may not be empty (got '')",
    ]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s.update(instanceProfile="profile"), "exactly one of ['role', 'instanceProfile']"),
        (lambda s: s["amiSelectorTerms"].append({"tags": {"a": "b"}}), "combination of other amiSelectorTerms"),
        (lambda s: s["amiSelectorTerms"][0].update(id="ami-123"), "combination of other fields in amiSelectorTerms"),
        (lambda s: s.update(amiSelectorTerms=[{"alias": "ubuntu@v1"}]), "family is not supported"),
        (lambda s: s.update(amiSelectorTerms=[{"id": "ami-123"}]), "must specify amiFamily"),
        (lambda s: s.update(subnetSelectorTerms=[]), "subnetSelectorTerms cannot be empty"),
        (lambda s: s["securityGroupSelectorTerms"][0]["tags"].update({"k": ""}), "empty tag keys or values"),
        (lambda s: s["tags"].update({"kubernetes.io/cluster/x": "owned"}), "restricted tag"),
        (
            lambda s: s["blockDeviceMappings"].append({"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {}}),
            "only one blockDeviceMappings with rootVolume",
        ),
        (lambda s: s["blockDeviceMappings"][0]["ebs"].pop("volumeSize"), "snapshotID or volumeSize must be defined"),
        (
            lambda s: s.update(kubelet={"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60}),
            "imageGCHighThresholdPercent must be greater",
        ),
        (lambda s: s.update(kubelet={"evictionHard": {"memory.free": "1%"}}), "valid keys for evictionHard"),
    ],
)
def test_ec2nodeclass_cel_emulation_catches(mutate, message):
    node_class = _reference_class()
    mutate(node_class["spec"])
    assert any(message in problem for problem in ec2nodeclass_cel_violations(node_class))


def test_the_well_known_aws_labels_are_those_the_crd_allows():
    (rule,) = [
        rule
        for rule in crd_rules("NodePool")
        if rule.where() == "spec.template.spec.requirements[].key"
        and rule.message == 'label domain "karpenter.k8s.aws" is restricted'
    ]
    assert set(re.findall(r'"(karpenter\.k8s\.aws/[a-z0-9-]+)"', rule.rule)) == AWS_WELL_KNOWN


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(zones=[]), "zones must be a non-empty list"),
        (dict(zones="ap-northeast-1a"), "zones must be a non-empty list"),
        (dict(zones=["ap-northeast-1a", "ap-northeast-1a"]), "lists a zone twice"),
        (dict(limits={}), "limits is empty"),
        (dict(limits={"memory": "1000GB"}), "limits.memory '1000GB' is not a Kubernetes quantity"),
        (dict(node_class_name=""), "node_class_name is empty"),
    ],
)
def test_node_pool_refuses_bad_arguments(arguments, message):
    defaults = dict(zones=REFERENCE_ZONES, limits=REFERENCE_LIMITS, node_class_name="default")
    with pytest.raises(ValueError, match=re.escape(message)):
        node_pool(NodePoolConfig(), **{**defaults, **arguments})


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(ami_alias="al2023@latest"), "with 'latest' every AMI release drifts"),
        (dict(ami_alias="bottlerocket@v1.40.0"), "must be al2023@<release>"),
        (dict(ami_alias="al2023"), "must be al2023@<release>"),
        (dict(ami_alias="al2023@v20260714-and-something-long"), "at most 30 characters"),
        (dict(tags={"eks:eks-cluster-name": "x"}), "tags: tag contains a restricted tag matching eks:eks-cluster-name"),
        (
            dict(tags={"kubernetes.io/cluster/karpenter-test": "owned"}),
            "restricted tag matching kubernetes.io/cluster/",
        ),
        (dict(tags={"": "x"}), "tags: empty tag keys aren't supported"),
        (dict(volume_size_gi=8), "from 20 to 16384"),
        (dict(volume_size_gi=20.5), "from 20 to 16384"),
        (dict(kubelet={"maxPod": 10}), "kubelet: unknown fields ['maxPod']"),
        (dict(role_name=""), "must not be empty"),
    ],
)
def test_ec2_node_class_refuses_bad_arguments(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _reference_class(**overrides)


def test_node_class_selects_given_subnets_by_id():
    from stackobjects.karpenter import ec2_node_class

    base = dict(name="default", role_name="r", cluster_name="c", ami_alias="al2023@v20260714", tags={})
    assert ec2_node_class(**base, subnet_ids=["subnet-1", "subnet-2"])["spec"]["subnetSelectorTerms"] == [
        {"id": "subnet-1"},
        {"id": "subnet-2"},
    ]
    assert ec2_node_class(**base)["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "c"}}]
    for bad in ([], "subnet-1", [""]):
        with pytest.raises(ValueError, match="subnet_ids must be a non-empty list of subnet ids"):
            ec2_node_class(**base, subnet_ids=bad)
