"""The one AWS provider of the stack, and the account facts looked up through it.

Resources and look-ups go through the same explicit provider, so that the account id, partition
and zones the program computes with belong to the account the resources are created in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from stackconfig.aws_provider import AwsProviderSettings
from stackplan.zones import RegionZones, region_zones_from

# Availability Zones only: Local and Wavelength Zones cannot hold an EKS cluster's subnets.
AVAILABILITY_ZONES_ONLY = [aws.GetAvailabilityZonesFilterArgs(name="zone-type", values=["availability-zone"])]


@dataclass(frozen=True)
class AccountFacts:
    region_zones: RegionZones
    partition: str
    account_id: str


def stack_aws_provider(name: str, region: str, settings: AwsProviderSettings, tags: Mapping[str, str]) -> aws.Provider:
    """The provider of every AWS resource, with the stack's `aws:*` settings (an explicit
    provider reads none of them itself) and the stack's tags as default tags."""
    return aws.Provider(
        name,
        region=region,
        default_tags=aws.ProviderDefaultTagsArgs(tags=dict(tags)),
        profile=settings.profile,
        # Lists, not tuples: Pulumi serialises only lists into the provider's JSON settings.
        assume_roles=[
            aws.ProviderAssumeRoleArgs(**role.model_dump(exclude_none=True)) for role in settings.assume_roles
        ]
        or None,
        shared_config_files=list(settings.shared_config_files) or None,
        shared_credentials_files=list(settings.shared_credentials_files) or None,
        allowed_account_ids=list(settings.allowed_account_ids) or None,
        forbidden_account_ids=list(settings.forbidden_account_ids) or None,
    )


def look_up_account(provider: aws.Provider, region: str, instance_types: Sequence[str]) -> AccountFacts:
    through = pulumi.InvokeOptions(provider=provider)
    return AccountFacts(
        region_zones=look_up_zones(through, region, instance_types),
        partition=aws.get_partition(opts=through).partition,
        account_id=aws.get_caller_identity(opts=through).account_id,
    )


def look_up_zones(through: pulumi.InvokeOptions, region: str, instance_types: Sequence[str]) -> RegionZones:
    """The region's availability zones in this account: every one (a pinned zone stays usable
    while it is impaired), which are `available`, and where EC2 offers `instance_types`."""
    every = aws.get_availability_zones(filters=AVAILABILITY_ZONES_ONLY, opts=through)
    available = aws.get_availability_zones(state="available", filters=AVAILABILITY_ZONES_ONLY, opts=through)
    offerings: list[tuple[str, str]] = []
    if instance_types:
        offered = aws.ec2.get_instance_type_offerings(
            location_type="availability-zone-id",
            filters=[aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=list(instance_types))],
            opts=through,
        )
        offerings = list(zip(offered.locations, offered.instance_types, strict=True))
    return region_zones_from(region, every.names, every.zone_ids, available.zone_ids, offerings, tuple(instance_types))
