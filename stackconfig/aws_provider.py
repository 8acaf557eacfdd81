"""The stack's `aws:*` settings that the program's explicit AWS provider honours.

An explicit provider reads no stack configuration of its own: every `aws:*` key the program does
not hand to it would silently apply to nothing but the default provider. So each key is either
passed through (below) or refused before the first registration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError, field_validator

from stackconfig.base import ConfigSection
from stackconfig.errors import StackConfigError

ACCOUNT_ID = re.compile(r"^\d{12}$")
ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")
# Keys read elsewhere: the region by the stack configuration (stackconfig/load.py).
HANDLED_ELSEWHERE = {"region"}
# Why some keys are refused, where a reason helps more than the list of supported keys.
REFUSAL_REASONS = {
    "defaultTags": "the program sets the provider's default tags from `eks-autoscaling:tags`; put the tags there",
    "accessKey": "give credentials through the environment (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...) or `aws:profile`",
    "secretKey": "give credentials through the environment (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...) or `aws:profile`",
    "token": "give credentials through the environment (AWS_PROFILE, AWS_SESSION_TOKEN, ...) or `aws:profile`",
    "assumeRole": "pulumi-aws 7 reads `aws:assumeRoles`, a list: write `aws:assumeRoles: [{roleArn: ...}]`",
}


class AssumeRole(ConfigSection):
    """The role the provider assumes (`aws:assumeRoles[0]`)."""

    role_arn: str
    session_name: str | None = Field(default=None, pattern=r"^[\w+=,.@-]{2,64}$")
    duration: str | None = Field(default=None, pattern=r"^(\d+h)?(\d+m)?(\d+s)?$")

    @field_validator("role_arn")
    @classmethod
    def _is_a_role_arn(cls, value: str) -> str:
        if not ROLE_ARN.match(value):
            raise ValueError(f"{value!r} is not an IAM role ARN such as arn:aws:iam::111122223333:role/deployer")
        return value


class AwsProviderSettings(ConfigSection):
    """The `aws:*` keys passed to the explicit provider, as pulumi-aws names them."""

    profile: str | None = None
    assume_roles: tuple[AssumeRole, ...] = ()
    shared_config_files: tuple[str, ...] = ()
    shared_credentials_files: tuple[str, ...] = ()
    allowed_account_ids: tuple[str, ...] = ()
    forbidden_account_ids: tuple[str, ...] = ()

    @field_validator("assume_roles")
    @classmethod
    def _one_role_at_most(cls, value: tuple[AssumeRole, ...]) -> tuple[AssumeRole, ...]:
        # The cluster's admin is the role that created it, and the kubeconfig must sign in as that
        # role through `aws eks get-token --role-arn`, which assumes one role and cannot chain.
        if len(value) > 1:
            raise ValueError(
                f"{len(value)} roles given; give one: the kubeconfig signs in with `aws eks get-token --role-arn`, "
                "which cannot chain roles (put the earlier hops in an AWS CLI profile and name it in aws:profile)"
            )
        return value

    @field_validator("shared_config_files", "shared_credentials_files")
    @classmethod
    def _one_file_the_cli_can_read(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # The kubeconfig hands the file to `aws eks get-token` as AWS_CONFIG_FILE or
        # AWS_SHARED_CREDENTIALS_FILE, which name one file each.
        if len(value) > 1:
            raise ValueError(
                f"{len(value)} files given; give one: the kubeconfig's `aws eks get-token` reads one file, named "
                "in its environment (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE)"
            )
        for path in value:
            check_credential_file_path(path)
        return value

    @field_validator("allowed_account_ids", "forbidden_account_ids")
    @classmethod
    def _are_account_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for account in value:
            if not ACCOUNT_ID.match(account):
                raise ValueError(f"{account!r} is not a 12-digit AWS account id")
        return value

    @property
    def role_arn(self) -> str | None:
        return self.assume_roles[0].role_arn if self.assume_roles else None

    @property
    def kubeconfig_sign_in(self) -> KubeconfigSignIn:
        """How the kubeconfig signs in to act as this provider does."""
        return KubeconfigSignIn(
            profile=self.profile,
            role_arn=self.role_arn,
            config_file=self.shared_config_files[0] if self.shared_config_files else None,
            credentials_file=self.shared_credentials_files[0] if self.shared_credentials_files else None,
        )


@dataclass(frozen=True)
class KubeconfigSignIn:
    """How the `aws eks get-token` of a kubeconfig signs in: the profile and role as arguments
    (`--profile`, `--role`), the AWS CLI's files as its environment. Unset: as the environment
    of whoever runs it says."""

    profile: str | None = None
    role_arn: str | None = None
    config_file: str | None = None
    credentials_file: str | None = None

    @property
    def environment(self) -> dict[str, str]:
        """The exec environment that points the AWS CLI at the files."""
        variables = {"AWS_CONFIG_FILE": self.config_file, "AWS_SHARED_CREDENTIALS_FILE": self.credentials_file}
        return {name: value for name, value in variables.items() if value}


def check_credential_file_path(path: str) -> str:
    """A file the kubeconfig names must be found from wherever kubectl or the Kubernetes
    provider runs: absolute, or under the home directory (`~/`, which the AWS CLI expands)."""
    if not (path.startswith("/") or path.startswith("~/")):
        raise ValueError(
            f"{path!r} is a relative path; give an absolute one or one under ~/: the kubeconfig runs "
            "`aws eks get-token` from wherever kubectl or Pulumi runs"
        )
    return path


def supported_keys() -> list[str]:
    return sorted(f"aws:{field.alias or name}" for name, field in AwsProviderSettings.model_fields.items())


def parse_aws_settings(raw: Mapping[str, Any]) -> AwsProviderSettings:
    """The `aws:*` keys of a stack's configuration (values as Pulumi gives them: strings, with
    JSON text for lists and maps); raise StackConfigError for a key the provider would not get."""
    fields = {field.alias or name for name, field in AwsProviderSettings.model_fields.items()}
    document: dict[str, Any] = {}
    problems = []
    for full_key, value in sorted(raw.items()):
        namespace, _, key = full_key.partition(":")
        if namespace != "aws" or key in HANDLED_ELSEWHERE:
            continue
        if key not in fields:
            reason = REFUSAL_REASONS.get(key, f"the settings passed to it are {', '.join(supported_keys())}")
            problems.append(f"`aws:{key}` would not reach the program's AWS provider: {reason}")
            continue
        document[key] = _decode(value) if key != "profile" else value
    if problems:
        raise StackConfigError(problems)
    try:
        return AwsProviderSettings.model_validate_json(json.dumps(document))
    except ValidationError as error:
        raise StackConfigError([_describe(detail) for detail in error.errors()]) from None


def _decode(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _describe(detail: Mapping[str, Any]) -> str:
    key = "aws:" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in detail["loc"]).lstrip(".")
    if detail["type"] == "extra_forbidden":
        allowed = ", ".join(field.alias or name for name, field in AssumeRole.model_fields.items())
        return f"`{key}` is not passed to the provider; a role takes {allowed}"
    if detail["msg"].startswith("Value error, "):
        return f"`{key}`: {detail['msg'].removeprefix('Value error, ')}"
    return f"`{key}`: {detail['msg']} (got {detail.get('input')!r})"
