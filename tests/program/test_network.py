from tests.harness import run_program


def test_vpc_spans_the_first_zones_of_the_region(dev):
    vpc = dev.one("awsx:ec2:Vpc")
    assert vpc.input("cidrBlock") == "10.0.0.0/16"
    assert vpc.input("availabilityZoneNames") == ["ap-northeast-1a", "ap-northeast-1c"]
    assert vpc.input("natGateways") == {"strategy": "Single"}


def test_subnets_carry_the_load_balancer_and_karpenter_tags(dev):
    specs = {spec["type"]: spec for spec in dev.one("awsx:ec2:Vpc").input("subnetSpecs")}
    assert set(specs) == {"Public", "Private"}
    assert specs["Public"]["tags"] == {"kubernetes.io/role/elb": "1"}
    assert specs["Private"]["tags"] == {
        "kubernetes.io/role/internal-elb": "1",
        "karpenter.sh/discovery": "karpenter-test",
    }


def test_nat_gateway_per_zone_and_more_zones():
    recording = run_program(
        "dev", {"network": {"natGateways": "onePerAz", "availabilityZones": 3, "cidr": "10.8.0.0/16"}}
    )
    vpc = recording.one("awsx:ec2:Vpc")
    assert vpc.input("natGateways") == {"strategy": "OnePerAz"}
    assert vpc.input("availabilityZoneNames") == ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]
    assert vpc.input("cidrBlock") == "10.8.0.0/16"
    assert len(recording.outputs["privateSubnetIds"]) == 3


def test_every_aws_resource_uses_the_tagged_provider(dev):
    provider = dev.one("pulumi:providers:aws")
    assert provider.input("region") == "ap-northeast-1"
    assert provider.input("defaultTags") == {"tags": {"eks-autoscaling:cluster": "karpenter-test"}}
    for resource in dev.resources:
        if resource.type.startswith("aws:"):
            assert resource.provider == provider.urn, resource
        if resource.type in ("awsx:ec2:Vpc", "eks:index:Cluster", "eks:index:ManagedNodeGroup"):
            assert resource.providers.get("aws") == provider.urn, resource


def test_stack_tags_reach_every_resource():
    recording = run_program("dev", {"tags": {"team": "platform"}})
    provider = recording.one("pulumi:providers:aws")
    assert provider.input("defaultTags.tags") == {"eks-autoscaling:cluster": "karpenter-test", "team": "platform"}
    assert recording.one("awsx:ec2:Vpc").input("tags")["team"] == "platform"
