"""Network, cluster and system node group sections of the stack configuration."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator, model_validator

from sizing.karpenter.crd_rules import check_part
from stackconfig.base import ConfigSection
from stackconfig.system_pods import check_architecture, check_instance_types_known

# EKS versions in standard or extended support in late 2026 (EKS release calendar).
SUPPORTED_KUBERNETES_VERSIONS = ("1.33", "1.34", "1.35", "1.36")
CONTROL_PLANE_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
INSTANCE_TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
CLUSTER_NAME_PATTERN = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]*$")
# The system nodes' taint, as EKS and the Karpenter chart name it: only pods that tolerate it run
# there (the add-ons, coredns and the EKS DaemonSets do; a workload without the toleration does
# not). The node group takes the EKS API's effect name; Kubernetes shows it as NoSchedule.
SYSTEM_NODE_TAINT_KEY = "CriticalAddonsOnly"
SYSTEM_NODE_TAINT = {"key": SYSTEM_NODE_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"}
SYSTEM_NODE_TOLERATIONS = ({"key": SYSTEM_NODE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},)
MAX_CLUSTER_NAME_LENGTH = 40  # leaves room for the derived IAM role names (64 characters at most)
# The values CloudWatch Logs accepts for a log group's retention; 0 keeps events forever.
LOG_RETENTION_DAYS = (
    0,
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)


def validate_cluster_name(name: str) -> str:
    if not CLUSTER_NAME_PATTERN.match(name) or len(name) > MAX_CLUSTER_NAME_LENGTH:
        raise ValueError(
            f"{name!r} is not a valid cluster name: use 1 to {MAX_CLUSTER_NAME_LENGTH} letters, digits, "
            "hyphens or underscores, starting with a letter or digit"
        )
    return name


def validate_tags(tags: dict) -> dict:
    for key, value in tags.items():
        if not 1 <= len(key) <= 128 or key.lower().startswith("aws:"):
            raise ValueError(f"tag key {key!r} is not allowed: 1 to 128 characters, not starting with 'aws:'")
        if len(value) > 256:
            raise ValueError(f"tag {key!r} has a value longer than 256 characters")
    return tags


def check_node_class_tags(tags: Mapping[str, str]) -> None:
    """Tags the EC2NodeClass CRD's rules take (no empty key, none of the tags Karpenter sets on every
    node itself), with string values."""
    check_part(dict(tags), ("spec", "tags"), "tags", kind="EC2NodeClass")
    for key, value in tags.items():
        if not isinstance(value, str):
            raise ValueError(f"the value of tag {key!r} must be a string, got {value!r}")


ZONE_ID_PATTERN = re.compile(r"^[a-z]+[0-9]+-az[0-9]+$")


class NetworkConfig(ConfigSection):
    """The VPC: its CIDR, how many availability zones it spans, which ones, and its NAT gateways."""

    cidr: str = "10.0.0.0/16"
    availability_zones: int = Field(default=2, ge=2, le=6)
    # The zones by zone ID (the same physical zone in every account, unlike its name), in the
    # order the VPC allocates its subnets. `make up` pins them on a stack's first use; empty, the
    # program chooses and says how to pin them.
    zone_ids: tuple[str, ...] = ()
    nat_gateways: Literal["single", "onePerAz"] = "single"

    @field_validator("zone_ids")
    @classmethod
    def _are_zone_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for zone_id in value:
            if not ZONE_ID_PATTERN.match(zone_id):
                raise ValueError(
                    f"{zone_id!r} is not an availability zone ID such as use1-az1 or apne1-az4 "
                    "(`aws ec2 describe-availability-zones` lists them as ZoneId)"
                )
        if len(set(value)) != len(value):
            raise ValueError(f"{list(value)} lists a zone twice")
        return value

    @model_validator(mode="after")
    def _zone_count_matches_the_pinned_zones(self) -> NetworkConfig:
        if self.zone_ids and len(self.zone_ids) != self.availability_zones:
            raise ValueError(
                f"availabilityZones is {self.availability_zones} but zoneIds pins {len(self.zone_ids)} zones "
                f"({', '.join(self.zone_ids)}), the VPC's since the stack was first deployed. Another count "
                "re-addresses every subnet (each gets a share of the VPC's CIDR by the number of zones): the update "
                "would replace every public and private subnet with their route tables and NAT gateways, and with "
                "them the system node group, the load balancers and every node, and EKS refuses to move the "
                "cluster to subnets in other zones, so it would fail half-way. Keep availabilityZones at "
                f"{len(self.zone_ids)}; for another number of zones, create a new stack. (`make up` writes the "
                "whole list in one step; a list written by hand, or by an older version one zone at a time and "
                "interrupted, may be short: then compare it with the VPC's zones and complete it)"
            )
        return self

    @field_validator("cidr")
    @classmethod
    def _cidr_is_a_private_block(cls, value: str) -> str:
        try:
            network = ipaddress.IPv4Network(value, strict=True)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 CIDR block such as 10.0.0.0/16") from None
        if not 16 <= network.prefixlen <= 24:
            raise ValueError(f"{value!r}: a VPC CIDR block must have a prefix between /16 and /24")
        return value


KMS_KEY_ARN_PATTERN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$")


class SecretsEncryptionConfig(ConfigSection):
    """Envelope encryption of Kubernetes secrets with a customer-managed KMS key. EKS already
    encrypts everything with an AWS-owned key; a key of your own cannot be removed later."""

    enabled: bool = False
    kms_key_arn: str | None = None

    @field_validator("kms_key_arn")
    @classmethod
    def _is_a_key_arn(cls, value: str | None) -> str | None:
        if value is not None and not KMS_KEY_ARN_PATTERN.match(value):
            raise ValueError(
                f"{value!r} is not a KMS key ARN such as arn:aws:kms:ap-northeast-1:111122223333:key/<uuid>"
            )
        return value


# Special-purpose IPv4 blocks (IANA registry, RFC 6890) whose addresses never appear as the source
# of a connection from the internet: a public endpoint CIDR inside one of them admits nobody. EKS
# itself refuses the private ones. The test suite checks each against Python's ipaddress registry.
NON_PUBLIC_RANGES = (
    ("0.0.0.0/8", "'this network', RFC 791"),
    ("10.0.0.0/8", "private addresses, RFC 1918"),
    ("100.64.0.0/10", "shared carrier-grade NAT space, RFC 6598"),
    ("127.0.0.0/8", "loopback, RFC 1122"),
    ("169.254.0.0/16", "link-local, RFC 3927"),
    ("172.16.0.0/12", "private addresses, RFC 1918"),
    ("192.0.0.0/29", "IETF protocol assignments, RFC 6333"),
    ("192.0.2.0/24", "TEST-NET-1, documentation, RFC 5737"),
    ("192.168.0.0/16", "private addresses, RFC 1918"),
    ("198.18.0.0/15", "benchmarking, RFC 2544"),
    ("198.51.100.0/24", "TEST-NET-2, documentation, RFC 5737"),
    ("203.0.113.0/24", "TEST-NET-3, documentation, RFC 5737"),
    ("224.0.0.0/4", "multicast, RFC 5771"),
    ("240.0.0.0/4", "reserved, RFC 1112"),
)


def non_public_range(network: ipaddress.IPv4Network) -> tuple[str, str] | None:
    """The special-purpose block (CIDR, what it is) that holds all of `network`, if any."""
    for block, description in NON_PUBLIC_RANGES:
        if network.subnet_of(ipaddress.IPv4Network(block)):
            return block, description
    return None


class ClusterConfig(ConfigSection):
    """The EKS control plane."""

    version: str = "1.35"
    endpoint_public_access: bool = True
    public_access_cidrs: tuple[str, ...] = ("0.0.0.0/0",)
    # An endpoint reachable from the whole internet is allowed only when the stack says so.
    acknowledge_open_endpoint: bool = False
    log_types: tuple[Literal["api", "audit", "authenticator", "controllerManager", "scheduler"], ...] = (
        "api",
        "audit",
        "authenticator",
    )
    log_retention_days: int = 90
    log_kms_key_arn: str | None = None
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP"] = "API"
    secrets_encryption: SecretsEncryptionConfig = SecretsEncryptionConfig()
    # `pulumi up` applies the Helm releases and Kubernetes objects from where it runs. Without a
    # public endpoint that must be inside the VPC (or a network routed into it): true says so.
    deploy_from_inside_vpc: bool = False

    @field_validator("version")
    @classmethod
    def _version_is_supported(cls, value: str) -> str:
        if value not in SUPPORTED_KUBERNETES_VERSIONS:
            raise ValueError(
                f"Kubernetes {value!r} is not supported by EKS; use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}"
            )
        return value

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs_are_valid(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in value:
            try:
                network = ipaddress.IPv4Network(cidr, strict=True)
            except ValueError:
                raise ValueError(
                    f"{cidr!r} is not an IPv4 CIDR block: an address and a prefix length, such as <your address>/32"
                ) from None
            refused = non_public_range(network)
            if refused is not None:
                raise ValueError(
                    f"{cidr!r} lies in {refused[0]} ({refused[1]}), from which no client reaches the public endpoint; "
                    "list the public addresses of your operators and CI (your address as https://checkip.amazonaws.com "
                    "shows it, with /32), or set endpointPublicAccess to false and use the private endpoint"
                )
        return value

    @field_validator("log_retention_days")
    @classmethod
    def _retention_is_allowed(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(
                f"{value} is not a retention CloudWatch Logs accepts; use one of "
                f"{', '.join(map(str, LOG_RETENTION_DAYS))} (0 keeps the logs forever)"
            )
        return value

    @field_validator("log_kms_key_arn")
    @classmethod
    def _log_key_is_a_key_arn(cls, value: str | None) -> str | None:
        if value is not None and not KMS_KEY_ARN_PATTERN.match(value):
            raise ValueError(
                f"{value!r} is not a KMS key ARN such as arn:aws:kms:ap-northeast-1:111122223333:key/<uuid>"
            )
        return value

    @property
    def endpoint_open_to_internet(self) -> bool:
        return self.endpoint_public_access and "0.0.0.0/0" in self.public_access_cidrs


class NodeGroupConfig(ConfigSection):
    """The managed node group that runs the system pods (controllers, CoreDNS)."""

    instance_types: tuple[str, ...] = ("m5.large",)
    min_size: int = Field(default=2, ge=1)
    desired_size: int = Field(default=2, ge=1)
    max_size: int = Field(default=3, ge=1, le=450)
    disk_size: int = Field(default=20, ge=20, le=16384)
    ami_type: Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"] = "AL2023_x86_64_STANDARD"
    capacity_type: Literal["ON_DEMAND", "SPOT"] = "ON_DEMAND"
    labels: dict[str, str] = Field(default_factory=lambda: {"node-role": "system"})

    @field_validator("instance_types")
    @classmethod
    def _instance_types_are_named(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("list at least one instance type, such as m5.large")
        for name in value:
            if not INSTANCE_TYPE_PATTERN.match(name):
                raise ValueError(f"{name!r} is not an EC2 instance type name such as m5.large")
        check_instance_types_known(value)
        return value

    @field_validator("labels")
    @classmethod
    def _has_a_label(cls, value: dict[str, str]) -> dict[str, str]:
        if not value:
            raise ValueError(
                "give the system nodes at least one label (default node-role: system) so that controllers can be pinned to them"
            )
        return value

    @model_validator(mode="after")
    def _types_match_the_ami(self) -> NodeGroupConfig:
        check_architecture(self.instance_types, self.ami_type)
        return self

    @model_validator(mode="after")
    def _sizes_are_ordered(self) -> NodeGroupConfig:
        if self.min_size > self.max_size:
            raise ValueError(f"minSize ({self.min_size}) is greater than maxSize ({self.max_size})")
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError(
                f"desiredSize ({self.desired_size}) must lie between minSize ({self.min_size}) "
                f"and maxSize ({self.max_size})"
            )
        return self

    @property
    def system_label(self) -> tuple[str, str]:
        """The label that identifies system nodes, for pinning controllers to them."""
        key = "node-role" if "node-role" in self.labels else sorted(self.labels)[0]
        return key, self.labels[key]
