"""The pack's policies called the way the analyzer calls them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions, ResourceValidationArgs
from pulumi_policy.proxy import unknown_checking_proxy

from policies.eks_autoscaling_policies import POLICIES

POLICIES_BY_NAME = {policy.name: policy for policy in POLICIES}


def validate(
    policy_name: str, resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any] | None = None
) -> list[str]:
    """The violations `policy_name` reports for one resource.

    The props are wrapped as the analyzer wraps them (read-only views that raise
    UnknownValueError on a value unknown during preview); `config` is the policy's section of
    the pack configuration.
    """
    options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    args = ResourceValidationArgs(
        resource_type,
        unknown_checking_proxy(dict(props)),
        f"urn:pulumi:test::eks-autoscaling::{resource_type}::crafted",
        "crafted",
        options,
        None,
        dict(config or {}),
    )
    violations: list[str] = []
    POLICIES_BY_NAME[policy_name].validate(args, lambda message, urn=None: violations.append(message))
    return violations
