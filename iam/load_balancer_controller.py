"""IAM for the AWS Load Balancer Controller.

The controller's maintainers publish the policy users should apply
(`docs/install/iam_policy.json`), one per release and partition. The project
carries that file unchanged for each chart version it installs, under
`iam/data/aws-load-balancer-controller/<version>/`; since chart 3.0.0 the chart
version equals the application version.
"""

from __future__ import annotations

import json
from importlib import resources

from iam import _validation
from iam.errors import IamInputError, UnsupportedVersionError

SUPPORTED_CHART_VERSIONS: tuple[str, ...] = ("3.5.0",)

# The bundled files are the commercial-partition variant; the China, GovCloud
# and ISO partitions have their own files upstream.
SUPPORTED_PARTITIONS: tuple[str, ...] = ("aws",)

_DATA_DIRECTORY = "aws-load-balancer-controller"
_POLICY_FILE = "iam_policy.json"


def controller_policy_text(chart_version: str, *, partition: str = "aws") -> str:
    """The published policy for `chart_version`, byte for byte as upstream ships it."""
    _require_supported(chart_version, partition)
    policy = resources.files("iam") / "data" / _DATA_DIRECTORY / chart_version / _POLICY_FILE
    return policy.read_text(encoding="utf-8")


def controller_policy(chart_version: str, *, partition: str = "aws") -> dict:
    """The published policy for `chart_version` as a document; a new dict on every call."""
    return json.loads(controller_policy_text(chart_version, partition=partition))


def _require_supported(chart_version: object, partition: object) -> None:
    if chart_version not in SUPPORTED_CHART_VERSIONS:
        bundled = ", ".join(SUPPORTED_CHART_VERSIONS)
        raise UnsupportedVersionError(
            "chart_version",
            chart_version,
            bundled,
            message=f"no IAM policy bundled for aws-load-balancer-controller chart {chart_version}; bundled: {bundled}",
        )
    _validation.partition(partition)
    if partition not in SUPPORTED_PARTITIONS:
        raise IamInputError(
            "partition",
            partition,
            ", ".join(SUPPORTED_PARTITIONS),
            message=(
                f"no aws-load-balancer-controller IAM policy bundled for partition {partition}; "
                f"bundled: {', '.join(SUPPORTED_PARTITIONS)}"
            ),
        )
