"""Bad configuration stops the program with one clear message, before any resource."""

import pytest

from stackconfig.errors import StackConfigError
from stackconfig.load import load_stack_file, parse_stack_config
from tests.harness import ProgramFailed, run_program
from offline.program import DELETE, PROJECT_DIR

BAD_INPUTS = [
    pytest.param({"network": {"cidr": "10.0.0/16"}}, ["network.cidr", "'10.0.0/16'", "IPv4 CIDR block"], id="malformed-cidr"),
    pytest.param({"network": {"cidr": "10.0.0.1/16"}}, ["network.cidr", "10.0.0.1/16"], id="cidr-host-bits"),
    pytest.param({"network": {"cidr": "10.0.0.0/8"}}, ["network.cidr", "/16 and /24"], id="cidr-too-large"),
    pytest.param({"network": {"availabilityZones": 1}}, ["network.availabilityZones", "greater than or equal to 2", "got 1"], id="too-few-azs"),
    pytest.param({"network": {"availabilityZones": 7}}, ["network.availabilityZones", "less than or equal to 6", "got 7"], id="too-many-azs"),
    pytest.param({"network": {"natGateways": "perAz"}}, ["network.natGateways", "'single' or 'onePerAz'", "perAz"], id="unknown-nat-strategy"),
    pytest.param({"nodeGroup": {"minSize": 3, "maxSize": 2, "desiredSize": 2}}, ["nodeGroup", "minSize (3) is greater than maxSize (2)"], id="min-above-max"),
    pytest.param({"nodeGroup": {"desiredSize": 5}}, ["nodeGroup", "desiredSize (5)", "between minSize (2) and maxSize (3)"], id="desired-above-max"),
    pytest.param({"nodeGroup": {"minSize": 2, "desiredSize": 1}}, ["desiredSize (1)", "between minSize (2)"], id="desired-below-min"),
    pytest.param({"cluster": {"version": "1.29"}}, ["cluster.version", "'1.29'", "1.33, 1.34, 1.35, 1.36"], id="unsupported-version"),
    pytest.param({"cluster": {"version": 1.35}}, ["cluster.version", "valid string", "1.35"], id="version-as-number"),
    pytest.param({"nodeGroup": {"minSise": 2}}, ["unknown key `nodeGroup.minSise`", "minSize"], id="typo-in-section"),
    pytest.param({"nodeGrup": {"minSize": 2}}, ["unknown key `nodeGrup`", "nodeGroup"], id="typo-at-top"),
    pytest.param({"nodeGroup": {"minSize": "2"}}, ["nodeGroup.minSize", "valid integer", "'2'"], id="wrong-type"),
    pytest.param({"nodeGroup": {"instanceTypes": ["m5large"]}}, ["nodeGroup.instanceTypes", "'m5large'", "m5.large"], id="bad-instance-type"),
    pytest.param({"nodeGroup": {"labels": {}}}, ["nodeGroup.labels", "at least one label"], id="no-system-label"),
    pytest.param({"cluster": {"publicAccessCidrs": ["my-office"]}}, ["cluster.publicAccessCidrs", "'my-office'"], id="bad-endpoint-cidr"),
    pytest.param({"cluster": {"publicAccessCidrs": []}}, ["publicAccessCidrs is empty"], id="public-endpoint-without-cidrs"),
    pytest.param({"cluster": {"logTypes": ["api", "audits"]}}, ["cluster.logTypes[1]", "audits"], id="unknown-log-type"),
    pytest.param({"clusterName": "karpenter test"}, ["clusterName", "'karpenter test'", "letters, digits"], id="bad-cluster-name"),
    pytest.param({"tags": {"aws:owner": "x"}}, ["tags", "aws:"], id="reserved-tag"),
    pytest.param({"aws:region": DELETE}, ["aws:region", "pulumi config set aws:region"], id="missing-region"),
    pytest.param({"cluster": {"secretsEncryption": {"enabled": True, "kmsKeyArn": "alias/mine"}}}, ["cluster.secretsEncryption.kmsKeyArn", "alias/mine", "KMS key ARN"], id="bad-kms-key"),
    pytest.param({"network": "single"}, ["`network`", "structured value"], id="scalar-for-section"),
    pytest.param({"cluster": {"logRetentionDays": 45}}, ["cluster.logRetentionDays", "45", "30, 60, 90"], id="log-retention-not-offered"),
    pytest.param({"cluster": {"logKmsKeyArn": "alias/logs"}}, ["cluster.logKmsKeyArn", "alias/logs", "KMS key ARN"], id="bad-log-key"),
    pytest.param(
        {"cluster": {"logKmsKeyArn": "arn:aws:kms:us-east-1:111122223333:key/0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"}},
        ["cluster.logKmsKeyArn", "us-east-1", "ap-northeast-1"],
        id="log-key-of-another-region",
    ),
    pytest.param({"cluster": {"publicAccessCidrs": ["203.0.113.0/24"]}}, ["cluster.publicAccessCidrs", "'203.0.113.0/24'", "TEST-NET-3"], id="documentation-endpoint-cidr"),
    pytest.param({"addons": {"karpenter": {"createSpotServiceLinkedRole": "yes"}}}, ["addons.karpenter.createSpotServiceLinkedRole", "valid boolean"], id="spot-role-not-a-bool"),
]


@pytest.mark.parametrize("overrides, fragments", BAD_INPUTS)
def test_bad_input_stops_before_any_resource(overrides, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    message = str(failure.value)
    assert message.startswith("invalid stack configuration")
    for fragment in fragments:
        assert fragment in message
    assert "Traceback" not in message
    assert failure.value.recording.resources == []


def test_several_problems_are_reported_together():
    with pytest.raises(StackConfigError) as failure:
        parse_stack_config(
            {
                "aws:region": "ap-northeast-1",
                "eks-autoscaling:network": '{"cidr": "nope", "availabilityZones": 9}',
            }
        )
    assert len(failure.value.problems) == 2
    assert "2 problems" in str(failure.value)


def test_other_namespaces_are_left_to_their_providers():
    config = parse_stack_config({"aws:region": "eu-west-1", "aws:profile": "work", "kubernetes:context": "x"})
    assert config.region == "eu-west-1"


def test_more_zones_than_the_region_has():
    # The mocked ap-northeast-1 has three zones, as the real region does for new accounts.
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"network": {"availabilityZones": 4}})
    assert "`network.availabilityZones` is 4" in str(failure.value)
    assert "has only 3 available zones" in str(failure.value)


def test_every_stack_file_is_valid():
    stacks = sorted(PROJECT_DIR.glob("Pulumi.*.yaml"))
    assert stacks, "no stack files"
    for path in stacks:
        load_stack_file(path)


def test_defaults_reproduce_the_reference_setup():
    config = parse_stack_config({"aws:region": "ap-northeast-1"})
    assert config.cluster_name == "karpenter-test"
    assert config.network.cidr == "10.0.0.0/16"
    assert config.network.availability_zones == 2
    assert config.cluster.version == "1.35"
    assert config.cluster.log_types == ("api", "audit", "authenticator")
    assert (config.cluster.log_retention_days, config.cluster.log_kms_key_arn) == (90, None)
    assert config.addons.karpenter.create_spot_service_linked_role is False
    assert config.node_group.instance_types == ("m5.large",)
    assert (config.node_group.min_size, config.node_group.desired_size, config.node_group.max_size) == (2, 2, 3)
    assert config.node_group.ami_type.startswith("AL2023")
