"""Every manifest file and every built object validates against the real schemas.

Built-in kinds: kubernetes-validate's strict schemas (unknown fields are errors),
for Kubernetes 1.35, the stack's default cluster version. The package ships
schemas for exactly that version.
Karpenter kinds: the openAPIV3Schema of the Karpenter 1.14.1 CRDs, made strict
in the same way. The API server also rejects unknown fields when kubectl applies with
its default field validation. CEL rules (x-kubernetes-validations) are not
evaluated by jsonschema; test_karpenter_objects.py checks them.
"""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
import yaml

from stackconfig.ami import DEFAULT_AMI_ALIAS
from stackconfig.app import AppConfig
from stackconfig.nodepool import NodePoolConfig
from stackobjects.app import MANIFEST_DIR as TEST_APP_DIR
from stackobjects.app import MANIFEST_FILES, app_objects, load_manifest
from stackobjects.karpenter import MANIFEST_DIR as KARPENTER_DIR
from stackobjects.karpenter import NODEPOOL_PRESETS, ec2_node_class, node_pool
from tests import schemas

KUBERNETES_VERSION = "1.35.0"

NON_DEFAULT_APP = AppConfig.model_validate_json(
    """{
      "namespace": "load", "name": "httpbin",
      "image": "ghcr.io/mccutchen/go-httpbin:2.25.0@sha256:%s",
      "cpuRequest": "250m", "cpuLimit": "1", "memoryRequest": "100M", "memoryLimit": "1Gi",
      "hpa": {"minReplicas": 2, "maxReplicas": 20, "targetCpuUtilizationPercent": 70,
              "scaleDown": {"stabilizationWindowSeconds": 120, "percent": 50, "periodSeconds": 30}},
      "maxSurgePercent": 25, "healthCheckPath": "/get",
      "ingress": {"scheme": "internal", "tags": {"team": "platform"}}
    }"""
    % ("0" * 64)
)
NON_DEFAULT_POOLS = (
    NodePoolConfig.model_validate_json(
        """{
          "name": "spot-pool", "preset": "spot", "zones": ["us-east-1a", "us-east-1b", "us-east-1d"],
          "consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m", "expireAfter": "Never",
          "budgets": [
            {"nodes": "20%"},
            {"nodes": "0", "reasons": ["Drifted"], "schedule": "0 9 * * 1-5", "duration": "8h"}
          ],
          "weight": 50
        }"""
    ),
    NodePoolConfig.model_validate_json(
        """{
          "consolidationPolicy": "Balanced",
          "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m6i", "m7i", "c7i"],
             "minValues": 2},
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["2"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64", "amd64"]},
            {"key": "karpenter.k8s.aws/instance-hypervisor", "operator": "Exists"}
          ]
        }"""
    ),
)


def _kubernetes_objects():
    default = app_objects(
        AppConfig(), nodepool_name="test-app", vpc_cidr="10.0.0.0/16", tags={"project": "eks-autoscaling"}
    )
    custom = app_objects(NON_DEFAULT_APP, nodepool_name="spot-pool", vpc_cidr="172.16.0.0/12", tags={})
    return [pytest.param(obj, id=f"default-{obj['kind']}") for obj in default] + [
        pytest.param(obj, id=f"custom-{obj['kind']}") for obj in custom
    ]


def _karpenter_objects():
    limits = {"cpu": "16", "memory": "64Gi", "nodes": "10"}
    pools = [node_pool(NodePoolConfig(), zones=["ap-northeast-1a"], limits={"cpu": "8"}, node_class_name="default")]
    pools += [
        node_pool(config, zones=["us-east-1a", "us-east-1b"], limits=limits, node_class_name="spot")
        for config in NON_DEFAULT_POOLS
    ]
    classes = [
        ec2_node_class(name="default", role_name="node-role", cluster_name="c1", ami_alias=DEFAULT_AMI_ALIAS, tags={}),
        ec2_node_class(
            name="spot",
            role_name="KarpenterNodeRole-big",
            cluster_name="big",
            ami_alias="al2023@v20251209",
            tags={"team": "platform", "karpenter.sh/discovery": "big"},
            kubelet={
                "maxPods": 58,
                "systemReserved": {"cpu": "100m", "memory": "100Mi"},
                "evictionHard": {"memory.available": "5%"},
                "imageGCHighThresholdPercent": 85,
                "imageGCLowThresholdPercent": 80,
            },
            volume_size_gi=100,
        ),
    ]
    return pools + classes


_label = schemas.label


def _manifest_files():
    return sorted(TEST_APP_DIR.glob("*.yaml")) + sorted(KARPENTER_DIR.glob("*.yaml"))


@pytest.fixture(scope="module")
def crd_validators():
    return schemas.crd_validators()


def _validate_kubernetes(obj: dict) -> None:
    assert schemas.validate_kubernetes(obj, KUBERNETES_VERSION) == "1.35"


def _validate_crd(validators, obj: dict) -> None:
    schemas.validate_crd(validators, obj)


def test_every_manifest_file_is_one_kubernetes_object():
    files = _manifest_files()
    assert [path.name for path in sorted(TEST_APP_DIR.glob("*.yaml"))] == list(MANIFEST_FILES)
    assert {path.name for path in KARPENTER_DIR.glob("*.yaml")} == {"nodepool.yaml", "ec2nodeclass.yaml"}
    for path in files:
        documents = [document for document in yaml.safe_load_all(path.read_text()) if document is not None]
        assert len(documents) == 1, path
        obj = documents[0]
        assert {"apiVersion", "kind", "metadata"} <= set(obj), path
        assert obj["metadata"]["name"], path


@pytest.mark.parametrize("path", sorted(TEST_APP_DIR.glob("*.yaml")), ids=lambda path: path.name)
def test_test_app_file_validates_strictly(path):
    obj = load_manifest(path)
    _validate_kubernetes(obj)
    if obj["kind"] != "Namespace":
        # kubectl apply needs no -n flag: every namespaced object names its namespace.
        assert obj["metadata"]["namespace"] == "test-app"


@pytest.mark.parametrize("path", sorted(KARPENTER_DIR.glob("*.yaml")), ids=lambda path: path.name)
def test_karpenter_file_validates_against_crd(crd_validators, path):
    obj = load_manifest(path)
    _validate_crd(crd_validators, obj)
    assert "namespace" not in obj["metadata"], "NodePool and EC2NodeClass are cluster-scoped"


@pytest.mark.parametrize("obj", _kubernetes_objects())
def test_built_kubernetes_object_validates_strictly(obj):
    _validate_kubernetes(obj)


@pytest.mark.parametrize("obj", _karpenter_objects(), ids=_label)
def test_built_karpenter_object_validates_against_crd(crd_validators, obj):
    _validate_crd(crd_validators, obj)


def test_strict_kubernetes_schema_rejects_an_unknown_field():
    deployment = load_manifest(TEST_APP_DIR / "30-deployment.yaml")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["securityContext"]["runAsNonRot"] = True
    with pytest.raises(kubernetes_validate.ValidationError, match="runAsNonRot"):
        _validate_kubernetes(broken)


def test_strict_crd_schema_rejects_an_unknown_field_and_a_bad_quantity(crd_validators):
    pool = load_manifest(KARPENTER_DIR / "nodepool.yaml")
    validator = crd_validators[("karpenter.sh/v1", "NodePool")]
    misspelt = copy.deepcopy(pool)
    misspelt["spec"]["disruption"]["consolidateAfterr"] = "30s"
    bad_limit = copy.deepcopy(pool)
    bad_limit["spec"]["limits"]["memory"] = "1000GB"
    (unknown_field,) = validator.iter_errors(misspelt)
    assert "consolidateAfterr" in unknown_field.message
    (bad_quantity,) = validator.iter_errors(bad_limit)
    assert list(bad_quantity.absolute_path) == ["spec", "limits", "memory"]


@pytest.mark.parametrize("preset", sorted(NODEPOOL_PRESETS))
def test_each_preset_renders_a_node_pool_the_crd_accepts(crd_validators, preset):
    config = NodePoolConfig.model_validate({"preset": preset})
    _validate_crd(crd_validators, node_pool(config, zones=["us-east-1a"], limits={"cpu": "8"}, node_class_name="x"))


def test_the_crd_check_evaluates_the_cel_rules(crd_validators):
    pool = load_manifest(KARPENTER_DIR / "nodepool.yaml")
    pool["spec"]["template"]["spec"]["requirements"].append({"key": "kubernetes.io/hostname", "operator": "Exists"})
    # jsonschema alone accepts it: the restriction is a CEL rule.
    assert list(crd_validators[("karpenter.sh/v1", "NodePool")].iter_errors(pool)) == []
    with pytest.raises(AssertionError, match=r'requirements\[\d+\]\.key: label "kubernetes.io/hostname" is restricted'):
        _validate_crd(crd_validators, pool)
    node_class = load_manifest(KARPENTER_DIR / "ec2nodeclass.yaml")
    node_class["spec"]["instanceProfile"] = "profile"
    with pytest.raises(AssertionError, match=r"spec: must specify exactly one of \['role', 'instanceProfile'\]"):
        _validate_crd(crd_validators, node_class)
