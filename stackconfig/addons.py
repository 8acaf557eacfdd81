"""Identity mode and the add-ons installed with Helm: versions, replicas, node class."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from iam.karpenter import SUPPORTED_VERSIONS as KARPENTER_POLICY_VERSIONS
from iam.load_balancer_controller import SUPPORTED_CHART_VERSIONS as LOAD_BALANCER_CONTROLLER_POLICY_VERSIONS
from stackconfig.ami import check_ami_alias
from stackconfig.base import ConfigSection

IdentityMode = Literal["irsa", "podIdentity"]


class MetricsServerConfig(ConfigSection):
    version: str = "3.13.1"
    replicas: int = Field(default=1, ge=1, le=5)


class LoadBalancerControllerConfig(ConfigSection):
    version: str = "3.5.0"
    replicas: int = Field(default=2, ge=1, le=5)

    @field_validator("version")
    @classmethod
    def _policy_is_bundled(cls, value: str) -> str:
        # The controller's IAM policy changes with its version; an unmatched pair fails at run time.
        if value not in LOAD_BALANCER_CONTROLLER_POLICY_VERSIONS:
            raise ValueError(
                f"no IAM policy is bundled for aws-load-balancer-controller chart {value}; "
                f"bundled: {', '.join(LOAD_BALANCER_CONTROLLER_POLICY_VERSIONS)}"
            )
        return value


class KarpenterConfig(ConfigSection):
    version: str = "1.14.1"
    replicas: int = Field(default=2, ge=1, le=5)
    # Pinned rather than al2023@latest: latest drifts (replaces) every node on each AMI release.
    ami_alias: str = "al2023@v20260714"
    root_volume_size: int = Field(default=20, ge=20, le=16384)
    # EC2 needs the account-wide role AWSServiceRoleForEC2Spot before it launches spot; an account
    # that never used spot lacks it, and Karpenter then quietly falls back to on-demand.
    create_spot_service_linked_role: bool = False

    @field_validator("ami_alias")
    @classmethod
    def _alias_is_pinned(cls, value: str) -> str:
        check_ami_alias(value)
        return value

    @field_validator("version")
    @classmethod
    def _policy_is_bundled(cls, value: str) -> str:
        if value not in KARPENTER_POLICY_VERSIONS:
            raise ValueError(
                f"no controller IAM policy is bundled for Karpenter {value}; "
                f"bundled: {', '.join(KARPENTER_POLICY_VERSIONS)}"
            )
        return value


class AddonsConfig(ConfigSection):
    metrics_server: MetricsServerConfig = MetricsServerConfig()
    load_balancer_controller: LoadBalancerControllerConfig = LoadBalancerControllerConfig()
    karpenter: KarpenterConfig = KarpenterConfig()
