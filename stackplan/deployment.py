"""From a validated configuration to what gets built: the zones, the capacity plan and the
NodePool limits, and the conversions between the configuration and the component's inputs.

The stack program and the EksAutoscaling component both go through `plan_deployment`, so a
stack file and a component's inputs are refused for the same reasons with the same messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from sizing.planning.planner import CapacityPlan
from stackconfig.aws_provider import AwsProviderSettings, KubeconfigSignIn, check_credential_file_path
from stackconfig.errors import StackConfigError
from stackconfig.load import PROJECT, REGION_KEY, parse_stack_config
from stackconfig.model import StackConfig
from stackplan.capacity import node_pool_limits, plan_for
from stackplan.zones import RegionZones, vpc_zones

# Inputs of the component that are not keys of the stack configuration: the region comes from
# `aws:region` in a stack, and a stack always builds its own VPC.
EXISTING_VPC_INPUTS = ("vpc_id", "public_subnet_ids", "private_subnet_ids")
# The kubeconfig signs in as the AWS provider does; a stack takes these from `aws:profile`,
# `aws:assumeRoles`, `aws:sharedConfigFiles` and `aws:sharedCredentialsFiles`.
KUBECONFIG_INPUTS = ("aws_profile", "aws_role_arn", "aws_shared_config_file", "aws_shared_credentials_file")
COMPONENT_ONLY_INPUTS = ("region", *EXISTING_VPC_INPUTS, *KUBECONFIG_INPUTS)


@dataclass(frozen=True)
class Deployment:
    """config: the validated configuration. vpc_zones: the names of the zones of the VPC the
    component builds (empty with an existing VPC), vpc_zone_ids their IDs. node_pool_zones: the
    zones the NodePool may use. warnings: for the operator, about the zones."""

    config: StackConfig
    vpc_zones: tuple[str, ...]
    node_pool_zones: tuple[str, ...]
    plan: CapacityPlan
    limits: Mapping[str, str]
    vpc_zone_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def check_aws_auth_sign_in(authentication_mode: str, sign_in: KubeconfigSignIn, stack_keys: bool = True) -> None:
    """StackConfigError for `API_AND_CONFIG_MAP` with AWS CLI files of the stack's own: pulumi-eks
    writes the aws-auth ConfigMap through a Kubernetes provider of its own, whose kubeconfig
    runs `aws eks get-token` without AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE, so the
    profile or credentials in those files are not found and `pulumi up` fails there."""
    if authentication_mode != "API_AND_CONFIG_MAP" or not sign_in.environment:
        return
    names = (
        {"config_file": "`aws:sharedConfigFiles`", "credentials_file": "`aws:sharedCredentialsFiles`"}
        if stack_keys
        else {"config_file": "`awsSharedConfigFile`", "credentials_file": "`awsSharedCredentialsFile`"}
    )
    given = " and ".join(name for field, name in names.items() if getattr(sign_in, field))
    raise StackConfigError(
        [
            f"`cluster.authenticationMode` API_AND_CONFIG_MAP cannot be combined with {given}: pulumi-eks writes "
            "the aws-auth ConfigMap through a Kubernetes provider of its own, which signs in without the AWS CLI "
            "files, so `pulumi up` would fail there. Use authenticationMode API (access entries, the default), "
            "or leave the files unset and keep the profile in the default ~/.aws/config and ~/.aws/credentials"
        ]
    )


def check_api_endpoint(config: StackConfig, *, existing_vpc: bool = False) -> None:
    """StackConfigError unless the program can reach the API server it creates: Helm releases and
    Kubernetes objects are applied from where `pulumi up` runs, right after the cluster exists.

    A stack file may leave `cluster.publicAccessCidrs` empty for its operator to fill in (prod
    does): the configuration is valid, for planning and review, but not deployable until then."""
    cluster = config.cluster
    problems = []
    if cluster.endpoint_public_access and not cluster.public_access_cidrs:
        problems.append(
            "`cluster.publicAccessCidrs` is empty while `cluster.endpointPublicAccess` is true: list the public "
            "addresses that run `pulumi up` and kubectl (yours: `curl https://checkip.amazonaws.com`, with /32), "
            "in the stack file or with `pulumi config set --path 'eks-autoscaling:cluster.publicAccessCidrs[0]' "
            '<address>/32`; or set endpointPublicAccess to false (docs/upgrades.md, "A private API endpoint")'
        )
    if not cluster.endpoint_public_access and not existing_vpc and not cluster.deploy_from_inside_vpc:
        problems.append(
            "`cluster.endpointPublicAccess` is false on a stack that builds its own VPC: the API server then "
            "answers only inside that VPC, which this `up` creates, so the first Helm release fails after the NAT "
            "gateways, the control plane and the nodes are running and billed, and `make destroy` cannot drain "
            "the cluster from outside. Create the stack with endpointPublicAccess true and publicAccessCidrs "
            'limited to your address, then switch to private in a second step (docs/upgrades.md, "A private API '
            'endpoint"); or, if `pulumi up` runs inside that VPC or a network routed into it, set '
            "`cluster.deployFromInsideVpc: true`"
        )
    if problems:
        raise StackConfigError(problems)


def plan_deployment(config: StackConfig, region_zones: RegionZones, *, existing_vpc: bool = False) -> Deployment:
    """Zones, capacity plan and limits of a validated configuration; StackConfigError when the
    region cannot host it, the API server would be out of reach, or the plan refuses it.

    The VPC takes the pinned `network.zoneIds`, or else the first usable zones by name
    (stackplan/zones.py). With an existing VPC the NodePool may use every available zone of
    the region unless `nodePool.zones` narrows it: Karpenter only launches into the private
    subnets it is given anyway."""
    check_api_endpoint(config, existing_vpc=existing_vpc)
    if existing_vpc:
        region_names = region_zones.available_names
        outside = [zone for zone in config.node_pool.zones or () if zone not in region_names]
        if outside:
            raise StackConfigError(
                [
                    f"`nodePool.zones`: {', '.join(outside)} not among the available zones of {config.region} "
                    f"({', '.join(region_names)})"
                ]
            )
        names: tuple[str, ...] = ()
        zone_ids: tuple[str, ...] = ()
        warnings: tuple[str, ...] = ()
        default_zones = region_names
    else:
        chosen = vpc_zones(region_zones, config.network.availability_zones, config.network.zone_ids)
        names, zone_ids, warnings = chosen.names, chosen.zone_ids, chosen.warnings
        outside = [zone for zone in config.node_pool.zones or () if zone not in names]
        if outside:
            raise StackConfigError(
                [
                    f"`nodePool.zones`: {', '.join(outside)} not among the VPC's zones ({', '.join(names)}); "
                    "raise network.availabilityZones or choose among those"
                ]
            )
        default_zones = list(names)
    node_pool_zones = tuple(config.node_pool.zones or default_zones)
    plan = plan_for(config, names or node_pool_zones)
    return Deployment(config, names, node_pool_zones, plan, node_pool_limits(config, plan), zone_ids, warnings)


def config_from_args(args: Mapping[str, Any], region: str) -> StackConfig:
    """Validate the component's inputs (Python names, as the SDK hands them over) as a stack
    configuration: the same model, defaults and messages as `Pulumi.<stack>.yaml`."""
    raw: dict[str, Any] = {REGION_KEY: region}
    for name, value in args.items():
        if name in COMPONENT_ONLY_INPUTS or value is None:
            continue
        raw[f"{PROJECT}:{to_camel(name)}"] = value
    # A region given as an input is named as that input; one from the AWS provider, as its setting.
    return parse_stack_config(raw, PROJECT, region_key="region" if args.get("region") is not None else REGION_KEY)


def args_from_config(config: StackConfig, aws_settings: AwsProviderSettings | None = None) -> dict[str, Any]:
    """The component's inputs that reproduce `config` and the stack's AWS settings (the stack
    program builds its component from them)."""
    args = {"region": config.region, **config.model_dump(mode="json", exclude={"region"}, exclude_none=True)}
    if aws_settings is not None:
        sign_in = aws_settings.kubeconfig_sign_in
        args.update(
            {
                key: value
                for key, value in (
                    ("aws_profile", sign_in.profile),
                    ("aws_role_arn", sign_in.role_arn),
                    ("aws_shared_config_file", sign_in.config_file),
                    ("aws_shared_credentials_file", sign_in.credentials_file),
                )
                if value
            }
        )
    return args


def kubeconfig_sign_in(args: Mapping[str, Any]) -> KubeconfigSignIn:
    """How the component's kubeconfig signs in, from its inputs; StackConfigError for a file the
    kubeconfig could not find from elsewhere."""
    problems = []
    for name in ("aws_shared_config_file", "aws_shared_credentials_file"):
        if args.get(name) is not None:
            try:
                check_credential_file_path(str(args[name]))
            except ValueError as error:
                problems.append(f"`{to_camel(name)}`: {error}")
    if problems:
        raise StackConfigError(problems)
    sign_in = KubeconfigSignIn(
        profile=args.get("aws_profile"),
        role_arn=args.get("aws_role_arn"),
        config_file=args.get("aws_shared_config_file"),
        credentials_file=args.get("aws_shared_credentials_file"),
    )
    cluster = args.get("cluster") or {}
    if isinstance(cluster, Mapping):
        check_aws_auth_sign_in(str(cluster.get("authentication_mode", "API")), sign_in, stack_keys=False)
    return sign_in


def check_existing_vpc(args: Mapping[str, Any]) -> bool:
    """Whether the inputs bring a VPC of their own; StackConfigError when they do so halfway or
    set what only applies to a VPC the component builds."""
    given = [name for name in EXISTING_VPC_INPUTS if args.get(name) is not None]
    if not given:
        return False
    problems = []
    missing = [name for name in EXISTING_VPC_INPUTS if name not in given]
    if missing:
        problems.append(
            f"{', '.join(f'`{to_camel(name)}`' for name in given)} given without "
            f"{', '.join(f'`{to_camel(name)}`' for name in missing)}; an existing VPC needs vpcId, "
            "publicSubnetIds and privateSubnetIds together"
        )
    network = args.get("network") or {}
    if isinstance(network, Mapping):
        for key in ("nat_gateways", "zone_ids"):
            if network.get(key) is not None:
                problems.append(
                    f"`network.{to_camel(key)}` applies to a VPC the component builds, not to an existing one (vpcId)"
                )
        if args.get("deploy_test_app", True) and network.get("cidr") is None:
            problems.append(
                "`network.cidr` is required with vpcId while the test app is deployed: give your VPC's CIDR "
                "block, from which the app's NetworkPolicy admits the ALB's traffic"
            )
    if problems:
        raise StackConfigError(problems)
    return True
