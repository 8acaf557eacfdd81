"""The `monitoring` section: Prometheus (with kube-state-metrics) and Grafana on the system nodes,
Karpenter's dashboards, and alerts generated from the capacity plan.

Off unless a stack turns it on: the reference setup has no monitoring, and a component built by
another program adds none unless asked. The dev stack turns it on (Pulumi.dev.yaml).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import Field, field_validator, model_validator

from stackconfig.app import check_limit_covers_request, check_namespace_name, parse_quantity, positive_quantity
from stackconfig.base import ConfigSection

# The charts the program was written and checked against (tests/monitoring/upstream/).
PROMETHEUS_CHART_VERSION = "29.27.0"
GRAFANA_CHART_VERSION = "12.11.1"
_CHART_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")
# Prometheus' own duration syntax for --storage.tsdb.retention.time, one unit only.
_PROMETHEUS_DURATION = re.compile(r"^(?P<count>[1-9][0-9]{0,5})(?P<unit>ms|s|m|h|d|w|y)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
# The chart's scrape timeout (10s) must not exceed the interval; a scrape every 5 minutes or more
# leaves gaps in rate() over the dashboards' windows.
SCRAPE_INTERVAL_SECONDS = (10, 300)

# Requests and limits of the pods the program does not let a config key size. Requests are what
# the system node group's capacity check counts; memory limits keep a leak from taking a system
# node's memory from the controllers, and no cpu limit throttles a scrape or a dashboard.
CONFIG_RELOADER_RESOURCES = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}}
KUBE_STATE_METRICS_RESOURCES = {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
GRAFANA_RESOURCES = {"requests": {"cpu": "50m", "memory": "192Mi"}, "limits": {"memory": "384Mi"}}
# Prometheus keeps this share of its volume for its data; the rest is room for compaction before
# the kubelet evicts a pod whose emptyDir outgrows its sizeLimit.
RETENTION_PERCENT_OF_STORAGE = 80


class PrometheusConfig(ConfigSection):
    """The `prometheus` chart (prometheus-community), which brings kube-state-metrics."""

    version: str = PROMETHEUS_CHART_VERSION
    retention: str = "7d"
    # The data lives in an emptyDir on the system node's root volume (no EBS CSI driver, no
    # volume to leave behind): its size limit, of which retention keeps RETENTION_PERCENT_OF_STORAGE.
    storage_limit: str = "4Gi"
    scrape_interval: str = "30s"
    cpu_request: str = "250m"
    memory_request: str = "512Mi"
    memory_limit: str = "1Gi"

    @field_validator("version")
    @classmethod
    def _is_chart_version(cls, value: str) -> str:
        return _chart_version(value)

    @field_validator("retention", "scrape_interval")
    @classmethod
    def _is_duration(cls, value: str) -> str:
        if not _PROMETHEUS_DURATION.match(value):
            raise ValueError(
                f"{value!r} is not a Prometheus duration: a whole number and one unit of ms, s, m, h, d, w or y, "
                "such as 30s, 12h or 7d"
            )
        return value

    @field_validator("scrape_interval")
    @classmethod
    def _scrape_interval_in_range(cls, value: str) -> str:
        low, high = SCRAPE_INTERVAL_SECONDS
        if not low <= duration_seconds(value) <= high:
            raise ValueError(f"scrapeInterval {value!r} must be from {low}s to {high // 60}m")
        return value

    @field_validator("retention")
    @classmethod
    def _retention_at_least_an_hour(cls, value: str) -> str:
        if duration_seconds(value) < 3600:
            raise ValueError(f"retention {value!r} is shorter than an hour; Prometheus keeps whole blocks of 2h")
        return value

    @field_validator("storage_limit", "cpu_request", "memory_request", "memory_limit")
    @classmethod
    def _is_quantity(cls, value: str) -> str:
        return positive_quantity(value)

    @field_validator("storage_limit")
    @classmethod
    def _storage_at_least_a_gibibyte(cls, value: str) -> str:
        if parse_quantity(value) < 2**30:
            raise ValueError(f"{value!r} is below 1Gi, too small for a day of samples")
        return value

    @model_validator(mode="after")
    def _limit_covers_request(self) -> PrometheusConfig:
        check_limit_covers_request("memory", self.memory_request, self.memory_limit)
        return self

    @property
    def retention_size(self) -> str:
        """`--storage.tsdb.retention.size`: a share of the volume, in Prometheus' MB (MiB)."""
        mib = int(parse_quantity(self.storage_limit) * RETENTION_PERCENT_OF_STORAGE // (100 * 2**20))
        return f"{mib}MB"

    @property
    def resources(self) -> dict:
        return {
            "requests": {"cpu": self.cpu_request, "memory": self.memory_request},
            "limits": {"memory": self.memory_limit},
        }


class GrafanaConfig(ConfigSection):
    """The `grafana` chart (grafana-community)."""

    version: str = GRAFANA_CHART_VERSION

    @field_validator("version")
    @classmethod
    def _is_chart_version(cls, value: str) -> str:
        return _chart_version(value)


class AlertsConfig(ConfigSection):
    """How the alerts generated from the capacity plan judge the live cluster."""

    # A NodePool's usage above this share of a planned limit.
    node_pool_usage_percent: int = Field(default=80, ge=1, le=100)
    # Added to the plan's HPA ramp: launching a node, joining it and starting the pods on it.
    node_startup_seconds: int = Field(default=300, ge=0, le=3600)
    # How long the HPA may stay at the peak the plan assumed before that is an alert.
    hpa_at_max_seconds: int = Field(default=900, ge=60, le=86400)
    # How long a node of an instance type outside the plan may run before that is an alert.
    unplanned_instance_type_seconds: int = Field(default=600, ge=60, le=86400)


class MonitoringConfig(ConfigSection):
    enabled: bool = False
    namespace: str = "monitoring"
    prometheus: PrometheusConfig = PrometheusConfig()
    grafana: GrafanaConfig = GrafanaConfig()
    alerts: AlertsConfig = AlertsConfig()

    @field_validator("namespace")
    @classmethod
    def _namespace_is_dns_label(cls, value: str) -> str:
        check_namespace_name(value)
        if value == "default" or value.startswith("kube-"):
            raise ValueError(f"{value!r} is a namespace of Kubernetes' own; the stack creates and deletes this one")
        return value


def monitoring_pods(monitoring: MonitoringConfig) -> list[tuple[str, int, tuple[Mapping[str, str], ...]]]:
    """(name, replicas, requests of each container of one pod) of the Deployments monitoring puts
    on the system nodes; none when it is off."""
    if not monitoring.enabled:
        return []
    return [
        (
            "prometheus-server",
            1,
            (monitoring.prometheus.resources["requests"], CONFIG_RELOADER_RESOURCES["requests"]),
        ),
        ("kube-state-metrics", 1, (KUBE_STATE_METRICS_RESOURCES["requests"],)),
        ("grafana", 1, (GRAFANA_RESOURCES["requests"],)),
    ]


def duration_seconds(duration: str) -> float:
    """A Prometheus duration of one unit ("30s", "7d") in seconds."""
    match = _PROMETHEUS_DURATION.match(duration)
    if not match:
        raise ValueError(f"{duration!r} is not a Prometheus duration")
    return int(match["count"]) * _UNIT_SECONDS[match["unit"]]


def _chart_version(value: str) -> str:
    if not _CHART_VERSION.match(value):
        raise ValueError(f"{value!r} is not a chart version such as 1.2.3")
    return value
