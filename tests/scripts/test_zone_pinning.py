"""`make up` pins a stack's zones by ID before its first `pulumi up` (python -m scripts.zones pin), with
fake `pulumi` and `aws` that answer from files and log every call."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from scripts import zones

STATE_VPC_URN = (
    "urn:pulumi:dev::eks-autoscaling::eks-autoscaling:index:EksAutoscaling$eks-autoscaling:network:Network"
    "$awsx:ec2:Vpc::network-vpc"
)
SUBNET_CHAIN = STATE_VPC_URN.split("::")[2] + "$aws:ec2/vpc:Vpc$aws:ec2/subnet:Subnet"
US_EAST_1 = {
    "us-east-1a": "use1-az2",
    "us-east-1b": "use1-az4",
    "us-east-1c": "use1-az3",
    "us-east-1d": "use1-az6",
    "us-east-1e": "use1-az1",
}


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


class Fakes:
    """`pulumi` and `aws` on PATH: answers in files under `directory`, every call in `calls`."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.calls = directory / "calls"
        _executable(
            directory / "pulumi",
            f"""#!/bin/sh
echo "pulumi $*" >> "{self.calls}"
case "$1 $2" in
    "config --show-secrets") cat "{directory}/config.json" ;;
    "stack export") cat "{directory}/state.json" ;;
    "config set"|"config set-all")
        # A write of the stack file: the INTERRUPT_AT-th one is interrupted (Ctrl-C) before it saves.
        writes=$(($(cat "{directory}/write-count" 2>/dev/null || echo 0) + 1))
        echo "$writes" > "{directory}/write-count"
        if [ "$writes" = "${{INTERRUPT_AT:-0}}" ]; then echo "interrupted" >&2; exit 130; fi
        echo "$*" >> "{directory}/saved" ;;
    *) echo "unexpected: pulumi $*" >&2; exit 2 ;;
esac
""",
        )
        _executable(
            directory / "aws",
            f"""#!/bin/sh
echo "aws $* | config=${{AWS_CONFIG_FILE:-}} key=${{AWS_ACCESS_KEY_ID:-}}" >> "{self.calls}"
case "$*" in
    *"sts assume-role"*) cat "{directory}/assume-role.json" ;;
    *"ec2 describe-availability-zones"*) cat "{directory}/zones.json" ;;
    *"ec2 describe-instance-type-offerings"*) cat "{directory}/offerings.json" ;;
    *"iam get-role --role-name AWSServiceRoleForEC2Spot"*)
        if [ -f "{directory}/spot-role.json" ]; then cat "{directory}/spot-role.json"; exit 0; fi
        if [ -f "{directory}/iam-denied" ]; then
            echo "An error occurred (AccessDenied) when calling the GetRole operation: not authorized" >&2; exit 254
        fi
        echo "An error occurred (NoSuchEntity) when calling the GetRole operation: The role with name AWSServiceRoleForEC2Spot cannot be found." >&2
        exit 254 ;;
    *) echo "unexpected: aws $*" >&2; exit 2 ;;
esac
""",
        )
        self.state({})
        self.region(US_EAST_1)
        (directory / "assume-role.json").write_text(
            json.dumps({"Credentials": {"AccessKeyId": "ASIAROLE", "SecretAccessKey": "s", "SessionToken": "t"}})
        )

    def config(self, values: dict) -> None:
        entries = {
            key: {"value": value if isinstance(value, str) else json.dumps(value), "secret": False}
            for key, value in values.items()
        }
        (self.directory / "config.json").write_text(json.dumps(entries))

    def state(self, document: dict) -> None:
        (self.directory / "state.json").write_text(json.dumps(document))

    def region(self, zones_by_name: dict, *, unavailable=(), not_offered=None) -> None:
        zones = [
            {"ZoneName": name, "ZoneId": zone_id, "State": "impaired" if zone_id in unavailable else "available"}
            for name, zone_id in zones_by_name.items()
        ]
        (self.directory / "zones.json").write_text(json.dumps({"AvailabilityZones": zones}))
        offers = [
            {"InstanceType": instance_type, "Location": zone_id, "LocationType": "availability-zone-id"}
            for zone_id in zones_by_name.values()
            for instance_type in ("m5.large", "m6i.large")
            if instance_type not in (not_offered or {}).get(zone_id, ())
        ]
        (self.directory / "offerings.json").write_text(json.dumps({"InstanceTypeOfferings": offers}))

    def log(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []

    def pinned(self) -> list[list[str]]:
        """[key, value] of every item a write command was given, in order (saved or not)."""
        return [
            item.split("=", 1)
            for line in self.log()
            if line.startswith("pulumi config set-all")
            for item in re.findall(r"--plaintext (\S+)", line)
        ]

    def saved(self) -> list[str]:
        """The zone IDs the stack file holds after the writes that were saved."""
        path = self.directory / "saved"
        lines = path.read_text().splitlines() if path.exists() else []
        return [item.split("=", 1)[1] for line in lines for item in re.findall(r"--plaintext (\S+)", line)]


@pytest.fixture
def fakes(tmp_path, monkeypatch) -> Fakes:
    directory = tmp_path / "fakes"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_ACCESS_KEY_ID", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(name, raising=False)
    return Fakes(directory)


def prod_like(**network) -> dict:
    return {
        "aws:region": "us-east-1",
        "eks-autoscaling:network": {"availabilityZones": 3, **network},
        "eks-autoscaling:nodeGroup": {"instanceTypes": ["m6i.large", "m5.large"], "minSize": 3, "desiredSize": 3},
    }


def state_with_vpc(names_to_ids: dict) -> dict:
    subnets = [
        {
            "urn": f"urn:pulumi:dev::eks-autoscaling::{SUBNET_CHAIN}::network-vpc-{kind}-{index}",
            "type": "aws:ec2/subnet:Subnet",
            "outputs": {"availabilityZone": name, "availabilityZoneId": zone_id},
        }
        for index, (name, zone_id) in enumerate(names_to_ids.items())
        for kind in ("public", "private")
    ]
    vpc = {"urn": STATE_VPC_URN, "type": "awsx:ec2:Vpc", "inputs": {"availabilityZoneNames": list(names_to_ids)}}
    return {"version": 3, "deployment": {"resources": [vpc, *subnets]}}


def test_a_new_stack_gets_the_zones_the_program_would_choose(fakes, capsys):
    fakes.config(prod_like())
    fakes.region(US_EAST_1, not_offered={"use1-az4": {"m6i.large"}})
    assert zones.main(["pin", "--stack", "dev"]) == 0
    # use1-az3 (EKS refuses it) and use1-az4 (no m6i.large) are left out; then the first by name.
    assert fakes.pinned() == [
        ["eks-autoscaling:network.zoneIds[0]", "use1-az2"],
        ["eks-autoscaling:network.zoneIds[1]", "use1-az6"],
        ["eks-autoscaling:network.zoneIds[2]", "use1-az1"],
    ]
    said = capsys.readouterr().out
    assert "Pinned the VPC's zones of stack 'dev' to use1-az2 (us-east-1a), use1-az6 (us-east-1d), use1-az1" in said
    assert "network.zoneIds in Pulumi.dev.yaml now; commit it" in said
    log = fakes.log()
    assert any(
        "--region us-east-1 --output json ec2 describe-instance-type-offerings --location-type availability-zone-id"
        " --filters Name=instance-type,Values=m6i.large,m5.large" in line
        for line in log
    )
    assert any(
        "ec2 describe-availability-zones --filters Name=zone-type,Values=availability-zone" in line for line in log
    )


def test_the_look_ups_sign_in_as_the_stacks_provider(fakes, tmp_path):
    role = "arn:aws:iam::111122223333:role/deployer"
    fakes.config(
        {
            **prod_like(),
            "aws:profile": "team-admin",
            "aws:assumeRoles": [{"roleArn": role}],
            "aws:sharedConfigFiles": ["~/.aws/team-config"],
        }
    )
    assert zones.main(["pin", "--stack", "dev"]) == 0
    aws_calls = [line for line in fakes.log() if line.startswith("aws ")]
    config_file = f"config={tmp_path / 'home' / '.aws' / 'team-config'}"
    assert aws_calls[0].startswith(f"aws --profile team-admin sts assume-role --role-arn {role} ")
    assert aws_calls[0].endswith(f"| {config_file} key=")
    # Then as the role, whose credentials replace the profile.
    for line in aws_calls[1:]:
        assert line.startswith("aws --region us-east-1 ") and line.endswith(f"| {config_file} key=ASIAROLE"), line


def test_a_stack_whose_vpc_exists_keeps_its_zones(fakes, capsys):
    fakes.config(prod_like())
    fakes.state(state_with_vpc({"us-east-1a": "use1-az2", "us-east-1b": "use1-az4", "us-east-1c": "use1-az3"}))
    assert zones.main(["pin", "--stack", "dev"]) == 0
    # Whatever the program would choose today: the VPC's subnets are where they are.
    assert [value for _, value in fakes.pinned()] == ["use1-az2", "use1-az4", "use1-az3"]
    assert not any(line.startswith("aws ") for line in fakes.log())
    assert "use1-az2, use1-az4, use1-az3: those of its VPC" in capsys.readouterr().out


def test_pinned_zones_that_match_the_vpc_are_left_alone(fakes, capsys):
    fakes.config(prod_like(zoneIds=["use1-az2", "use1-az4", "use1-az6"]))
    fakes.state(state_with_vpc({"us-east-1a": "use1-az2", "us-east-1b": "use1-az4", "us-east-1d": "use1-az6"}))
    assert zones.main(["pin", "--stack", "dev"]) == 0
    assert fakes.pinned() == []
    assert capsys.readouterr().out == ""


def test_pinned_zones_that_differ_from_the_vpc_stop_the_update(fakes, capsys):
    fakes.config(prod_like(zoneIds=["use1-az2", "use1-az6", "use1-az1"]))
    fakes.state(state_with_vpc({"us-east-1a": "use1-az2", "us-east-1b": "use1-az4", "us-east-1d": "use1-az6"}))
    assert zones.main(["pin", "--stack", "dev"]) == 1
    error = capsys.readouterr().err
    for fragment in (
        "`network.zoneIds` is use1-az2, use1-az6, use1-az1, but the VPC of stack 'dev' has its subnets in "
        "use1-az2, use1-az4, use1-az6",
        "replacing those subnets with their route tables and NAT gateways",
        "it would fail half-way",
        "pulumi config set-all --path --plaintext 'eks-autoscaling:network.zoneIds[0]=use1-az2' --plaintext "
        "'eks-autoscaling:network.zoneIds[1]=use1-az4' --plaintext 'eks-autoscaling:network.zoneIds[2]=use1-az6' "
        "--stack dev",
        "create a new stack",
    ):
        assert fragment in error, error
    assert fakes.pinned() == []


def test_a_count_change_on_pinned_zones_is_refused_before_any_look_up(fakes, capsys):
    fakes.config(prod_like(availabilityZones=2, zoneIds=["use1-az2", "use1-az4", "use1-az6"]))
    assert zones.main(["pin", "--stack", "dev"]) == 1
    error = capsys.readouterr().err
    assert "availabilityZones is 2 but zoneIds pins 3 zones" in error and "re-addresses every subnet" in error
    assert [line for line in fakes.log() if not line.startswith("pulumi config --show-secrets")] == []


def test_a_stack_the_program_would_refuse_is_not_written_to(fakes, capsys):
    fakes.config({**prod_like(), "eks-autoscaling:cluster": {"publicAccessCidrs": []}})
    assert zones.main(["pin", "--stack", "dev"]) == 1
    assert "`cluster.publicAccessCidrs` is empty" in capsys.readouterr().err
    assert [line.split()[1] for line in fakes.log()] == ["config"]
    assert fakes.pinned() == []


def test_too_few_usable_zones_are_named(fakes, capsys):
    fakes.config(prod_like(availabilityZones=5))
    assert zones.main(["pin", "--stack", "dev"]) == 1
    error = capsys.readouterr().err
    assert "`network.availabilityZones` is 5 but us-east-1 has only 4 zones the cluster can use" in error
    assert "use1-az3 (us-east-1c): EKS does not support cluster subnets there" in error
    assert fakes.pinned() == []


def test_an_aws_cli_failure_is_said(fakes, capsys):
    fakes.config(prod_like())
    (fakes.directory / "zones.json").unlink()
    assert zones.main(["pin", "--stack", "dev"]) == 1
    error = capsys.readouterr().err
    assert "error: `aws --region us-east-1 --output json ec2 describe-availability-zones --filters" in error
    assert "` failed: cat: " in error
    assert fakes.pinned() == []


def test_a_vpc_whose_subnets_do_not_exist_yet_pins_nothing_from_the_state():
    state = state_with_vpc({"us-east-1a": "use1-az2", "us-east-1b": "use1-az4"})
    state["deployment"]["resources"] = state["deployment"]["resources"][:1]
    assert zones.deployed_zone_ids(state) is None
    assert zones.deployed_zone_ids({}) is None
    assert zones.deployed_zone_ids(state_with_vpc({"us-east-1b": "use1-az4", "us-east-1a": "use1-az2"})) == (
        "use1-az4",
        "use1-az2",
    )


def test_the_whole_list_is_written_in_one_step(fakes, capsys):
    fakes.config(prod_like())
    assert zones.main(["pin", "--stack", "dev"]) == 0
    writes = [line for line in fakes.log() if line.startswith("pulumi config set")]
    assert len(writes) == 1 and writes[0].startswith("pulumi config set-all --path ")
    assert fakes.saved() == ["use1-az2", "use1-az4", "use1-az6"]


@pytest.mark.parametrize("interrupt_at", [1, 2, 3])
def test_an_interrupted_pin_leaves_all_of_the_list_or_none(fakes, capsys, monkeypatch, interrupt_at):
    # Ctrl-C lands on one of the writes: before it, the stack file is as it was; after it, complete.
    fakes.config(prod_like())
    monkeypatch.setenv("INTERRUPT_AT", str(interrupt_at))
    result = zones.main(["pin", "--stack", "dev"])
    assert fakes.saved() in ([], ["use1-az2", "use1-az4", "use1-az6"])
    if result != 0:
        assert fakes.saved() == []
        error = capsys.readouterr().err
        assert "holds all of it or none: run `make up` again" in error


# --- the spot service-linked role ----------------------------------------------------------------

SPOT = {"eks-autoscaling:addons": {"karpenter": {"createSpotServiceLinkedRole": True}}}


def test_a_spot_role_the_account_has_stops_make_up_before_anything_is_written(fakes, capsys):
    fakes.config({**prod_like(), **SPOT})
    (fakes.directory / "spot-role.json").write_text(json.dumps({"Role": {"RoleName": "AWSServiceRoleForEC2Spot"}}))
    assert zones.main(["pin", "--stack", "dev"]) == 1
    error = capsys.readouterr().err
    assert "`eks-autoscaling:addons.karpenter.createSpotServiceLinkedRole` is true" in error
    assert "already has the role AWSServiceRoleForEC2Spot" in error and "Set it to false in Pulumi.dev.yaml" in error
    assert fakes.pinned() == []


def test_a_spot_role_the_account_lacks_is_left_to_the_stack(fakes, capsys):
    fakes.config({**prod_like(), **SPOT})
    assert zones.main(["pin", "--stack", "dev"]) == 0
    assert any("iam get-role --role-name AWSServiceRoleForEC2Spot" in line for line in fakes.log())
    assert [value for _, value in fakes.pinned()] == ["use1-az2", "use1-az4", "use1-az6"]


def test_a_spot_role_this_stack_holds_is_not_looked_up(fakes, capsys):
    fakes.config({**prod_like(zoneIds=["use1-az2", "use1-az4", "use1-az6"]), **SPOT})
    state = state_with_vpc({"us-east-1a": "use1-az2", "us-east-1b": "use1-az4", "us-east-1d": "use1-az6"})
    state["deployment"]["resources"].append({"type": "aws:iam/serviceLinkedRole:ServiceLinkedRole", "urn": "x"})
    fakes.state(state)
    (fakes.directory / "spot-role.json").write_text("{}")
    assert zones.main(["pin", "--stack", "dev"]) == 0
    assert not any(line.startswith("aws ") for line in fakes.log())


def test_a_spot_role_that_cannot_be_looked_up_is_said_and_make_up_goes_on(fakes, capsys):
    fakes.config({**prod_like(zoneIds=["use1-az2", "use1-az4", "use1-az6"]), **SPOT})
    (fakes.directory / "iam-denied").write_text("")
    assert zones.main(["pin", "--stack", "dev"]) == 0
    said = capsys.readouterr().out
    assert "could not check whether the account has AWSServiceRoleForEC2Spot" in said and "AccessDenied" in said
