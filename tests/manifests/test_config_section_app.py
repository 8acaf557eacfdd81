"""The `app` config section: defaults, accepted values, and every refusal with its message."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from stackconfig.app import AppConfig, parse_quantity

DIGEST = "sha256:" + "ab" * 32


def _only_error(text: str) -> tuple[str, str, str]:
    """(dotted key, error type, message) of the single error `text` produces."""
    with pytest.raises(ValidationError) as caught:
        AppConfig.model_validate_json(text)
    (error,) = caught.value.errors()
    return ".".join(str(part) for part in error["loc"]), error["type"], error["msg"]


def test_defaults_are_the_reference_workload():
    app = AppConfig.model_validate_json("{}")
    assert app == AppConfig()
    assert (app.namespace, app.name) == ("test-app", "test-app")
    assert app.image == "ghcr.io/mccutchen/go-httpbin:2.25.0"
    assert (app.cpu_request, app.cpu_limit, app.memory_request, app.memory_limit) == ("100m", "200m", "64Mi", "128Mi")
    assert (app.hpa.min_replicas, app.hpa.max_replicas, app.hpa.target_cpu_utilization_percent) == (1, 10, 50)
    scale_down = app.hpa.scale_down
    assert (scale_down.stabilization_window_seconds, scale_down.percent, scale_down.period_seconds) == (60, 30, 60)
    assert app.max_surge_percent == 100
    assert app.health_check_path == "/status/200"
    assert (app.ingress.scheme, app.ingress.tags) == ("internet-facing", {})
    assert app.ingress.inbound_cidrs == ("0.0.0.0/0",) and app.ingress.open_to_internet
    assert app.ingress.acknowledge_open_to_internet is False


@pytest.mark.parametrize(
    "image",
    [
        "ghcr.io/mccutchen/go-httpbin:2.19.0",
        "ghcr.io/mccutchen/go-httpbin@" + DIGEST,
        "ghcr.io/mccutchen/go-httpbin:2.25.0@" + DIGEST,
        "registry.example:5000/team/httpbin:v1_2",
    ],
)
def test_pinned_images_are_accepted(image):
    assert AppConfig.model_validate_json(json.dumps({"image": image})).image == image


def test_equal_request_and_limit_in_other_units_is_accepted():
    app = AppConfig.model_validate_json(
        '{"cpuRequest": "0.5", "cpuLimit": "500m", "memoryRequest": "1Gi", "memoryLimit": "1024Mi"}'
    )
    assert (app.cpu_limit, app.memory_limit) == ("500m", "1024Mi")


@pytest.mark.parametrize(
    "config, key, fragments",
    [
        ({"hpa": {"minReplicas": 12}}, "hpa", ["minReplicas (12)", "maxReplicas (10)", "must not exceed"]),
        ({"hpa": {"minReplicas": 0}}, "hpa.minReplicas", ["at least 1", "got 0"]),
        ({"hpa": {"targetCpuUtilizationPercent": 0}}, "hpa.targetCpuUtilizationPercent", ["from 1 to 100", "got 0"]),
        (
            {"hpa": {"targetCpuUtilizationPercent": 101}},
            "hpa.targetCpuUtilizationPercent",
            ["from 1 to 100", "got 101"],
        ),
        ({"hpa": {"scaleDown": {"percent": 0}}}, "hpa.scaleDown.percent", ["from 1 to 100", "got 0"]),
        (
            {"hpa": {"scaleDown": {"periodSeconds": 1801}}},
            "hpa.scaleDown.periodSeconds",
            ["from 1 to 1800", "got 1801"],
        ),
        (
            {"hpa": {"scaleDown": {"stabilizationWindowSeconds": 3601}}},
            "hpa.scaleDown.stabilizationWindowSeconds",
            ["0 to 3600", "got 3601"],
        ),
        ({"cpuRequest": "100mm"}, "cpuRequest", ["'100mm' is not a Kubernetes quantity", "100m"]),
        ({"cpuLimit": "2 cores"}, "cpuLimit", ["'2 cores' is not a Kubernetes quantity"]),
        ({"memoryRequest": "64MB"}, "memoryRequest", ["'64MB' is not a Kubernetes quantity", "64Mi"]),
        ({"memoryLimit": "1.5.0Gi"}, "memoryLimit", ["'1.5.0Gi' is not a Kubernetes quantity"]),
        ({"cpuRequest": "0"}, "cpuRequest", ["'0' must be greater than zero"]),
        ({"cpuLimit": "50m"}, "", ["cpuLimit (50m) is below cpuRequest (100m)", "at least the request"]),
        ({"memoryRequest": "256Mi"}, "", ["memoryLimit (128Mi) is below memoryRequest (256Mi)"]),
        ({"image": "ghcr.io/mccutchen/go-httpbin:latest"}, "image", ["moving tag 'latest'", "pin a version"]),
        ({"image": "ghcr.io/mccutchen/go-httpbin"}, "image", ["has no tag", "pin a version"]),
        ({"image": "localhost:5000/httpbin"}, "image", ["has no tag"]),
        ({"image": "httpbin@sha256:abc"}, "image", ["64 lowercase hex digits"]),
        ({"image": "httpbin:-2"}, "image", ["'-2' is not a valid image tag"]),
        ({"namespace": "Test_App"}, "namespace", ["'Test_App' is not a namespace name"]),
        ({"name": "1st-app"}, "name", ["'1st-app' is not a Service name", "starting with a letter"]),
        ({"maxSurgePercent": 0}, "maxSurgePercent", ["from 1 to 100", "got 0"]),
        ({"maxSurgePercent": 150}, "maxSurgePercent", ["from 1 to 100", "got 150"]),
        ({"healthCheckPath": "status/200"}, "healthCheckPath", ["'status/200' is not an HTTP path", "start with '/'"]),
        ({"healthCheckPath": "/status 200"}, "healthCheckPath", ["is not an HTTP path"]),
        ({"ingress": {"tags": {"team": "a,b"}}}, "ingress.tags", ["contains ',' or '='", "k1=v1,k2=v2"]),
        ({"ingress": {"tags": {"aws:owner": "me"}}}, "ingress.tags", ["'aws:owner' is not allowed"]),
        ({"ingress": {"inboundCidrs": []}}, "ingress.inboundCidrs", ["is empty", "open to nobody", "deployTestApp"]),
        (
            {"ingress": {"inboundCidrs": ["198.51.100.7"]}},
            "ingress.inboundCidrs",
            ["'198.51.100.7' is not an IPv4 CIDR"],
        ),
        ({"ingress": {"inboundCidrs": ["198.51.100.7/24"]}}, "ingress.inboundCidrs", ["is not an IPv4 CIDR block"]),
        ({"ingress": {"inboundCidrs": ["2001:db8::/32"]}}, "ingress.inboundCidrs", ["is not an IPv4 CIDR block"]),
        (
            {"ingress": {"inboundCidrs": ["10.0.0.0/8", "10.0.0.0/8"]}},
            "ingress.inboundCidrs",
            ["lists a block twice"],
        ),
        (
            {"ingress": {"inboundCidrs": [f"10.0.{n}.0/24" for n in range(51)]}},
            "ingress.inboundCidrs",
            ["lists 51 blocks", "at most 50"],
        ),
    ],
)
def test_bad_values_are_refused_with_a_message(config, key, fragments):
    location, error_type, message = _only_error(json.dumps(config))
    assert (location, error_type) == (key, "value_error")
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    "config, key, error_type",
    [
        ({"ingress": {"scheme": "public"}}, "ingress.scheme", "literal_error"),
        ({"cpuRequests": "100m"}, "cpuRequests", "extra_forbidden"),
        ({"hpa": {"minReplicas": "2"}}, "hpa.minReplicas", "int_type"),
        ({"cpuRequest": 1}, "cpuRequest", "string_type"),
    ],
)
def test_wrong_keys_and_types_are_refused(config, key, error_type):
    location, actual_type, _ = _only_error(json.dumps(config))
    assert (location, actual_type) == (key, error_type)


@pytest.mark.parametrize(
    "text, value",
    [
        ("100m", Decimal("0.1")),
        ("1", Decimal(1)),
        ("0.5", Decimal("0.5")),
        (".5", Decimal("0.5")),
        ("64Mi", Decimal(64 * 2**20)),
        ("1Gi", Decimal(2**30)),
        ("1G", Decimal(10**9)),
        ("1e3", Decimal(1000)),
        ("1E", Decimal(10**18)),
        ("250u", Decimal("0.00025")),
    ],
)
def test_parse_quantity_examples(text, value):
    assert parse_quantity(text) == value


_SUFFIX_FACTORS = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(1000), "M": Decimal(10**6), "G": Decimal(10**9),
    "Ki": Decimal(1024), "Mi": Decimal(1024**2), "Gi": Decimal(1024**3), "Ti": Decimal(1024**4),
}  # fmt: skip


@given(number=st.integers(min_value=0, max_value=10**9), suffix=st.sampled_from(sorted(_SUFFIX_FACTORS)))
def test_parse_quantity_scales_by_its_suffix(number, suffix):
    assert parse_quantity(f"{number}{suffix}") == number * _SUFFIX_FACTORS[suffix]


@pytest.mark.parametrize("text", ["", "m", "100mm", "1GB", "1.2.3", "ten", "1 Gi", "0x10", "1e1.5"])
def test_parse_quantity_refuses_malformed_text(text):
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        parse_quantity(text)
