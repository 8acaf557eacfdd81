"""The one AWS provider of the stack, and the account facts looked up through it.

Resources and look-ups go through the same explicit provider, so that the account id, partition
and zones the program computes with belong to the account the resources are created in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from stackconfig.aws_provider import AwsProviderSettings


@dataclass(frozen=True)
class AccountFacts:
    region_zones: list[str]
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


def look_up_account(provider: aws.Provider) -> AccountFacts:
    through = pulumi.InvokeOptions(provider=provider)
    return AccountFacts(
        region_zones=list(aws.get_availability_zones(state="available", opts=through).names),
        partition=aws.get_partition(opts=through).partition,
        account_id=aws.get_caller_identity(opts=through).account_id,
    )
