import pytest

import offline.mocks
from tests.harness import ProgramFailed, run_program


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


# --- the VPC's zones: pinned by zone ID -------------------------------------------------------

ZONE_WARNING = "the VPC's zones are not pinned"


def test_unpinned_zones_are_chosen_and_the_warning_says_how_to_pin_them(dev):
    (warning,) = [warning for warning in dev.warnings if ZONE_WARNING in warning]
    assert "chose apne1-az4, apne1-az1 (ap-northeast-1a, ap-northeast-1c)" in warning
    assert "`make up` does it" in warning
    # One command, so that an interruption never leaves part of the list.
    assert (
        "pulumi config set-all --path --plaintext 'eks-autoscaling:network.zoneIds[0]=apne1-az4' "
        "--plaintext 'eks-autoscaling:network.zoneIds[1]=apne1-az1'"
    ) in warning


def test_pinned_zones_are_used_by_id_in_their_order():
    recording = run_program("dev", {"network": {"zoneIds": ["apne1-az2", "apne1-az4"]}})
    # Their names in this account, in the pinned order (awsx allocates the subnets in that order).
    assert recording.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["ap-northeast-1d", "ap-northeast-1a"]
    assert not any(ZONE_WARNING in warning for warning in recording.warnings)
    pool = recording.one("kubernetes:karpenter.sh/v1:NodePool")
    (zones,) = [r for r in pool.input("spec.template.spec.requirements") if r["key"] == "topology.kubernetes.io/zone"]
    assert zones["values"] == ["ap-northeast-1d", "ap-northeast-1a"]


def test_a_zone_count_that_differs_from_the_pinned_zones_is_refused_with_what_it_would_replace():
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"network": {"availabilityZones": 3, "zoneIds": ["apne1-az4", "apne1-az1"]}})
    message = str(failure.value)
    for fragment in (
        "`network`: availabilityZones is 3 but zoneIds pins 2 zones (apne1-az4, apne1-az1)",
        "re-addresses every subnet",
        "replace every public and private subnet with their route tables and NAT gateways",
        "the system node group",
        "EKS refuses to move the cluster to subnets in other zones",
        "Keep availabilityZones at 2",
        "create a new stack",
    ):
        assert fragment in message, message
    assert failure.value.recording.resources == []


def test_the_prod_stack_leaves_out_the_zone_eks_does_not_support():
    recording = run_program("prod")
    # us-east-1c is use1-az3 in the mocked account: EKS refuses cluster subnets there.
    assert recording.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["us-east-1a", "us-east-1b", "us-east-1d"]
    (warning,) = [warning for warning in recording.warnings if ZONE_WARNING in warning]
    assert "chose use1-az2, use1-az4, use1-az6" in warning and "use1-az3" not in warning


def test_zones_that_do_not_offer_the_system_nodes_types_are_left_out(monkeypatch):
    monkeypatch.setattr(offline.mocks, "NOT_OFFERED", {"apne1-az1": {"m5.large"}})
    recording = run_program("dev")
    assert recording.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["ap-northeast-1a", "ap-northeast-1d"]
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"network": {"availabilityZones": 3}})
    message = str(failure.value)
    assert "ap-northeast-1 has only 2 zones the cluster can use (apne1-az4 (ap-northeast-1a), apne1-az2" in message
    assert (
        "left out: apne1-az1 (ap-northeast-1c): EC2 does not offer m5.large (nodeGroup.instanceTypes) there" in message
    )


def test_a_zone_that_is_not_available_now_is_not_chosen_but_a_pinned_one_stays(monkeypatch):
    monkeypatch.setattr(offline.mocks, "UNAVAILABLE_ZONE_IDS", {"apne1-az4"})
    chosen = run_program("dev")
    assert chosen.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["ap-northeast-1c", "ap-northeast-1d"]
    pinned = run_program("dev", {"network": {"zoneIds": ["apne1-az4", "apne1-az1"]}})
    assert pinned.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["ap-northeast-1a", "ap-northeast-1c"]
    assert any("apne1-az4 (ap-northeast-1a) of network.zoneIds is not available" in w for w in pinned.warnings)


@pytest.mark.parametrize(
    "stack, zone_ids, fragments",
    [
        ("dev", ["apne1-az3", "apne1-az1"], ["'apne1-az3' is not an availability zone of ap-northeast-1", "apne1-az4"]),
        ("dev", ["use1-az1", "apne1-az1"], ["'use1-az1' is not an availability zone of ap-northeast-1"]),
        (
            "prod",
            ["use1-az2", "use1-az3", "use1-az4"],
            ["`network.zoneIds`: use1-az3 (us-east-1c) cannot hold the VPC: EKS does not support cluster subnets"],
        ),
    ],
)
def test_pinned_zones_the_vpc_cannot_use_are_refused(stack, zone_ids, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program(stack, {"network": {"zoneIds": zone_ids}})
    for fragment in fragments:
        assert fragment in str(failure.value), str(failure.value)
    assert not failure.value.recording.of_type("awsx:ec2:Vpc")


def test_a_pinned_zone_lacking_one_of_the_system_nodes_types_is_kept_with_a_warning(monkeypatch):
    # Pinned from an older stack's VPC, where the node group already runs: it launches the other type there.
    monkeypatch.setattr(offline.mocks, "NOT_OFFERED", {"use1-az6": {"m6i.large"}})
    recording = run_program("prod", {"network": {"zoneIds": ["use1-az2", "use1-az4", "use1-az6"]}})
    assert recording.one("awsx:ec2:Vpc").input("availabilityZoneNames") == ["us-east-1a", "us-east-1b", "us-east-1d"]
    (warning,) = [w for w in recording.warnings if "lacks" in w]
    assert "zone use1-az6 (us-east-1d) of network.zoneIds lacks m6i.large of nodeGroup.instanceTypes" in warning


def test_a_pinned_zone_offering_none_of_the_system_nodes_types_is_refused(monkeypatch):
    monkeypatch.setattr(offline.mocks, "NOT_OFFERED", {"use1-az6": {"m6i.large", "m5.large"}})
    with pytest.raises(ProgramFailed) as failure:
        run_program("prod", {"network": {"zoneIds": ["use1-az2", "use1-az4", "use1-az6"]}})
    assert (
        "use1-az6 (us-east-1d) cannot hold the VPC: EC2 offers none of nodeGroup.instanceTypes (m6i.large, m5.large)"
        in str(failure.value)
    )
    assert not failure.value.recording.of_type("awsx:ec2:Vpc")
