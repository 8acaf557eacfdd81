"""The monitoring add-on as the program registers it: on in dev and off by default, on the system
nodes, its admin password a secret everywhere, created after and deleted before what it needs, and
refused before any resource when the system nodes cannot hold it."""

from __future__ import annotations

from typing import Any

import pytest

from offline.plan import write_plan
from offline.wire import Secret
from tests.harness import ProgramFailed, run_program

COMPONENT = "eks-autoscaling:monitoring:Monitoring"
RELEASE = "kubernetes:helm.sh/v3:Release"
PASSWORD = "random:index/randomPassword:RandomPassword"
NAMESPACE = "kubernetes:core/v1:Namespace"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


def monitoring_resources(recording) -> list:
    component = recording.one(COMPONENT)
    return recording.descendants(component)


def release(recording, name):
    return recording.one(RELEASE, f"monitoring-{name}")


def test_the_component_and_what_it_creates(dev):
    component = dev.one(COMPONENT)
    assert component.name == "monitoring"
    assert component.parent == dev.one("eks-autoscaling:index:EksAutoscaling").urn
    assert {(r.type, r.name) for r in monitoring_resources(dev)} == {
        (NAMESPACE, "monitoring-namespace"),
        (CONFIG_MAP, "monitoring-dashboards"),
        (SECRET, "monitoring-grafana-admin"),
        (RELEASE, "monitoring-grafana"),
        (RELEASE, "monitoring-prometheus"),
        (PASSWORD, "monitoring-grafana-admin-password"),
    }
    provider = dev.one("pulumi:providers:kubernetes")
    for resource in monitoring_resources(dev):
        if resource.type.startswith("kubernetes:"):
            assert resource.provider == provider.urn, resource


def test_the_namespace_enforces_restricted(dev):
    namespace = dev.one(NAMESPACE, "monitoring-namespace")
    assert namespace.input("metadata.name") == "monitoring"
    labels = namespace.input("metadata.labels")
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
    for name in ("prometheus", "grafana"):
        assert release(dev, name).input("namespace") == "monitoring"
    assert (
        dev.one(SECRET).input("metadata.namespace") == dev.one(CONFIG_MAP).input("metadata.namespace") == "monitoring"
    )


def test_every_pod_runs_on_the_system_nodes(dev):
    system = {"kubernetes.io/os": "linux", "node-role": "system"}
    prometheus = release(dev, "prometheus").input("values")
    assert prometheus["server"]["nodeSelector"] == system
    assert prometheus["kube-state-metrics"]["nodeSelector"] == system
    assert release(dev, "grafana").input("values.nodeSelector") == system
    # The only other pods the charts would start are off: a DaemonSet on every node, Alertmanager, Pushgateway.
    assert prometheus["prometheus-node-exporter"] == {"enabled": False}
    assert prometheus["alertmanager"] == {"enabled": False}
    assert prometheus["prometheus-pushgateway"] == {"enabled": False}


def test_the_system_label_follows_the_node_group():
    recording = run_program("dev", {"nodeGroup": {"labels": {"pool": "controllers"}}})
    assert release(recording, "grafana").input("values.nodeSelector") == {
        "kubernetes.io/os": "linux",
        "pool": "controllers",
    }


# --- the admin password ------------------------------------------------------------------------------


def _plain_strings(value: Any) -> list[str]:
    """Every string of an input not wrapped as a secret."""
    if isinstance(value, Secret):
        return []
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [str(key), *_plain_strings(item)]]
    if isinstance(value, list):
        return [s for item in value for s in _plain_strings(item)]
    return [value] if isinstance(value, str) else []


def test_the_password_is_generated_and_only_ever_a_secret(dev):
    password = dev.one(PASSWORD)
    assert password.input("length") >= 32 and password.input("special") is False
    value = password.outputs["result"]
    secret = dev.one(SECRET, "monitoring-grafana-admin")
    assert isinstance(secret.inputs["stringData"], Secret)
    assert secret.input("stringData") == {"admin-user": "admin", "admin-password": value}
    assert "grafanaAdminPassword" in dev.secret_outputs and dev.outputs["grafanaAdminPassword"] == value
    for resource in dev.resources:
        if resource.type != PASSWORD:
            assert not any(value in text for text in _plain_strings(resource.inputs)), resource
    # Grafana reads it from the Secret: the release's values, which Helm stores in the cluster, hold none.
    assert value not in str(release(dev, "grafana").input("values"))


def test_the_plan_shows_the_password_as_a_secret(dev, tmp_path):
    value = dev.outputs["grafanaAdminPassword"]
    written = write_plan(dev, tmp_path / "dev", capacity_report=lambda: "")
    texts = {path.name: path.read_text() for path in written if path.is_file()}
    assert not [name for name, text in texts.items() if value in text]
    assert '"grafanaAdminPassword": "[secret]"' in texts["outputs.json"]
    assert any("monitoring-prometheus" in text for text in texts.values())


# --- order of creation and deletion -----------------------------------------------------------------


def test_monitoring_comes_after_what_it_needs_and_goes_before_it(dev):
    needed = [
        dev.one("eks:index:ManagedNodeGroup"),
        next(a for a in dev.of_type("aws:eks/addon:Addon") if a.input("addonName") == "coredns"),
        dev.one(RELEASE, "addons-karpenter"),
        dev.one(RELEASE, "addons-aws-load-balancer-controller"),
        dev.one("pulumi:providers:kubernetes"),
        dev.one("eks:index:Cluster"),
    ]
    order = dev.deletion_order()
    for resource in monitoring_resources(dev):
        if resource.type == PASSWORD:
            continue
        for dependency in needed:
            assert dev.depends_on(resource, dependency), (resource, dependency)
            assert order.index(resource) < order.index(dependency), (resource, dependency)


def test_the_namespace_goes_last_of_monitoring(dev):
    namespace = dev.one(NAMESPACE, "monitoring-namespace")
    order = dev.deletion_order()
    for resource in monitoring_resources(dev):
        if resource.type.startswith("kubernetes:") and resource is not namespace:
            assert dev.depends_on(resource, namespace), resource
            assert order.index(resource) < order.index(namespace), resource
    # Grafana goes before the Secret and dashboards it mounts.
    grafana = release(dev, "grafana")
    for mounted in (dev.one(SECRET), dev.one(CONFIG_MAP)):
        assert dev.depends_on(grafana, mounted) and order.index(grafana) < order.index(mounted)


def test_nothing_of_the_workload_waits_for_monitoring(dev):
    component = dev.one(COMPONENT)
    for resource in dev.descendants(dev.one("eks-autoscaling:workload:Workload")):
        assert not dev.depends_on(resource, component), resource


# --- on in dev only ------------------------------------------------------------------------------------


def test_off_by_default_leaves_nothing_of_it():
    recording = run_program("dev", {"monitoring": {"enabled": False}})
    assert recording.of_type(COMPONENT) == [] and recording.of_type(PASSWORD) == []
    assert all(not r.name.startswith("monitoring") for r in recording.resources)
    assert recording.outputs["monitoringNamespace"] is None
    assert recording.outputs["grafanaAdminPassword"] is None
    assert recording.secret_outputs == {"kubeconfig"}


def test_the_prod_stack_leaves_it_off():
    from stackconfig.load import load_stack_file
    from stackconfig.model import StackConfig

    assert StackConfig.model_fields["monitoring"].default.enabled is False
    assert load_stack_file("Pulumi.prod.yaml").monitoring.enabled is False
    assert load_stack_file("Pulumi.dev.yaml").monitoring.enabled is True


def test_another_namespace():
    recording = run_program("dev", {"monitoring": {"enabled": True, "namespace": "observability"}})
    assert recording.one(NAMESPACE, "monitoring-namespace").input("metadata.name") == "observability"
    values = release(recording, "prometheus").input("values")
    assert values["scrapeConfigs"]["kube-state-metrics"]["kubernetes_sd_configs"][0]["namespaces"] == {
        "names": ["observability"]
    }
    (source,) = release(recording, "grafana").input("values.datasources")["datasources.yaml"]["datasources"]
    assert source["url"] == "http://prometheus-server.observability.svc:80"
    assert recording.outputs["monitoringNamespace"] == "observability"


# --- the system nodes must hold it ---------------------------------------------------------------------


def test_the_system_pods_count_monitoring():
    from stackconfig.load import load_stack_file
    from stackconfig.system_pods import system_pods

    config = load_stack_file("Pulumi.dev.yaml")
    pods = {pod.name: pod for pod in system_pods(config.addons, config.monitoring)}
    # Prometheus with its config reloader, kube-state-metrics and Grafana, at their requests.
    assert (pods["prometheus-server"].requests.cpu, pods["prometheus-server"].requests.memory) == (260, 544)
    assert (pods["kube-state-metrics"].requests.cpu, pods["kube-state-metrics"].requests.memory) == (10, 64)
    assert (pods["grafana"].requests.cpu, pods["grafana"].requests.memory) == (50, 192)
    assert all(pods[name].requests.pods == 1 for name in ("prometheus-server", "kube-state-metrics", "grafana"))
    off = config.monitoring.model_copy(update={"enabled": False})
    assert not {"prometheus-server", "grafana"} & {pod.name for pod in system_pods(config.addons, off)}


@pytest.mark.parametrize(
    "monitoring, fragments",
    [
        (
            # 2 x m5.large leave 3610m cpu for pods; with Karpenter's 2 cpu and the rest, 1.5 cpu more does not fit.
            {"prometheus": {"cpuRequest": "1500m"}},
            [
                "nodeGroup: 2 node(s) of m5.large",
                "prometheus-server x1",
                "grafana x1",
                "monitoring.prometheus.cpuRequest",
            ],
        ),
        (
            {"prometheus": {"cpuRequest": "1900m"}},
            ["less than one prometheus-server replica requests", "monitoring.enabled: false"],
        ),
        (
            {"prometheus": {"memoryRequest": "8Gi", "memoryLimit": "8Gi"}},
            ["less than one prometheus-server replica requests (260m cpu, 8224 MiB memory"],
        ),
    ],
    ids=["total", "cpu-of-one-pod", "memory-of-one-pod"],
)
def test_system_nodes_that_cannot_hold_monitoring_are_refused_before_any_resource(monitoring, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"monitoring": {"enabled": True, **monitoring}})
    for fragment in fragments:
        assert fragment in str(failure.value)
    assert failure.value.recording.resources == []


def test_the_same_requests_fit_larger_system_nodes_or_without_monitoring():
    run_program(
        "dev",
        {
            "monitoring": {"enabled": True, "prometheus": {"cpuRequest": "1500m"}},
            "nodeGroup": {"minSize": 3, "desiredSize": 3},
        },
    )
    run_program("dev", {"monitoring": {"enabled": False, "prometheus": {"cpuRequest": "1500m"}}})
