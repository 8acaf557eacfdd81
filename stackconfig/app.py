"""The `app` section: the httpbin test workload, its autoscaler and its ALB.

The defaults reproduce the reference setup and equal the values written in
`manifests/test-app/*.yaml`.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal
from typing import Literal

from pydantic import Field, field_validator, model_validator

from sizing.kube.workloads import CEILING_WHY, MAX_REPLICAS
from stackconfig.base import ConfigSection

# Kubernetes resource.Quantity syntax (as in the CRD patterns), with an integer exponent.
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]))?$"
)
_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# Service names are DNS-1035 labels: they must start with a letter.
DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
MAX_LABEL_LENGTH = 63
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


def parse_quantity(text: str) -> Decimal:
    """The numeric value of a Kubernetes quantity: "100m" -> 0.1, "64Mi" -> 67108864."""
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a Kubernetes quantity; write a number with an optional suffix, "
            "such as 100m, 0.5, 64Mi or 1Gi"
        )
    number = Decimal(match["number"])
    if match["binary"]:
        return number * (Decimal(1024) ** _BINARY_SUFFIXES[match["binary"]])
    if match["exponent"]:
        return number.scaleb(int(match["exponent"]))
    if match["decimal"]:
        return number.scaleb(_DECIMAL_EXPONENTS[match["decimal"]])
    return number


def check_namespace_name(value: str) -> str:
    if len(value) > MAX_LABEL_LENGTH or not DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a namespace name: 1 to 63 lowercase letters, digits or '-', "
            "starting and ending with a letter or digit"
        )
    return value


def check_limit_covers_request(resource: str, request: str, limit: str) -> None:
    if parse_quantity(limit) < parse_quantity(request):
        raise ValueError(
            f"{resource}Limit ({limit}) is below {resource}Request ({request}); a limit must be at least the request"
        )


def positive_quantity(text: str) -> str:
    if parse_quantity(text) <= 0:
        raise ValueError(f"{text!r} must be greater than zero")
    return text


def check_image_pinned(image: str) -> str:
    """Accept `repo:tag` with a tag other than `latest`, or `repo[:tag]@sha256:<digest>`.

    A moving tag would let each node pull a different build, and `pulumi up`
    would never notice a change.
    """
    if _DIGEST.search(image):
        return image
    if "@" in image:
        raise ValueError(f"{image!r}: a digest must be written @sha256: followed by 64 lowercase hex digits")
    last_component = image.rsplit("/", 1)[-1]
    if ":" not in last_component:
        raise ValueError(
            f"{image!r} has no tag; pin a version such as ghcr.io/mccutchen/go-httpbin:2.25.0 or a digest (@sha256:...)"
        )
    tag = last_component.rsplit(":", 1)[1]
    if not _TAG.match(tag):
        raise ValueError(f"{image!r}: {tag!r} is not a valid image tag")
    if tag == "latest":
        raise ValueError(
            f"{image!r} uses the moving tag 'latest'; pin a version such as "
            "ghcr.io/mccutchen/go-httpbin:2.25.0 or a digest (@sha256:...)"
        )
    return image


def check_alb_tags(tags: dict[str, str]) -> dict[str, str]:
    """Tags must survive the `k1=v1,k2=v2` format of the ALB tags annotation."""
    for key, value in tags.items():
        if not 1 <= len(key) <= 128 or len(value) > 256:
            raise ValueError(f"tag {key!r}: keys need 1 to 128 characters and values at most 256")
        if key.lower().startswith("aws:"):
            raise ValueError(f"tag key {key!r} is not allowed: keys starting with 'aws:' are reserved by AWS")
        for text in (key, value):
            if "," in text or "=" in text:
                raise ValueError(
                    f"tag {key}={value!r} contains ',' or '=', which the ALB tags annotation (k1=v1,k2=v2) cannot carry"
                )
    return tags


class ScaleDownConfig(ConfigSection):
    """How fast the HPA may remove pods: at most `percent` % per `periodSeconds`."""

    stabilization_window_seconds: int = 60
    percent: int = 30
    period_seconds: int = 60

    @field_validator("stabilization_window_seconds")
    @classmethod
    def _window_in_range(cls, value: int) -> int:
        if not 0 <= value <= 3600:
            raise ValueError(f"stabilizationWindowSeconds must be from 0 to 3600, got {value}")
        return value

    @field_validator("percent")
    @classmethod
    def _percent_in_range(cls, value: int) -> int:
        if not 1 <= value <= 100:
            raise ValueError(f"percent must be from 1 to 100, got {value}")
        return value

    @field_validator("period_seconds")
    @classmethod
    def _period_in_range(cls, value: int) -> int:
        if not 1 <= value <= 1800:
            raise ValueError(f"periodSeconds must be from 1 to 1800, got {value}")
        return value


class HpaConfig(ConfigSection):
    """The HorizontalPodAutoscaler: replica range and CPU target (percent of the CPU request)."""

    min_replicas: int = 1
    max_replicas: int = 10
    target_cpu_utilization_percent: int = 50
    scale_down: ScaleDownConfig = ScaleDownConfig()

    @field_validator("min_replicas")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        # 0 would need the HPAScaleToZero feature gate, which EKS does not enable.
        if value < 1:
            raise ValueError(f"minReplicas must be at least 1, got {value}")
        return value

    @field_validator("max_replicas")
    @classmethod
    def _max_at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"maxReplicas must be at least 1, got {value}")
        if value > MAX_REPLICAS:
            raise ValueError(f"maxReplicas must be at most {MAX_REPLICAS:,} ({CEILING_WHY}), got {value:,}")
        return value

    @field_validator("target_cpu_utilization_percent")
    @classmethod
    def _target_in_range(cls, value: int) -> int:
        if not 1 <= value <= 100:
            raise ValueError(f"targetCpuUtilizationPercent must be from 1 to 100, got {value}")
        return value

    @model_validator(mode="after")
    def _range_is_ordered(self) -> HpaConfig:
        if self.min_replicas > self.max_replicas:
            raise ValueError(
                f"minReplicas ({self.min_replicas}) is greater than maxReplicas ({self.max_replicas}); "
                "minReplicas must not exceed maxReplicas"
            )
        return self


# Each block becomes an inbound rule of the ALB's security group, per listener port; a security
# group holds 60 inbound rules by default.
MAX_INBOUND_CIDRS = 50


class IngressConfig(ConfigSection):
    """The ALB in front of the app. `tags` are added to the stack's tags on the ALB;
    `inbound_cidrs` are the IPv4 blocks its security group admits."""

    scheme: Literal["internet-facing", "internal"] = "internet-facing"
    tags: dict[str, str] = Field(default_factory=dict)
    inbound_cidrs: tuple[str, ...] = ("0.0.0.0/0",)
    # An internet-facing ALB open to every address is flagged by the security checks unless the
    # stack says so.
    acknowledge_open_to_internet: bool = False

    @field_validator("inbound_cidrs")
    @classmethod
    def _cidrs_are_blocks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError(
                "is empty, which would leave the ALB open to nobody; list the IPv4 blocks that may reach it, "
                "such as <your address>/32, or leave the app out with deployTestApp: false"
            )
        if len(value) > MAX_INBOUND_CIDRS:
            raise ValueError(f"lists {len(value)} blocks; at most {MAX_INBOUND_CIDRS} fit the ALB's security group")
        for cidr in value:
            try:
                if "/" not in str(cidr):
                    raise ValueError(cidr)
                ipaddress.IPv4Network(cidr, strict=True)
            except ValueError:
                raise ValueError(
                    f"{str(cidr)[:64]!r} is not an IPv4 CIDR block: an address and a prefix length, such as "
                    "<your address>/32"
                ) from None
        if len(set(value)) != len(value):
            raise ValueError("lists a block twice")
        return value

    @property
    def open_to_internet(self) -> bool:
        """Whether anyone on the internet reaches the ALB."""
        return self.scheme == "internet-facing" and any(
            ipaddress.IPv4Network(cidr).prefixlen == 0 for cidr in self.inbound_cidrs
        )

    @field_validator("tags")
    @classmethod
    def _tags_fit_annotation(cls, value: dict[str, str]) -> dict[str, str]:
        return check_alb_tags(value)


class AppConfig(ConfigSection):
    """The test workload (go-httpbin), its HPA and its Ingress."""

    namespace: str = "test-app"
    name: str = "test-app"
    image: str = "ghcr.io/mccutchen/go-httpbin:2.25.0"
    cpu_request: str = "100m"
    cpu_limit: str = "200m"
    memory_request: str = "64Mi"
    memory_limit: str = "128Mi"
    hpa: HpaConfig = HpaConfig()
    max_surge_percent: int = 100
    health_check_path: str = "/status/200"
    ingress: IngressConfig = IngressConfig()

    @field_validator("namespace")
    @classmethod
    def _namespace_is_dns_label(cls, value: str) -> str:
        return check_namespace_name(value)

    @field_validator("name")
    @classmethod
    def _name_is_dns_1035_label(cls, value: str) -> str:
        if len(value) > MAX_LABEL_LENGTH or not DNS_1035_LABEL.match(value):
            raise ValueError(
                f"{value!r} is not a Service name: 1 to 63 lowercase letters, digits or '-', "
                "starting with a letter and ending with a letter or digit"
            )
        return value

    @field_validator("image")
    @classmethod
    def _image_is_pinned(cls, value: str) -> str:
        return check_image_pinned(value)

    @field_validator("cpu_request", "cpu_limit", "memory_request", "memory_limit")
    @classmethod
    def _is_quantity(cls, value: str) -> str:
        return positive_quantity(value)

    @field_validator("max_surge_percent")
    @classmethod
    def _surge_in_range(cls, value: int) -> int:
        # maxUnavailable is 0, so a surge of 0 could never replace a pod; above 100 % the
        # node pool limits would need room for more than twice the pods.
        if not 1 <= value <= 100:
            raise ValueError(f"maxSurgePercent must be from 1 to 100, got {value}")
        return value

    @field_validator("health_check_path")
    @classmethod
    def _path_is_absolute(cls, value: str) -> str:
        if not value.startswith("/") or any(character.isspace() for character in value) or len(value) > 1024:
            raise ValueError(f"{value!r} is not an HTTP path: it must start with '/' and contain no spaces")
        return value

    @model_validator(mode="after")
    def _limits_cover_requests(self) -> AppConfig:
        for resource, request, limit in (
            ("cpu", self.cpu_request, self.cpu_limit),
            ("memory", self.memory_request, self.memory_limit),
        ):
            check_limit_covers_request(resource, request, limit)
        return self
