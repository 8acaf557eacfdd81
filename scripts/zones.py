"""Pin a stack's VPC zones by zone ID before `make up` (scripts/stack.sh up runs this).

    python -m scripts.zones pin --stack dev

A program cannot write its stack's configuration, so the first `make up` of a stack does: it writes
`network.zoneIds` into `Pulumi.<stack>.yaml` with one `pulumi config set-all`, which writes the whole
list in one save of the file (the rest of it kept, comments included as far as the Pulumi CLI keeps
them), so an interruption leaves the list whole or absent, never partial. From then on the VPC keeps
those zones whatever the region's list of zones does. Which zones:

- a stack whose state already holds its VPC (created before zones were pinned, or by a first `up`
  that failed later on) keeps the zones of that VPC, read from the state (`pulumi stack export`);
- a new stack gets the zones the program would choose (stackplan/zones.py), looked up with the
  AWS CLI as the stack's AWS provider signs in (its profile, role and files).

A stack with pinned zones is checked against its state instead: zones that differ from those of
the deployed VPC would replace every subnet, and the update is refused before it starts.

With `addons.karpenter.createSpotServiceLinkedRole`, it also asks the account whether the role
AWSServiceRoleForEC2Spot exists already (another stack's, or this stack's, kept by its destroy): if it
does and the stack's state does not hold it, creating it would fail half-way through `pulumi up`, so
`make up` stops first and says to set the key to false.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from stackconfig.aws_provider import AwsProviderSettings, parse_aws_settings
from stackconfig.errors import StackConfigError
from stackconfig.load import PROJECT, parse_stack_config
from stackconfig.model import StackConfig
from stackplan.deployment import check_api_endpoint
from stackplan.zones import choose_zones, region_zones_from

VPC_TYPE = "awsx:ec2:Vpc"
SERVICE_LINKED_ROLE_TYPE = "aws:iam/serviceLinkedRole:ServiceLinkedRole"
SPOT_ROLE_NAME = "AWSServiceRoleForEC2Spot"
SPOT_ROLE_KEY = f"{PROJECT}:addons.karpenter.createSpotServiceLinkedRole"
SUBNET_TYPE = "aws:ec2/subnet:Subnet"
ZONE_IDS_KEY = f"{PROJECT}:network.zoneIds"


class PinError(Exception):
    """Why the zones were not pinned; said on stderr, and `make up` stops."""


def run(command: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """The standard output of a CLI command; PinError with its error output when it fails."""
    try:
        result = subprocess.run(list(command), capture_output=True, text=True, env=dict(env) if env else None)
    except FileNotFoundError:
        raise PinError(f"{command[0]} is not on PATH") from None
    if result.returncode != 0:
        raise PinError(f"`{shlex.join(command)}` failed: {result.stderr.strip() or f'exit status {result.returncode}'}")
    return result.stdout


def stack_values(stack: str) -> dict[str, Any]:
    """The stack's configuration as the program gets it: `<namespace>:<key>` -> value text."""
    text = run(["pulumi", "config", "--show-secrets", "--json", "--stack", stack])
    return {key: entry.get("value") for key, entry in json.loads(text or "{}").items()}


def deployed_zone_ids(state: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The zone IDs of the stack's VPC in a `pulumi stack export` document, in the VPC's order;
    None when the state holds no VPC of this program."""
    resources = (state.get("deployment") or {}).get("resources") or []
    vpcs = [resource for resource in resources if resource.get("type") == VPC_TYPE]
    if not vpcs:
        return None
    if len(vpcs) > 1:
        raise PinError(f"the state holds {len(vpcs)} VPCs of type {VPC_TYPE}; this program builds one")
    vpc = vpcs[0]
    names = (vpc.get("inputs") or {}).get("availabilityZoneNames") or []
    # awsx parents its subnets to the aws.ec2.Vpc inside it: their URNs' type chains extend the component's.
    vpc_chain = _type_chain(vpc.get("urn", ""))
    ids_by_name: dict[str, str] = {}
    for resource in resources:
        if resource.get("type") == SUBNET_TYPE and _type_chain(resource.get("urn", "")).startswith(vpc_chain + "$"):
            outputs = resource.get("outputs") or {}
            if outputs.get("availabilityZone") and outputs.get("availabilityZoneId"):
                ids_by_name[outputs["availabilityZone"]] = outputs["availabilityZoneId"]
    missing = [name for name in names if name not in ids_by_name]
    if missing or not names:
        # Its subnets are not created yet: nothing is addressed, so nothing to keep.
        return None
    return tuple(ids_by_name[name] for name in names)


def _type_chain(urn: str) -> str:
    """The qualified type of a URN (urn:pulumi:<stack>::<project>::<type chain>::<name>): the types of
    its parents and its own, joined by `$`."""
    parts = str(urn).split("::", 3)
    return parts[2] if len(parts) == 4 else ""


def aws_environment(settings: AwsProviderSettings, base: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The AWS CLI's leading options and environment that sign in as the stack's AWS provider:
    its profile, its files, and its role, assumed once for the look-ups."""
    env = dict(base)
    sign_in = settings.kubeconfig_sign_in
    for name, path in sign_in.environment.items():
        env[name] = os.path.expanduser(path)
    options = ["--profile", sign_in.profile] if sign_in.profile else []
    if sign_in.role_arn:
        text = run(
            [
                "aws",
                *options,
                "sts",
                "assume-role",
                "--role-arn",
                sign_in.role_arn,
                "--role-session-name",
                "eks-autoscaling-zones",
                "--output",
                "json",
            ],
            env,
        )
        credentials = json.loads(text)["Credentials"]
        env.update(
            AWS_ACCESS_KEY_ID=credentials["AccessKeyId"],
            AWS_SECRET_ACCESS_KEY=credentials["SecretAccessKey"],
            AWS_SESSION_TOKEN=credentials["SessionToken"],
        )
        options = []
    return options, env


def chosen_zone_ids(
    config: StackConfig, settings: AwsProviderSettings, base_env: Mapping[str, str]
) -> tuple[tuple[str, str | None], ...]:
    """The zones the program would choose for a new stack, looked up with the AWS CLI."""
    options, env = aws_environment(settings, base_env)
    aws = ["aws", *options, "--region", config.region, "--output", "json"]
    zones = json.loads(
        run([*aws, "ec2", "describe-availability-zones", "--filters", "Name=zone-type,Values=availability-zone"], env)
    )["AvailabilityZones"]
    types = config.node_group.instance_types
    offerings = json.loads(
        run(
            [
                *aws,
                "ec2",
                "describe-instance-type-offerings",
                "--location-type",
                "availability-zone-id",
                "--filters",
                f"Name=instance-type,Values={','.join(types)}",
            ],
            env,
        )
    )["InstanceTypeOfferings"]
    region_zones = region_zones_from(
        config.region,
        [zone["ZoneName"] for zone in zones],
        [zone["ZoneId"] for zone in zones],
        [zone["ZoneId"] for zone in zones if zone.get("State") == "available"],
        [(offer["Location"], offer["InstanceType"]) for offer in offerings],
        types,
    )
    chosen = choose_zones(region_zones, config.network.availability_zones)
    return tuple(zip(chosen.zone_ids, chosen.names, strict=True))


def set_zone_ids_command(stack: str, zone_ids: Sequence[str]) -> list[str]:
    """The one Pulumi CLI command that writes the whole of network.zoneIds."""
    items = [
        part for index, zone_id in enumerate(zone_ids) for part in ("--plaintext", f"{ZONE_IDS_KEY}[{index}]={zone_id}")
    ]
    return ["pulumi", "config", "set-all", "--path", *items, "--stack", stack]


def refuse_a_change(stack: str, pinned: Sequence[str], deployed: Sequence[str]) -> PinError:
    put_back = shlex.join(set_zone_ids_command(stack, deployed))
    return PinError(
        f"`network.zoneIds` is {', '.join(pinned)}, but the VPC of stack '{stack}' has its subnets in "
        f"{', '.join(deployed)}. The update would re-address the subnets from the first zone that differs on "
        "(their CIDRs follow the order of the zones), replacing those subnets with their route tables and NAT "
        "gateways, and with them the system node group, the load balancers and every node; EKS refuses to move "
        "the cluster to subnets in other zones, so it would fail half-way. Put network.zoneIds back in "
        f"Pulumi.{stack}.yaml ({put_back}); for other zones, create a new stack."
    )


def spot_role_in_state(state: Mapping[str, Any]) -> bool:
    """Whether the stack's state holds the spot service-linked role (this stack created it)."""
    resources = (state.get("deployment") or {}).get("resources") or []
    return any(resource.get("type") == SERVICE_LINKED_ROLE_TYPE for resource in resources)


def check_spot_role(
    stack: str, config: StackConfig, values: Mapping[str, Any], state: Mapping[str, Any], base_env: Mapping[str, str]
) -> str:
    """PinError when the stack would create AWSServiceRoleForEC2Spot and the account has it already;
    a note when the account could not be asked; "" otherwise."""
    if not config.addons.karpenter.create_spot_service_linked_role or spot_role_in_state(state):
        return ""
    options, env = aws_environment(parse_aws_settings(values), base_env)
    command = ["aws", *options, "iam", "get-role", "--role-name", SPOT_ROLE_NAME, "--output", "json"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env)
    except FileNotFoundError:
        raise PinError("aws is not on PATH") from None
    if result.returncode == 0:
        raise PinError(
            f"`{SPOT_ROLE_KEY}` is true, but the account already has the role {SPOT_ROLE_NAME} (another stack made "
            "it, the account ran spot before, or this stack made it and its destroy kept it, as it does): creating "
            f"it again fails with `InvalidInput: Service role name {SPOT_ROLE_NAME} has been taken in this account` "
            f"half-way through `pulumi up`. Set it to false in Pulumi.{stack}.yaml: spot launches use the role that "
            "is there"
        )
    if "NoSuchEntity" in result.stderr:
        return ""
    return (
        f"note: could not check whether the account has {SPOT_ROLE_NAME} (`{shlex.join(command)}`: "
        f"{result.stderr.strip()[:300] or f'exit status {result.returncode}'}); if it has, `pulumi up` fails to "
        f"create it: set {SPOT_ROLE_KEY} to false then"
    )


def pin(stack: str, base_env: Mapping[str, str]) -> str:
    """Pin the stack's zones if they are not, or check them against the state; what was done."""
    values = stack_values(stack)
    config = parse_stack_config(values)
    # What the program would refuse anyway stops `make up` before the stack file is written to.
    check_api_endpoint(config)
    state_text = run(["pulumi", "stack", "export", "--stack", stack])
    state = json.loads(state_text or "{}")
    deployed = deployed_zone_ids(state)
    pinned = config.network.zone_ids
    if pinned and deployed is not None and tuple(pinned) != deployed:
        raise refuse_a_change(stack, pinned, deployed)
    # Before the stack file is written to: a role the account has stops `make up` here.
    note = check_spot_role(stack, config, values, state, base_env)
    if pinned:
        return note
    if deployed is not None:
        zones: tuple[tuple[str, str | None], ...] = tuple((zone_id, None) for zone_id in deployed)
        source = "those of its VPC"
    else:
        zones = chosen_zone_ids(config, parse_aws_settings(values), base_env)
        source = "the first of the region by name that EKS supports and that offer nodeGroup.instanceTypes"
    try:
        run(set_zone_ids_command(stack, [zone_id for zone_id, _ in zones]))
    except PinError as error:
        raise PinError(
            f"{error}. network.zoneIds was written in one step, so Pulumi.{stack}.yaml holds all of it or none: "
            "run `make up` again"
        ) from None
    shown = ", ".join(zone_id if name is None else f"{zone_id} ({name})" for zone_id, name in zones)
    said = (
        f"Pinned the VPC's zones of stack '{stack}' to {shown}: {source}. They are network.zoneIds in "
        f"Pulumi.{stack}.yaml now; commit it. From now on the VPC keeps these zones."
    )
    return f"{note}\n{said}" if note else said


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.zones", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pin_command = commands.add_parser("pin", help="pin the stack's zones, or check the pinned ones against its state")
    pin_command.add_argument("--stack", required=True)
    args = parser.parse_args(argv)
    try:
        said = pin(args.stack, os.environ)
    except (PinError, StackConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if said:
        print(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
