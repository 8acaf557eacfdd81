"""What the monitoring component registered, read from a recording of the program."""

from __future__ import annotations

RELEASE = "kubernetes:helm.sh/v3:Release"


def release(recording, name: str):
    """The Helm release `prometheus` or `grafana` of the monitoring component."""
    return recording.one(RELEASE, f"monitoring-{name}")


def values(recording, name: str) -> dict:
    return release(recording, name).input("values")


def alert_rules(recording) -> dict:
    """The rule file the prometheus release puts in alerting_rules.yml."""
    return values(recording, "prometheus")["serverFiles"]["alerting_rules.yml"]


def dashboards(recording) -> dict[str, str]:
    """File name -> JSON text of the dashboards ConfigMap."""
    return recording.one("kubernetes:core/v1:ConfigMap", "monitoring-dashboards").input("data")
