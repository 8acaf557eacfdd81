"""The upstream files monitoring is checked against (`upstream/`, see its README) and a reader of
the metric names a PromQL expression selects."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

UPSTREAM = Path(__file__).resolve().parent / "upstream"
PROMETHEUS_CHART_VALUES = UPSTREAM / "prometheus-chart-29.27.0-values.yaml"
KUBE_STATE_METRICS_CHART_VALUES = UPSTREAM / "kube-state-metrics-chart-8.4.0-values.yaml"
GRAFANA_CHART_VALUES = UPSTREAM / "grafana-chart-12.11.1-values.yaml"
GUIDE_PROMETHEUS_VALUES = UPSTREAM / "karpenter-1.14.1-prometheus-values.yaml"
GUIDE_GRAFANA_VALUES = UPSTREAM / "karpenter-1.14.1-grafana-values.yaml"
KARPENTER_METRICS = UPSTREAM / "karpenter-v1.14-metrics.txt"
KUBE_STATE_METRICS_METRICS = UPSTREAM / "kube-state-metrics-v2.20.0-metrics.txt"
# Series Prometheus itself writes for every target.
PROMETHEUS_SERIES = frozenset({"up"})
# Suffixes of the series a histogram or summary is exported as.
SAMPLE_SUFFIXES = ("_bucket", "_sum", "_count")


def load_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@cache
def karpenter_metrics() -> frozenset[str]:
    return frozenset(_names(KARPENTER_METRICS))


@cache
def kube_state_metrics() -> dict[str, tuple[str, ...]]:
    """Metric name -> its status and flags (`STABLE`, `opt-in`, ...)."""
    rows = (line.split() for line in KUBE_STATE_METRICS_METRICS.read_text().splitlines() if not line.startswith("#"))
    return {name: tuple(flags) for name, *flags in rows}


def _names(path: Path) -> list[str]:
    return [line.split()[0] for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def known_metric(name: str) -> bool:
    """Whether a series name is exported by the pinned Karpenter (histogram and summary series
    counted under their family, as its list names families), by kube-state-metrics (gauges only,
    and not only on opt-in) or by Prometheus itself."""
    families = {name} | {name.removesuffix(suffix) for suffix in SAMPLE_SUFFIXES if name.endswith(suffix)}
    if families & karpenter_metrics() or name in PROMETHEUS_SERIES:
        return True
    return name in kube_state_metrics() and "opt-in" not in kube_state_metrics()[name]


# PromQL words that are not series names: aggregations and their modifiers, operators, keywords.
_PROMQL_WORDS = frozenset({
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile",
    "limitk", "limit_ratio", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "atan2", "inf", "nan",
})  # fmt: skip
_COMMENT = re.compile(r"#[^\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_VARIABLE = re.compile(r"\$\{?\w+\}?")
_IDENTIFIER = re.compile(r"(?<![\w.:])([A-Za-z_:][\w:]*)(\s*\()?")


def metric_names(expr: str) -> set[str]:
    """The series names an expression selects: identifiers that are neither functions (followed
    by a parenthesis), nor label names (in braces or a grouping clause), nor strings, durations,
    Grafana variables or PromQL keywords."""
    text = _COMMENT.sub(" ", expr)
    text = _STRING.sub('""', text)
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    text = _VARIABLE.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        name, call = match.groups()
        if call or name in _PROMQL_WORDS or name.startswith("__"):
            continue
        names.add(name)
    return names
