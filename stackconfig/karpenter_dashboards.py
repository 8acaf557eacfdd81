"""Whether Karpenter's Grafana dashboards are bundled for the configured Karpenter version, which
`monitoring.enabled` needs: the folder they live in and the minor versions found there."""

from __future__ import annotations

from pathlib import Path

DASHBOARDS_DIR = Path(__file__).resolve().parent.parent / "monitoring" / "dashboards"


def bundled_karpenter_minors() -> tuple[str, ...]:
    """The Karpenter minor versions ("1.14") whose dashboards are bundled."""
    return tuple(sorted(path.name.removeprefix("karpenter-") for path in DASHBOARDS_DIR.glob("karpenter-*")))


def check_karpenter_dashboards_bundled(karpenter_version: str) -> None:
    minor = karpenter_minor(karpenter_version)
    if minor not in bundled_karpenter_minors():
        raise ValueError(
            f"monitoring.enabled: Karpenter's dashboards are bundled for Karpenter "
            f"{', '.join(bundled_karpenter_minors())} only, and addons.karpenter.version is {karpenter_version}; "
            f"add its dashboards under monitoring/dashboards/karpenter-{minor}/ or set monitoring.enabled: false"
        )


def karpenter_minor(version: str) -> str:
    """The minor version ("1.14") of a Karpenter version ("1.14.1")."""
    return ".".join(version.split(".")[:2])
