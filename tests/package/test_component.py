"""EksAutoscaling built from inputs: the Python example with an existing VPC and no test app, two
components in one program, and inputs refused before anything is created."""

import sys
import types

import pytest

from components.eks_autoscaling import EksAutoscaling
from offline.plan import kubernetes_objects
from offline.program import PROJECT_DIR
from tests import schemas
from tests.harness import ProgramFailed, run_program
from tests.package.schema_checks import component

EXAMPLE_DIR = PROJECT_DIR / "examples" / "python-existing-vpc"
EXAMPLE_PROJECT = "eks-autoscaling-existing-vpc"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


@pytest.fixture
def generated_sdk(monkeypatch):
    """Stands in for the SDK `pulumi package add` generates (keyword inputs in Python names), building
    the component in this process so that its resources are recorded."""
    module = types.ModuleType("pulumi_eks_autoscaling")
    module.EksAutoscaling = lambda name, opts=None, **inputs: EksAutoscaling(name, inputs, opts)
    monkeypatch.setitem(sys.modules, "pulumi_eks_autoscaling", module)


@pytest.fixture
def existing_vpc(generated_sdk):
    return run_program("dev", project_dir=EXAMPLE_DIR, project=EXAMPLE_PROJECT)


def test_existing_vpc_builds_no_network_and_uses_the_given_subnets(existing_vpc):
    assert existing_vpc.of_type("awsx:ec2:Vpc") == []
    assert existing_vpc.of_type("eks-autoscaling:network:Network") == []
    eks = existing_vpc.one("eks:index:Cluster")
    assert eks.input("vpcId") == "vpc-0a1b2c3d4e5f60718"
    assert eks.input("privateSubnetIds") == ["subnet-1aa1", "subnet-1bb2", "subnet-1cc3"]
    assert eks.input("publicSubnetIds") == ["subnet-0aa1", "subnet-0bb2", "subnet-0cc3"]
    node_class = existing_vpc.one(NODE_CLASS)
    assert node_class.input("spec.subnetSelectorTerms") == [
        {"id": "subnet-1aa1"},
        {"id": "subnet-1bb2"},
        {"id": "subnet-1cc3"},
    ]
    release = existing_vpc.one("kubernetes:helm.sh/v3:Release", "autoscaling-addons-aws-load-balancer-controller")
    assert release.input("values.vpcId") == "vpc-0a1b2c3d4e5f60718"


def test_the_examples_karpenter_objects_pass_the_crds_and_their_cel_rules(existing_vpc):
    validators = schemas.crd_validators()
    objects = [doc for _, doc in kubernetes_objects(existing_vpc) if doc["kind"] in ("NodePool", "EC2NodeClass")]
    assert sorted(doc["kind"] for doc in objects) == ["EC2NodeClass", "NodePool"]
    for obj in objects:
        schemas.validate_crd(validators, obj)


def test_without_the_test_app_the_node_pool_is_planned_from_the_workloads(existing_vpc):
    assert existing_vpc.of_type("kubernetes:apps/v1:Deployment") == []
    assert existing_vpc.of_type("kubernetes:networking.k8s.io/v1:Ingress") == []
    pool = existing_vpc.one(NODE_POOL)
    assert pool.input("metadata.name") == "general"
    assert pool.input("spec.limits") == existing_vpc.outputs["nodePoolLimits"]
    zones = next(r for r in pool.input("spec.template.spec.requirements") if r["key"] == "topology.kubernetes.io/zone")
    assert zones["values"] == ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"]
    plan = existing_vpc.outputs["capacityPlan"]
    # api 40 pods (+25 % surge) and worker 24 (+25 % by default): no httpbin pods in the plan.
    assert plan["pods"]["withSurge"] == 50 + 30


def test_children_are_named_after_the_component(existing_vpc):
    owned = [
        r for r in existing_vpc.resources if r.type.startswith(("eks-autoscaling:", "aws:", "kubernetes:", "eks:"))
    ]
    assert owned and all(r.name.startswith("autoscaling") for r in owned), [
        r.name for r in owned if not r.name.startswith("autoscaling")
    ]
    top = existing_vpc.one("eks-autoscaling:index:EksAutoscaling")
    assert top.name == "autoscaling" and existing_vpc.component_outputs.get(top.urn)


def test_the_stack_exports_every_output_of_the_schema():
    dev = run_program("dev")
    assert set(dev.outputs) == set(component()["properties"])
    top = dev.one("eks-autoscaling:index:EksAutoscaling")
    assert dev.one("eks-autoscaling:cluster:Cluster").parent == top.urn


TWO_COMPONENTS = """
from components.eks_autoscaling import EksAutoscaling
blue = EksAutoscaling("blue", {"cluster_name": "blue", "cluster": {"acknowledge_open_endpoint": True}})
green = EksAutoscaling("green", {"cluster_name": "green", "cluster": {"acknowledge_open_endpoint": True},
                                 "network": {"cidr": "10.1.0.0/16"}})
"""


def test_two_components_live_in_one_program(tmp_path):
    (tmp_path / "__main__.py").write_text(TWO_COMPONENTS)
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: ap-northeast-1\n")
    recording = run_program("dev", project_dir=tmp_path, project="two")
    clusters = recording.of_type("eks:index:Cluster")
    assert sorted(c.input("name") for c in clusters) == ["blue", "green"]
    assert sorted(v.name for v in recording.of_type("awsx:ec2:Vpc")) == ["blue-network-vpc", "green-network-vpc"]


BAD_INPUTS = [
    pytest.param({"vpc_id": "vpc-1"}, ["`vpcId` given without `publicSubnetIds`, `privateSubnetIds`"], id="half-a-vpc"),
    pytest.param(
        {
            "vpc_id": "vpc-1",
            "public_subnet_ids": ["s-1"],
            "private_subnet_ids": ["s-2"],
            "network": {"nat_gateways": "single"},
        },
        ["`network.natGateways` applies to a VPC the component builds", "`network.cidr` is required with vpcId"],
        id="nat-gateways-with-existing-vpc",
    ),
    pytest.param(
        {"node_group": {"min_size": 3, "max_size": 2}},
        ["nodeGroup", "minSize (3) is greater than maxSize (2)"],
        id="same-message-as-a-stack",
    ),
    pytest.param({"node_group": {"min_sise": 3}}, ["unknown key `nodeGroup.min_sise`"], id="unknown-key"),
    pytest.param(
        {"cluster": {"authentication_mode": "API_AND_CONFIG_MAP"}, "aws_shared_config_file": "/etc/aws/config"},
        ["`cluster.authenticationMode` API_AND_CONFIG_MAP cannot be combined with `awsSharedConfigFile`"],
        id="config-map-auth-with-a-config-file",
    ),
    pytest.param(
        {"deploy_test_app": False}, ["deployTestApp is false and capacity.workloads is empty"], id="nothing-to-plan"
    ),
    pytest.param(
        {"region": "us-west-2"},
        ["`region` is 'us-west-2'", "creates everything in 'ap-northeast-1'", "leave `region` out"],
        id="region-other-than-the-providers",
    ),
    # The bad values a stack file is refused for, given as inputs: the same messages, named by the input.
    pytest.param(
        {"node_group": {"instance_types": ["m5.largee"]}},
        ["nodeGroup.instance_types", "'m5.largee' not in the bundled instance-type catalog", "m5.large"],
        id="instance-type-not-in-catalog",
    ),
    pytest.param(
        {"node_group": {"instance_types": ["m6g.large"]}},
        ["m6g.large (arm64) cannot boot amiType AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"],
        id="instance-type-of-the-other-architecture",
    ),
    pytest.param(
        {"node_group": {"instance_types": ["t3.micro"]}},
        ["t3.micro leaves", "less than one karpenter replica requests"],
        id="instance-type-too-small",
    ),
    pytest.param(
        {"region": "us-east-7"},
        ["`region`: 'us-east-7' is not an AWS region; such as us-east-1"],
        id="region-that-does-not-exist",
    ),
    pytest.param(
        {"region": "mars-north-1"}, ["`region`: 'mars-north-1' is not an AWS region"], id="region-of-another-planet"
    ),
    pytest.param(
        {"cluster": {"acknowledge_open_endpoint": True, "version": 1.3}},
        ["`cluster.version`: text is expected, not the number 1.3", 'write it in quotes, such as "1.35"'],
        id="version-as-a-number",
    ),
    pytest.param(
        {"app": {"hpa": {"max_replicas": 40000}}},
        ["80000 pods", "network.cidr 10.0.0.0/16", "32746 pod addresses"],
        id="peak-beyond-the-vpc",
    ),
    pytest.param(
        {"app": {"hpa": {"max_replicas": 10**9}}},
        ["maxReplicas must be at most 100,000", "the planner's ceiling", "got 1,000,000,000"],
        id="max-replicas-past-the-ceiling",
    ),
    pytest.param(
        {"app": {"hpa": {"max_replicas": -5}}}, ["maxReplicas must be at least 1, got -5"], id="negative-max-replicas"
    ),
    pytest.param(
        {"node_pool": {"limits": {"cpu": "1"}}},
        ["`nodePool.limits` {'cpu': '1'} change what Karpenter decides (peak: test-app/test-app: 10 more pods pending"],
        id="limits-below-the-peak",
    ),
    pytest.param(
        {"capacity": {"daemon_sets": [{"name": "agent", "requests": {"cpu": "2", "memory": "64Mi"}}]}},
        ["the DaemonSets request 2125m cpu on every node", "no pod fits beside them"],
        id="oversized-daemon-set",
    ),
    pytest.param(
        {
            "capacity": {
                "workloads": [
                    {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 2, "replicas": 3}
                ]
            }
        },
        ["unknown key `capacity.workloads[0].replicas`"],
        id="unknown-key-in-the-first-workload",
    ),
    pytest.param(
        {
            "vpc_id": "vpc-1",
            "public_subnet_ids": ["subnet-1"],
            "private_subnet_ids": ["subnet-2"],
            "network": {"cidr": "10.0.0.0/16", "zone_ids": ["apne1-az1", "apne1-az2"]},
        },
        ["`network.zoneIds` applies to a VPC the component builds, not to an existing one (vpcId)"],
        id="zone-ids-with-an-existing-vpc",
    ),
    pytest.param(
        {"aws_shared_config_file": "aws/config"},
        ["`awsSharedConfigFile`: 'aws/config' is a relative path", "under ~/"],
        id="relative-aws-config-file",
    ),
]


@pytest.mark.parametrize("inputs, fragments", BAD_INPUTS)
def test_bad_inputs_stop_before_any_child_resource(tmp_path, inputs, fragments):
    (tmp_path / "__main__.py").write_text(
        "from components.eks_autoscaling import EksAutoscaling\n"
        f"EksAutoscaling('x', {{'cluster': {{'acknowledge_open_endpoint': True}}, **{inputs!r}}})\n"
    )
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: ap-northeast-1\n")
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", project_dir=tmp_path, project="bad")
    message = str(failure.value)
    for fragment in fragments:
        assert fragment in message
    assert [r.type for r in failure.value.recording.resources if r.type != "eks-autoscaling:index:EksAutoscaling"] == []


def test_region_from_the_provider_is_named_as_its_setting():
    from stackconfig.errors import StackConfigError
    from stackplan.deployment import config_from_args

    with pytest.raises(StackConfigError) as failure:
        config_from_args({}, "us-east-7")
    assert "`aws:region`: 'us-east-7' is not an AWS region" in str(failure.value)


def test_integer_limits_are_accepted_as_inputs(tmp_path):
    (tmp_path / "__main__.py").write_text(
        "from components.eks_autoscaling import EksAutoscaling\n"
        "EksAutoscaling('x', {'cluster': {'acknowledge_open_endpoint': True}, 'node_pool': {'limits': {'cpu': 16}}})\n"
    )
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: ap-northeast-1\n")
    recording = run_program("dev", project_dir=tmp_path, project="limits")
    assert recording.one(NODE_POOL).input("spec.limits.cpu") == "16"


def test_configuration_from_another_resource_is_refused(tmp_path):
    (tmp_path / "__main__.py").write_text(
        "import pulumi\nfrom components.eks_autoscaling import EksAutoscaling\n"
        "EksAutoscaling('x', {'cluster_name': pulumi.Output.from_input('late'), 'vpc_id': pulumi.Output.from_input('vpc-1')})\n"
    )
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: ap-northeast-1\n")
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", project_dir=tmp_path, project="late")
    assert "`clusterName` is an output of another resource" in str(failure.value)
    assert "vpcId`" not in str(failure.value).split("(only")[0]
    assert failure.value.recording.resources == []


def test_the_example_signs_the_kubeconfig_in_with_the_provider_profile(generated_sdk, tmp_path):
    import shutil

    import yaml

    shutil.copy(EXAMPLE_DIR / "__main__.py", tmp_path / "__main__.py")
    stack = yaml.safe_load((EXAMPLE_DIR / "Pulumi.dev.yaml").read_text())
    stack["config"]["aws:profile"] = "platform-admin"
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    recording = run_program("dev", project_dir=tmp_path, project=EXAMPLE_PROJECT)
    assert recording.one("eks:index:Cluster").input("providerCredentialOpts") == {"profileName": "platform-admin"}
    kubeconfig = recording.one("pulumi:providers:kubernetes").input("kubeconfig")
    assert kubeconfig["users"][0]["user"]["exec"]["args"][-2:] == ["--profile", "platform-admin"]


def test_the_aws_cli_files_reach_the_components_kubeconfig(tmp_path):
    (tmp_path / "__main__.py").write_text(
        "import pulumi\nfrom components.eks_autoscaling import EksAutoscaling\n"
        "c = EksAutoscaling('x', {'cluster': {'acknowledge_open_endpoint': True}, "
        "'aws_shared_config_file': '/srv/aws/config', 'aws_shared_credentials_file': '~/.aws/credentials'})\n"
        "pulumi.export('kubeconfig', c.kubeconfig)\n"
    )
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: ap-northeast-1\n")
    recording = run_program("dev", project_dir=tmp_path, project="files")
    env = recording.one("pulumi:providers:kubernetes").input("kubeconfig")["users"][0]["user"]["exec"]["env"]
    assert {"name": "AWS_CONFIG_FILE", "value": "/srv/aws/config"} in env
    assert {"name": "AWS_SHARED_CREDENTIALS_FILE", "value": "~/.aws/credentials"} in env
