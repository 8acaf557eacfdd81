"""The values of the prometheus and grafana releases against the pinned charts' values.yaml: every key
set exists in the chart, Prometheus scrapes what it must (as Karpenter's guide scrapes Karpenter),
nothing gets a volume or a load balancer, and Grafana is wired to the stack's own objects."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from tests.monitoring.recorded import release, values
from tests.monitoring.upstream import (
    GRAFANA_CHART_VALUES,
    GUIDE_GRAFANA_VALUES,
    GUIDE_PROMETHEUS_VALUES,
    KUBE_STATE_METRICS_CHART_VALUES,
    PROMETHEUS_CHART_VALUES,
    load_yaml,
)

KUBERNETES_VERSION = "1.35.0"
# Maps whose keys are the user's by design, so a key absent from values.yaml is no mistake:
# scrapeConfigs takes new jobs as keys ("Further scrapeConfigs can be added as new keys"), a pod
# security context is Kubernetes' type (checked against its schema below), grafana.ini is Grafana's.
OPEN_MAPS = {"scrapeConfigs", "server.securityContext", "grafana.ini"}


def unknown_keys(ours: dict, chart: dict, path: str = "") -> list[str]:
    """Keys of `ours` that the chart's values do not have. A chart value that is an empty map or
    list is a slot for the user's content, so what goes in it is not compared."""
    problems = []
    for key, value in ours.items():
        where = f"{path}.{key}" if path else key
        if key not in chart:
            problems.append(where)
        elif where not in OPEN_MAPS and isinstance(value, dict) and isinstance(chart[key], dict) and chart[key]:
            problems += unknown_keys(value, chart[key], where)
    return problems


@pytest.fixture(scope="module")
def prometheus(dev) -> dict:
    return values(dev, "prometheus")


@pytest.fixture(scope="module")
def grafana(dev) -> dict:
    return values(dev, "grafana")


def test_the_releases(dev):
    provider = dev.one("pulumi:providers:kubernetes")
    for name, chart, version, repository in (
        ("prometheus", "prometheus", "29.27.0", "https://prometheus-community.github.io/helm-charts"),
        ("grafana", "grafana", "12.11.1", "https://grafana-community.github.io/helm-charts"),
    ):
        found = release(dev, name)
        assert (found.input("chart"), found.input("version")) == (chart, version)
        assert found.input("repositoryOpts.repo") == repository
        assert found.input("name") == name and found.input("namespace") == "monitoring"
        assert found.input("skipAwait", False) is False and found.input("timeout") == 600
        assert found.provider == provider.urn


def test_every_prometheus_key_is_in_the_chart(prometheus):
    chart = load_yaml(PROMETHEUS_CHART_VALUES)
    ours = {key: value for key, value in prometheus.items() if key != "kube-state-metrics"}
    assert unknown_keys(ours, chart) == []
    assert "kube-state-metrics" in chart


def test_every_kube_state_metrics_key_is_in_the_subchart(prometheus):
    assert unknown_keys(prometheus["kube-state-metrics"], load_yaml(KUBE_STATE_METRICS_CHART_VALUES)) == []


def test_every_grafana_key_is_in_the_chart(grafana):
    assert unknown_keys(grafana, load_yaml(GRAFANA_CHART_VALUES)) == []


def test_the_key_check_finds_a_misspelt_key():
    chart = load_yaml(PROMETHEUS_CHART_VALUES)
    assert unknown_keys({"server": {"retension": "7d", "persistentVolume": {"enable": False}}}, chart) == [
        "server.retension",
        "server.persistentVolume.enable",
    ]
    assert unknown_keys({"server": {"nodeSelector": {"any": "label"}}}, chart) == []


def test_the_kubernetes_typed_values_are_valid_pod_fields(prometheus, grafana):
    """The security contexts, resources and node selectors go into pod specs as they are."""
    server = prometheus["server"]
    containers = [
        {
            "name": "server",
            "image": "x:1",
            "resources": server["resources"],
            "securityContext": server["containerSecurityContext"],
        },
        {
            "name": "reload",
            "image": "x:1",
            "resources": prometheus["configmapReload"]["prometheus"]["resources"],
            "securityContext": prometheus["configmapReload"]["prometheus"]["containerSecurityContext"],
        },
        {"name": "ksm", "image": "x:1", "resources": prometheus["kube-state-metrics"]["resources"]},
        {"name": "grafana", "image": "x:1", "resources": grafana["resources"]},
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "values"},
        "spec": {
            "securityContext": server["securityContext"],
            "nodeSelector": server["nodeSelector"],
            "containers": containers,
        },
    }
    kubernetes_validate.validate(pod, KUBERNETES_VERSION, strict=True)


def test_the_chart_jobs_are_replaced_by_the_stacks(prometheus):
    chart_jobs = load_yaml(PROMETHEUS_CHART_VALUES)["scrapeConfigs"]
    ours = prometheus["scrapeConfigs"]
    # Every default job but Prometheus' own is switched off, so none scrapes by annotation or node.
    assert {job for job in chart_jobs if job != "prometheus"} == {
        job for job, config in ours.items() if config == {"enabled": False}
    }
    enabled = {job for job in {**chart_jobs, **ours} if ours.get(job, {}).get("enabled", True)}
    assert enabled == {"prometheus", "karpenter", "aws-load-balancer-controller", "kube-state-metrics"}


def test_karpenter_is_scraped_as_the_getting_started_guide_does(dev, prometheus):
    guide = load_yaml(GUIDE_PROMETHEUS_VALUES)
    (guide_job,) = yaml.safe_load(guide["extraScrapeConfigs"].replace("$KARPENTER_NAMESPACE", "kube-system"))
    (guide_sd,) = guide_job["kubernetes_sd_configs"]
    (guide_keep,) = guide_job["relabel_configs"]
    ours = prometheus["scrapeConfigs"]["karpenter"]
    (sd,) = ours["kubernetes_sd_configs"]
    (keep,) = ours["relabel_configs"]
    assert guide_job["job_name"] == "karpenter" and guide_sd["role"] == "endpoints"
    # The same Service and port, found through EndpointSlices instead of the deprecated Endpoints API.
    assert sd == {"role": "endpointslice", "namespaces": guide_sd["namespaces"]}
    assert guide_keep["source_labels"] == ["__meta_kubernetes_endpoints_name", "__meta_kubernetes_endpoint_port_name"]
    assert keep["source_labels"] == ["__meta_kubernetes_service_name", "__meta_kubernetes_endpointslice_port_name"]
    assert (
        (keep["action"], keep["regex"])
        == (guide_keep["action"], guide_keep["regex"])
        == ("keep", "karpenter;http-metrics")
    )
    # The karpenter chart names its Service after the release, in the release's namespace.
    karpenter = dev.one("kubernetes:helm.sh/v3:Release", "addons-karpenter")
    assert (karpenter.input("name"), karpenter.input("namespace")) == ("karpenter", "kube-system")


def test_the_load_balancer_controller_and_kube_state_metrics_are_scraped(dev, prometheus):
    jobs = prometheus["scrapeConfigs"]
    lbc = jobs["aws-load-balancer-controller"]
    assert lbc["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["kube-system"]}}]
    # The chart labels its pods with its name and calls the container port `metrics-server`.
    assert lbc["relabel_configs"][0]["regex"] == "aws-load-balancer-controller;metrics-server"
    controller = dev.one("kubernetes:helm.sh/v3:Release", "addons-aws-load-balancer-controller")
    assert (controller.input("name"), controller.input("namespace")) == ("aws-load-balancer-controller", "kube-system")
    ksm = jobs["kube-state-metrics"]
    assert ksm["kubernetes_sd_configs"] == [{"role": "endpointslice", "namespaces": {"names": ["monitoring"]}}]
    service = prometheus["kube-state-metrics"]["fullnameOverride"]
    assert ksm["relabel_configs"][0]["regex"] == f"{service};http"
    # No target label may rename the namespace and pod labels kube-state-metrics exports.
    assert all(rule.get("target_label") not in ("namespace", "pod") for rule in ksm["relabel_configs"])


def test_nothing_gets_a_volume(prometheus, grafana):
    chart = load_yaml(PROMETHEUS_CHART_VALUES)
    # The chart's defaults would claim two volumes: the server's and Alertmanager's.
    assert chart["server"]["persistentVolume"]["enabled"] is True
    assert chart["alertmanager"]["enabled"] is True and chart["alertmanager"]["persistence"]["enabled"] is True
    assert prometheus["server"]["persistentVolume"] == {"enabled": False}
    assert prometheus["server"]["emptyDir"] == {"sizeLimit": "4Gi"}
    assert prometheus["alertmanager"] == {"enabled": False}
    assert prometheus["prometheus-pushgateway"] == {"enabled": False}
    assert grafana["persistence"] == {"enabled": False}
    # Prometheus keeps 80 % of its emptyDir for its data.
    assert (prometheus["server"]["retention"], prometheus["server"]["retentionSize"]) == ("7d", "3276MB")


def test_nothing_gets_a_load_balancer(prometheus, grafana):
    prometheus_chart, grafana_chart = load_yaml(PROMETHEUS_CHART_VALUES), load_yaml(GRAFANA_CHART_VALUES)
    assert prometheus["server"]["service"] == {"type": "ClusterIP"}
    assert grafana["service"] == {"type": "ClusterIP"}
    assert grafana["ingress"] == {"enabled": False}
    # What the stack leaves at the charts' defaults is off there.
    assert prometheus_chart["server"]["ingress"]["enabled"] is False and "ingress" not in prometheus["server"]
    assert grafana_chart["route"]["main"]["enabled"] is False and "route" not in grafana


def test_grafana_reads_the_stacks_secret_dashboards_and_prometheus(dev, prometheus, grafana):
    secret = dev.one("kubernetes:core/v1:Secret", "monitoring-grafana-admin")
    admin = grafana["admin"]
    assert admin["existingSecret"] == secret.input("metadata.name")
    assert {admin["userKey"], admin["passwordKey"]} == set(secret.input("stringData"))
    config_map = dev.one("kubernetes:core/v1:ConfigMap", "monitoring-dashboards")
    (mount,) = grafana["extraConfigmapMounts"]
    assert mount["configMap"] == config_map.input("metadata.name") and mount["readOnly"] is True
    (provider,) = grafana["dashboardProviders"]["dashboardproviders.yaml"]["providers"]
    assert provider["options"]["path"] == mount["mountPath"] and provider["type"] == "file"
    (source,) = grafana["datasources"]["datasources.yaml"]["datasources"]
    port = load_yaml(PROMETHEUS_CHART_VALUES)["server"]["service"]["servicePort"]
    assert source["url"] == f"http://{prometheus['server']['fullnameOverride']}.monitoring.svc:{port}"
    # The guide's data source names the same Service, from within its namespace.
    (guide_source,) = load_yaml(GUIDE_GRAFANA_VALUES)["datasources"]["datasources.yaml"]["datasources"]
    assert guide_source["url"] == f"http://{prometheus['server']['fullnameOverride']}:{port}"
    assert grafana["testFramework"] == {"enabled": False}
