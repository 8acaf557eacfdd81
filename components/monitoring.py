"""Monitoring: Prometheus (with kube-state-metrics) and Grafana in a namespace of their own on the
system nodes, Karpenter's dashboards and the plan dashboard, and the alerts generated from the
capacity plan. Nothing is exposed outside the cluster: Grafana is reached by port-forward
(`make grafana`) with an admin password the stack generates and keeps as a secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from stackconfig.foundation import SYSTEM_NODE_TOLERATIONS
from stackconfig.monitoring import (
    CONFIG_RELOADER_RESOURCES,
    GRAFANA_RESOURCES,
    KUBE_STATE_METRICS_RESOURCES,
    MonitoringConfig,
)
from stackmonitoring.dashboards import DATASOURCE_UID
from stackmonitoring.rules import KARPENTER_JOB, KUBE_STATE_METRICS_JOB

PROMETHEUS_REPOSITORY = "https://prometheus-community.github.io/helm-charts"
GRAFANA_REPOSITORY = "https://grafana-community.github.io/helm-charts"
RELEASE_TIMEOUT_SECONDS = 600
PROMETHEUS_SERVICE = "prometheus-server"
KUBE_STATE_METRICS_SERVICE = "kube-state-metrics"
GRAFANA_SERVICE = "grafana"
GRAFANA_ADMIN_SECRET = "grafana-admin"
GRAFANA_ADMIN_USER = "admin"
DASHBOARDS_CONFIG_MAP = "grafana-dashboards"
DASHBOARDS_PROVIDER = "eks-autoscaling"
DASHBOARDS_PATH = f"/var/lib/grafana/dashboards/{DASHBOARDS_PROVIDER}"
# Where the controllers run and how the charts name their metrics ports.
CONTROLLERS_NAMESPACE = "kube-system"
KARPENTER_SERVICE, KARPENTER_METRICS_PORT = "karpenter", "http-metrics"
LOAD_BALANCER_CONTROLLER_NAME, LOAD_BALANCER_CONTROLLER_METRICS_PORT = "aws-load-balancer-controller", "metrics-server"
LOAD_BALANCER_CONTROLLER_JOB = "aws-load-balancer-controller"
# The chart's default jobs, each switched off: Prometheus scrapes what the plan's alerts and the
# dashboards read, and no more (no kubelet, cAdvisor or annotation-discovered targets), which keeps
# it small on the system nodes. `prometheus` (itself) stays.
CHART_JOBS_OFF = (
    "kubernetes-api-servers",
    "kubernetes-nodes",
    "kubernetes-nodes-cadvisor",
    "kubernetes-service-endpoints",
    "kubernetes-service-endpoints-slow",
    "prometheus-pushgateway",
    "kubernetes-services",
    "kubernetes-pods",
    "kubernetes-pods-slow",
)
# Pod Security "restricted" for containers whose chart defaults fall short of it.
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
PSS_LEVEL = "restricted"


@dataclass(frozen=True)
class MonitoringArgs:
    """alert_rules: the rule file of alerting_rules.yml; dashboards: file name -> dashboard JSON;
    ready: what must exist first and be deleted last (the system nodes, the managed add-ons and
    the releases whose metrics are scraped)."""

    config: MonitoringConfig
    system_node_selector: Mapping[str, str]
    alert_rules: Mapping
    dashboards: Mapping[str, str]
    ready: Sequence[pulumi.Resource] = field(default_factory=list)


class Monitoring(pulumi.ComponentResource):
    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:monitoring:Monitoring", name, None, opts)
        config = args.config
        node_selector = {"kubernetes.io/os": "linux", **args.system_node_selector}
        after_ready = pulumi.ResourceOptions(parent=self, depends_on=list(args.ready))

        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=config.namespace,
                labels={
                    "app.kubernetes.io/part-of": "eks-autoscaling",
                    **{f"pod-security.kubernetes.io/{mode}": PSS_LEVEL for mode in ("enforce", "audit", "warn")},
                },
            ),
            opts=after_ready,
        )
        namespace = self.namespace.metadata.name
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=[self.namespace, *args.ready])

        # Letters and digits only: the password is shown by `pulumi stack output` and pasted into a form.
        self.grafana_password = random.RandomPassword(
            f"{name}-grafana-admin-password", length=32, special=False, opts=pulumi.ResourceOptions(parent=self)
        )
        self.grafana_admin = k8s.core.v1.Secret(
            f"{name}-grafana-admin",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=GRAFANA_ADMIN_SECRET, namespace=namespace),
            type="Opaque",
            string_data={"admin-user": GRAFANA_ADMIN_USER, "admin-password": self.grafana_password.result},
            opts=in_namespace,
        )
        self.dashboards = k8s.core.v1.ConfigMap(
            f"{name}-dashboards",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=DASHBOARDS_CONFIG_MAP, namespace=namespace),
            data=dict(sorted(args.dashboards.items())),
            opts=in_namespace,
        )

        def release(resource_name: str, depends_on: Sequence[pulumi.Resource], **release_args) -> k8s.helm.v3.Release:
            return k8s.helm.v3.Release(
                resource_name,
                namespace=namespace,
                timeout=RELEASE_TIMEOUT_SECONDS,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.namespace, *args.ready, *depends_on]),
                **release_args,
            )

        self.prometheus = release(
            f"{name}-prometheus",
            [],
            name="prometheus",
            chart="prometheus",
            version=config.prometheus.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=PROMETHEUS_REPOSITORY),
            values=prometheus_values(config, node_selector, args.alert_rules),
        )
        self.grafana = release(
            f"{name}-grafana",
            [self.grafana_admin, self.dashboards],
            name="grafana",
            chart="grafana",
            version=config.grafana.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=GRAFANA_REPOSITORY),
            values=grafana_values(config, node_selector),
        )
        self.grafana_admin_password: pulumi.Output[str] = pulumi.Output.secret(self.grafana_password.result)
        self.register_outputs(
            {
                "namespace": namespace,
                "prometheus": self.prometheus.status,
                "grafana": self.grafana.status,
                "grafanaAdminPassword": self.grafana_admin_password,
            }
        )


def system_tolerations() -> list[dict]:
    """The system nodes' taint, which the monitoring charts tolerate nothing of by default."""
    return [dict(toleration) for toleration in SYSTEM_NODE_TOLERATIONS]


def prometheus_values(config: MonitoringConfig, node_selector: Mapping[str, str], alert_rules: Mapping) -> dict:
    """Values of the prometheus chart: the server on the system nodes without a volume, its
    scrape jobs, the alert rules, and kube-state-metrics; no Alertmanager, node exporter or
    Pushgateway."""
    prometheus = config.prometheus
    namespace = config.namespace
    return {
        "server": {
            "fullnameOverride": PROMETHEUS_SERVICE,
            "nodeSelector": dict(node_selector),
            "tolerations": system_tolerations(),
            "resources": prometheus.resources,
            "retention": prometheus.retention,
            "retentionSize": prometheus.retention_size,
            "persistentVolume": {"enabled": False},
            "emptyDir": {"sizeLimit": prometheus.storage_limit},
            "global": {
                "scrape_interval": prometheus.scrape_interval,
                "scrape_timeout": "10s",
                "evaluation_interval": prometheus.scrape_interval,
            },
            # The chart's own pod security context, with the seccomp profile "restricted" asks for.
            "securityContext": {
                "runAsUser": 65534,
                "runAsNonRoot": True,
                "runAsGroup": 65534,
                "fsGroup": 65534,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containerSecurityContext": RESTRICTED_CONTAINER,
            "service": {"type": "ClusterIP"},
        },
        "configmapReload": {
            "prometheus": {"resources": CONFIG_RELOADER_RESOURCES, "containerSecurityContext": RESTRICTED_CONTAINER}
        },
        "alertmanager": {"enabled": False},
        "prometheus-node-exporter": {"enabled": False},
        "prometheus-pushgateway": {"enabled": False},
        "kube-state-metrics": {
            "fullnameOverride": KUBE_STATE_METRICS_SERVICE,
            "nodeSelector": dict(node_selector),
            "tolerations": system_tolerations(),
            "resources": KUBE_STATE_METRICS_RESOURCES,
            # Scraped by the job below, not by annotation.
            "prometheusScrape": False,
        },
        "scrapeConfigs": {
            **{job: {"enabled": False} for job in CHART_JOBS_OFF},
            KARPENTER_JOB: _service_job(CONTROLLERS_NAMESPACE, KARPENTER_SERVICE, KARPENTER_METRICS_PORT),
            LOAD_BALANCER_CONTROLLER_JOB: {
                "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [CONTROLLERS_NAMESPACE]}}],
                "relabel_configs": [
                    {
                        "source_labels": [
                            "__meta_kubernetes_pod_label_app_kubernetes_io_name",
                            "__meta_kubernetes_pod_container_port_name",
                        ],
                        "action": "keep",
                        "regex": f"{LOAD_BALANCER_CONTROLLER_NAME};{LOAD_BALANCER_CONTROLLER_METRICS_PORT}",
                    },
                    {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                ],
            },
            KUBE_STATE_METRICS_JOB: _service_job(namespace, KUBE_STATE_METRICS_SERVICE, "http"),
        },
        "serverFiles": {"alerting_rules.yml": dict(alert_rules)},
    }


def grafana_values(config: MonitoringConfig, node_selector: Mapping[str, str]) -> dict:
    """Values of the grafana chart: ClusterIP only, no volume, the admin from the stack's secret,
    Prometheus as the data source and the dashboards from the component's ConfigMap."""
    return {
        "nodeSelector": dict(node_selector),
        "tolerations": system_tolerations(),
        "resources": GRAFANA_RESOURCES,
        "persistence": {"enabled": False},
        "service": {"type": "ClusterIP"},
        "ingress": {"enabled": False},
        "testFramework": {"enabled": False},
        "admin": {"existingSecret": GRAFANA_ADMIN_SECRET, "userKey": "admin-user", "passwordKey": "admin-password"},
        "datasources": {
            "datasources.yaml": {
                "apiVersion": 1,
                "datasources": [
                    {
                        "name": "Prometheus",
                        "type": "prometheus",
                        "uid": DATASOURCE_UID,
                        "url": f"http://{PROMETHEUS_SERVICE}.{config.namespace}.svc:80",
                        "access": "proxy",
                        "isDefault": True,
                        "editable": False,
                    }
                ],
            }
        },
        "dashboardProviders": {
            "dashboardproviders.yaml": {
                "apiVersion": 1,
                "providers": [
                    {
                        "name": DASHBOARDS_PROVIDER,
                        "orgId": 1,
                        "folder": "eks-autoscaling",
                        "type": "file",
                        "disableDeletion": True,
                        "editable": False,
                        "options": {"path": DASHBOARDS_PATH},
                    }
                ],
            }
        },
        "extraConfigmapMounts": [
            {"name": "dashboards", "mountPath": DASHBOARDS_PATH, "configMap": DASHBOARDS_CONFIG_MAP, "readOnly": True}
        ],
        # Nothing phones home from inside the cluster.
        "grafana.ini": {"analytics": {"check_for_updates": False, "reporting_enabled": False}},
    }


def _service_job(namespace: str, service: str, port: str) -> dict:
    """A job over the endpoints of one Service port, as Karpenter's getting-started guide scrapes
    Karpenter (by EndpointSlices, which replace the Endpoints API the guide's job reads). It adds
    no target labels: the metrics carry `namespace` and `pod` labels of their own (of the pods they
    describe), which a target label of the same name would rename to `exported_namespace`."""
    return {
        "kubernetes_sd_configs": [{"role": "endpointslice", "namespaces": {"names": [namespace]}}],
        "relabel_configs": [
            {
                "source_labels": ["__meta_kubernetes_service_name", "__meta_kubernetes_endpointslice_port_name"],
                "action": "keep",
                "regex": f"{service};{port}",
            }
        ],
    }
