"""Workload inputs: Kubernetes quantities, rollout surge, manifests."""

from pathlib import Path

import pytest

from sizing.errors import SizingInputError
from sizing.kube.manifests import pod_requests
from sizing.kube.objects import read_objects
from sizing.kube.quantities import cpu_millicores, format_cpu, format_memory, memory_mib
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, Workload, surge_pods
from sizing.planning.objects import read_object_files

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "value, millicores",
    [("100m", 100), ("0.5", 500), (1, 1000), (0.25, 250), ("1.5", 1500), ("2", 2000), ("0.1m", 1), ("1e-1", 100)],
)
def test_cpu_quantities_become_millicores_rounded_up(value, millicores):
    assert cpu_millicores(value, "cpu") == millicores


@pytest.mark.parametrize(
    "value, mib",
    [
        ("128Mi", 128),
        ("1Gi", 1024),
        ("500M", 477),
        (1048576, 1),
        (1048577, 2),
        ("1G", 954),
        ("512Ki", 1),
        ("2Ti", 2097152),
    ],
)
def test_memory_quantities_become_mib_rounded_up(value, mib):
    assert memory_mib(value, "memory") == mib


@pytest.mark.parametrize("value", ["100x", "", "1.2.3", "Mi", True, None, [1], "1GB", float("nan")])
def test_malformed_quantities_are_refused_with_the_field_and_the_allowed_forms(value):
    with pytest.raises(SizingInputError) as error:
        memory_mib(value, "workload 'api': requests.memory")
    assert "workload 'api': requests.memory" in str(error.value)
    assert "128Mi" in str(error.value)


def test_quantities_format_back_as_whole_cores_and_gibibytes():
    assert (format_cpu(24000), format_cpu(1500)) == ("24", "1500m")
    assert (format_memory(96 * 1024), format_memory(1536)) == ("96Gi", "1536Mi")


@pytest.mark.parametrize(
    "replicas, surge, extra", [(10, "100%", 10), (10, "25%", 3), (3, "25%", 1), (7, 2, 2), (7, "2", 2), (4, "0%", 0)]
)
def test_surge_is_a_count_or_a_percentage_rounded_up(replicas, surge, extra):
    assert surge_pods(replicas, surge) == extra


def test_peak_pods_are_replicas_plus_surge():
    workload = Workload("api", 250, 512, replicas=10, max_surge="100%")
    assert (workload.surge, workload.peak_pods) == (10, 20)
    assert Workload("api", 250, 512, replicas=10).peak_pods == 13  # default surge 25 %, rounded up


@pytest.mark.parametrize("surge", ["-1", "abc", -1, "50 percent", True, 1.5])
def test_bad_surge_is_refused(surge):
    with pytest.raises(SizingInputError, match="maxSurge"):
        Workload("api", 250, 512, replicas=4, max_surge=surge)


@pytest.mark.parametrize("cpu, memory, text", [(-5, 512, "-5m cpu"), (100, -1, "-1Mi memory"), (1.5, 64, "1.5")])
def test_negative_or_fractional_requests_name_the_workload(cpu, memory, text):
    with pytest.raises(SizingInputError) as error:
        Workload("api", cpu, memory, replicas=1)
    assert "workload 'api'" in str(error.value) and text in str(error.value)


def test_default_daemonsets_take_a_pod_slot_each():
    total = sum((ds.requests for ds in DEFAULT_DAEMON_SETS), DaemonSet("x").requests.scaled(0))
    assert (total.cpu, total.memory, total.pods) == (125, 0, 3)


DEPLOYMENT_AND_HPA = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 50%, maxUnavailable: 0}}
  template:
    spec:
      nodeSelector: {kubernetes.io/arch: arm64}
      initContainers:
        - name: migrate
          resources: {requests: {cpu: "1", memory: 64Mi}}
      containers:
        - name: app
          resources: {requests: {cpu: 250m, memory: 256Mi}}
        - name: proxy
          resources: {limits: {cpu: 100m, memory: 128Mi}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 12
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{port: 80}]}
"""


def test_a_deployment_and_its_hpa_give_the_peak_workload():
    # requests: cpu max(250m + 100m (limit stands in), 1000m init) = 1000m;
    # memory max(256Mi + 128Mi, 64Mi) = 384Mi. Peak: HPA maxReplicas 12 (not the
    # Deployment's 2) plus 50 % surge = 6.
    (workload,) = read_objects([("app.yaml", DEPLOYMENT_AND_HPA)]).workloads
    assert workload.name == "shop/api"
    assert (workload.cpu_millicores, workload.memory_mib) == (1000, 384)
    assert (workload.replicas, workload.surge, workload.peak_pods) == (12, 6, 18)
    assert dict(workload.node_selector) == {"kubernetes.io/arch": "arm64"}


def test_deployment_defaults_are_one_replica_and_a_quarter_surge():
    text = """
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers: [{name: web, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
"""
    (workload,) = read_objects([("web.yaml", text)]).workloads
    assert (workload.name, workload.replicas, workload.surge) == ("web", 1, 1)


def test_recreate_strategy_has_no_surge():
    text = """
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  strategy: {type: Recreate}
  template:
    spec:
      containers: [{name: web, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
"""
    (workload,) = read_objects([("web.yaml", text)]).workloads
    assert workload.peak_pods == 4


def test_sidecars_run_next_to_the_app_and_later_init_containers():
    # Sidecar 50m starts first; the init container (300m) runs beside it: 350m peak.
    # Then the app (200m) runs with the sidecar: 250m. The pod reserves 350m.
    spec = {
        "initContainers": [
            {"name": "mesh", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}},
            {"name": "setup", "resources": {"requests": {"cpu": "300m", "memory": "16Mi"}}},
        ],
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}}}],
        "overhead": {"cpu": "10m", "memory": "8Mi"},
    }
    assert pod_requests(spec, "pod") == (350 + 10, 132 + 8)


def test_daemonsets_and_lists_in_manifests():
    text = """
kind: List
items:
  - kind: DaemonSet
    metadata: {name: fluent-bit, namespace: logging}
    spec:
      template:
        spec:
          nodeSelector: {kubernetes.io/os: linux}
          containers: [{name: fb, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
"""
    contents = read_objects([("logging.yaml", text)])
    assert contents.workloads == ()
    (daemon_set,) = contents.daemon_sets
    assert (daemon_set.name, daemon_set.cpu_millicores, daemon_set.memory_mib) == ("logging/fluent-bit", 100, 128)


def test_a_container_without_requests_is_planned_with_zero_requests():
    # Kubernetes schedules a BestEffort pod with nothing but its pod slot.
    text = """
kind: Deployment
metadata: {name: bare}
spec:
  template:
    spec:
      containers: [{name: app}]
"""
    (workload,) = read_objects([("bare.yaml", text)]).workloads
    assert (workload.cpu_millicores, workload.memory_mib, workload.unrequested) == (0, 0, ("cpu", "memory"))
    assert workload.requests.pods == 1


def test_an_hpa_for_a_missing_deployment_is_refused():
    text = """
kind: HorizontalPodAutoscaler
metadata: {name: ghost}
spec: {scaleTargetRef: {kind: Deployment, name: ghost}, maxReplicas: 3}
"""
    with pytest.raises(SizingInputError, match="scales Deployment default/ghost, which is not in the input"):
        read_objects([("hpa.yaml", text)])


@pytest.mark.parametrize(
    "text, message",
    [
        ("kind: Deployment\n  bad: [indent", "YAML syntax error at line 2"),
        ("- just\n- a list\n", "expected a Kubernetes object"),
        ("kind: Deployment\nmetadata: {}\n", "metadata.name"),
        (
            "kind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {containers: []}}}\n",
            "at least one container",
        ),
        (
            "kind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {containers: "
            "[{name: a, resources: {requests: {cpu: lots}}}]}}}\n",
            "requests.cpu must be a Kubernetes cpu quantity",
        ),
    ],
)
def test_malformed_manifests_are_refused_with_the_place(text, message):
    with pytest.raises(SizingInputError, match=message) as error:
        read_objects([("bad.yaml", text)])
    assert "bad.yaml" in str(error.value)


def test_the_projects_test_app_manifests_give_twenty_pods_at_peak():
    directory = PROJECT / "manifests" / "test-app"
    if not directory.is_dir():
        pytest.skip("manifests/test-app is not in this checkout")
    contents = read_object_files(sorted(directory.glob("*.yaml")))
    (workload,) = contents.workloads
    # go-httpbin requests 100m / 64Mi; HPA maxReplicas 10; maxSurge 100 %.
    assert (workload.cpu_millicores, workload.memory_mib, workload.peak_pods) == (100, 64, 20)
