"""The kubeconfig of the Kubernetes provider and of the `kubeconfig` output signs in as the AWS
provider does, for every combination of the stack's `aws:*` sign-in settings."""

import itertools
import json

import pytest

from components.cluster import with_exec_environment
from tests.harness import ProgramFailed, run_program

ROLE = "arn:aws:iam::111122223333:role/deployer"
EXEC_INFO = {"KUBERNETES_EXEC_INFO": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}'}
SETTINGS = {
    "profile": {"aws:profile": "team-admin"},
    "role": {"aws:assumeRoles": [{"roleArn": ROLE, "sessionName": "eks-autoscaling"}]},
    "config": {"aws:sharedConfigFiles": ["/etc/aws/team-config"]},
    "credentials": {"aws:sharedCredentialsFiles": ["~/.aws/ci-credentials"]},
}
COMBINATIONS = [
    combination for size in range(len(SETTINGS) + 1) for combination in itertools.combinations(SETTINGS, size)
]


def _exec(kubeconfig: dict) -> dict:
    (user,) = kubeconfig["users"]
    assert kubeconfig["contexts"][0]["context"]["user"] == user["name"]
    return user["user"]["exec"]


@pytest.mark.parametrize("combination", COMBINATIONS, ids=lambda combination: "+".join(combination) or "none")
def test_the_kubeconfig_signs_in_as_the_aws_provider_does(combination):
    overrides = {key: value for name in combination for key, value in SETTINGS[name].items()}
    recording = run_program("dev", overrides)

    provider_kubeconfig = recording.one("pulumi:providers:kubernetes").input("kubeconfig")
    exported = json.loads(recording.outputs["kubeconfig"])
    # The Helm releases, `make kubeconfig` and `make destroy`'s drain all use the same one.
    assert exported == provider_kubeconfig
    assert "kubeconfig" in recording.secret_outputs
    command = _exec(exported)
    assert command["command"] == "aws"
    expected_args = ["--region", "ap-northeast-1", "eks", "get-token", "--cluster-name", "karpenter-test"]
    expected_args += ["--output", "json"]
    if "role" in combination:
        expected_args += ["--role", ROLE]
    if "profile" in combination:
        # An argument, not AWS_PROFILE, which credentials in the environment would override.
        expected_args += ["--profile", "team-admin"]
    assert command["args"] == expected_args
    expected_env = dict(EXEC_INFO)
    if "config" in combination:
        expected_env["AWS_CONFIG_FILE"] = "/etc/aws/team-config"
    if "credentials" in combination:
        expected_env["AWS_SHARED_CREDENTIALS_FILE"] = "~/.aws/ci-credentials"
    assert {entry["name"]: entry["value"] for entry in command["env"]} == expected_env
    assert len(command["env"]) == len(expected_env)

    # The AWS provider got the same settings.
    aws = recording.one("pulumi:providers:aws")
    assert aws.input("profile", None) == ("team-admin" if "profile" in combination else None)
    assert aws.input("sharedConfigFiles", None) == (["/etc/aws/team-config"] if "config" in combination else None)
    assert aws.input("sharedCredentialsFiles", None) == (
        ["~/.aws/ci-credentials"] if "credentials" in combination else None
    )
    assert bool(aws.input("assumeRoles", None)) == ("role" in combination)


def test_the_kubeconfig_is_not_pulumi_eks_s_profile_less_one():
    # pulumi-eks's `kubeconfigJson` leaves the profile out on purpose; the stack must not use it.
    recording = run_program("dev", SETTINGS["profile"])
    eks = recording.one("eks:index:Cluster")
    assert "--profile" not in _exec(json.loads(eks.outputs["kubeconfigJson"]))["args"]
    assert "--profile" in _exec(json.loads(recording.outputs["kubeconfig"]))["args"]
    assert ("eks:index:Cluster/getKubeconfig", None) in recording.invokes


@pytest.mark.parametrize(
    "overrides, fragments",
    [
        (
            {"aws:sharedConfigFiles": ["/etc/aws/config", "/etc/aws/more"]},
            ["`aws:sharedConfigFiles`", "2 files given; give one", "AWS_CONFIG_FILE"],
        ),
        (
            {"aws:sharedCredentialsFiles": ["/a", "/b", "/c"]},
            ["`aws:sharedCredentialsFiles`", "3 files given", "AWS_SHARED_CREDENTIALS_FILE"],
        ),
        (
            {"aws:sharedConfigFiles": ["aws/config"]},
            ["`aws:sharedConfigFiles`", "'aws/config' is a relative path", "under ~/"],
        ),
        (
            {"aws:sharedCredentialsFiles": ["./credentials"]},
            ["`aws:sharedCredentialsFiles`", "'./credentials' is a relative path"],
        ),
    ],
)
def test_files_the_kubeconfig_could_not_use_are_refused(overrides, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    for fragment in fragments:
        assert fragment in str(failure.value), str(failure.value)
    assert failure.value.recording.resources == []


def test_the_exec_environment_replaces_a_variable_of_the_same_name():
    kubeconfig = {
        "users": [
            {
                "name": "aws",
                "user": {"exec": {"command": "aws", "env": [{"name": "AWS_CONFIG_FILE", "value": "/old"}]}},
            },
            {"name": "token", "user": {"token": "abc"}},
        ]
    }
    result = json.loads(with_exec_environment(json.dumps(kubeconfig), {"AWS_CONFIG_FILE": "/new"}))
    assert result["users"][0]["user"]["exec"]["env"] == [{"name": "AWS_CONFIG_FILE", "value": "/new"}]
    assert result["users"][1] == kubeconfig["users"][1]
    assert with_exec_environment('{"users": []}', {}) == '{"users": []}'
