"""The stack's `aws:*` settings reach the one AWS provider, which resources and look-ups share."""

import pytest

from tests.harness import ProgramFailed, run_program

PROVIDER = "pulumi:providers:aws"
ROLE = "arn:aws:iam::111122223333:role/deployer"
ACCOUNT_LOOKUPS = {
    # getRegion: only EksAutoscaling asks, through the provider it was given.
    "aws:index/getRegion:getRegion",
    "aws:index/getAvailabilityZones:getAvailabilityZones",
    "aws:index/getPartition:getPartition",
    "aws:index/getCallerIdentity:getCallerIdentity",
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
}


@pytest.fixture(scope="module")
def with_settings():
    return run_program(
        "dev",
        {
            "aws:profile": "work",
            "aws:assumeRoles": [{"roleArn": ROLE, "sessionName": "eks-autoscaling", "duration": "1h"}],
            "aws:allowedAccountIds": ["123456789012"],
            "aws:sharedConfigFiles": ["/etc/aws/config"],
        },
    )


def test_the_provider_gets_the_stacks_aws_settings(with_settings):
    provider = with_settings.one(PROVIDER)
    assert provider.input("region") == "ap-northeast-1"
    assert provider.input("profile") == "work"
    assert provider.input("assumeRoles") == [{"roleArn": ROLE, "sessionName": "eks-autoscaling", "duration": "1h"}]
    assert provider.input("allowedAccountIds") == ["123456789012"]
    assert provider.input("sharedConfigFiles") == ["/etc/aws/config"]


def test_without_settings_the_provider_reads_the_environment(dev):
    provider = dev.one(PROVIDER)
    for key in ("profile", "assumeRoles", "allowedAccountIds", "sharedConfigFiles"):
        assert provider.input(key, None) is None, key


@pytest.mark.parametrize("stack", ["dev", "with_settings"])
def test_look_ups_go_through_the_same_provider(request, stack):
    recording = request.getfixturevalue(stack)
    provider = recording.one(PROVIDER)
    aws_invokes = [(token, via) for token, via in recording.invokes if token.startswith("aws:")]
    assert {token for token, _ in aws_invokes} == ACCOUNT_LOOKUPS
    assert all(via == provider.urn for _, via in aws_invokes), aws_invokes


def test_every_aws_resource_uses_the_one_provider(with_settings):
    provider = with_settings.one(PROVIDER)
    for resource in with_settings.resources:
        if resource.type.startswith("aws:"):
            assert resource.provider == provider.urn, resource


@pytest.mark.parametrize(
    "overrides, fragments",
    [
        ({"aws:skipRegionValidation": "true"}, ["`aws:skipRegionValidation`", "aws:assumeRoles", "aws:profile"]),
        ({"aws:defaultTags": {"tags": {"team": "x"}}}, ["`aws:defaultTags`", "eks-autoscaling:tags"]),
        ({"aws:accessKey": "AKIAEXAMPLE"}, ["`aws:accessKey`", "AWS_PROFILE"]),
        ({"aws:assumeRole": {"roleArn": ROLE}}, ["`aws:assumeRole`", "aws:assumeRoles: [{roleArn"]),
        (
            {"aws:assumeRoles": [{"roleArn": ROLE}, {"roleArn": ROLE}]},
            ["`aws:assumeRoles`", "2 roles given", "cannot chain roles"],
        ),
        ({"aws:assumeRoles": [{"roleArn": "deployer"}]}, ["aws:assumeRoles[0].roleArn", "'deployer'", "IAM role ARN"]),
        (
            {"aws:assumeRoles": [{"roleArn": ROLE, "externalId": "x"}]},
            ["aws:assumeRoles[0].externalId", "roleArn, sessionName, duration"],
        ),
        ({"aws:allowedAccountIds": ["1234"]}, ["aws:allowedAccountIds", "'1234'", "12-digit"]),
    ],
)
def test_aws_settings_the_provider_would_not_get_are_refused(overrides, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    message = str(failure.value)
    assert message.startswith("invalid stack configuration")
    for fragment in fragments:
        assert fragment in message, message
    assert failure.value.recording.resources == []
    assert failure.value.recording.invokes == []
