"""Pods without a cpu or memory request: planned with 0 of it, as Kubernetes schedules them, and named
in the report's warning, the same in the text and in `--json`."""

import json
import textwrap
from dataclasses import replace

import pytest

from sizing import cli
from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.kube.manifests import pod_requests
from sizing.kube.objects import read_objects
from sizing.kube.workloads import Workload
from sizing.planning.description import plan_input_from_document
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import MAX_WARNING_NAMES, plan_data, render_report
from tests.sizing.node_pools import node_pool_yaml

M5_LARGE = InstanceType("m5.large", "m", "m5", 5, "large", "amd64", "nitro", 2, 8192, 3, 10, 0, {"us-east-1": 0.096})
ONLY_LARGE = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},)

# The Kubernetes HPA walkthrough's php-apache: one container asking for cpu only.
PHP_APACHE = node_pool_yaml(ONLY_LARGE[0]) + textwrap.dedent("""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: php-apache}
    spec:
      selector: {matchLabels: {run: php-apache}}
      template:
        metadata: {labels: {run: php-apache}}
        spec:
          containers:
            - name: php-apache
              image: registry.k8s.io/hpa-example
              ports: [{containerPort: 80}]
              resources:
                limits: {cpu: 500m}
                requests: {cpu: 200m}
    ---
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: php-apache}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: php-apache}
      minReplicas: 1
      maxReplicas: 10
      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
""")


def _plan(workloads, **options):
    options.setdefault("solver_work_limit", None)
    return plan_capacity(
        PlanInput(
            workloads=tuple(workloads), node_pool=NodePoolSpec(requirements=ONLY_LARGE), catalog=(M5_LARGE,), **options
        )
    )


def _warning_lines(text):
    return [line for line in text.splitlines() if line.startswith("Warning: ")]


def test_the_hpa_walkthrough_deployment_is_planned_with_no_memory_and_named_in_the_warning():
    plan_input = plan_input_from_objects(read_objects([("php-apache.yaml", PHP_APACHE)]))
    (workload,) = plan_input.workloads
    assert (workload.cpu_millicores, workload.memory_mib, workload.peak_pods) == (200, 0, 13)
    plan = plan_capacity(replace(plan_input, catalog=(M5_LARGE,), solver_work_limit=None))
    # 1930m allocatable - 125m of DaemonSets = 1805m: 9 pods of 200m per m5.large, so 13 pods need 2.
    assert not plan.fleet.pending and plan.fleet.placed_count == 13 and len(plan.fleet.nodes) == 2
    assert plan.unrequested == {"memory": ("php-apache",)}
    assert _warning_lines(render_report(plan)) == [
        "Warning: no memory request: the plan cannot size memory for them: php-apache"
    ]
    assert plan_data(plan)["warnings"] == [
        {
            "resource": "memory",
            "message": "no memory request: the plan cannot size memory for them",
            "workloads": ["php-apache"],
        }
    ]


def test_the_cli_prints_the_same_warning_in_text_and_json(tmp_path, capsys):
    path = tmp_path / "php-apache.yaml"
    path.write_text(PHP_APACHE)
    assert cli.main(["plan", str(path)]) == 0
    text = capsys.readouterr().out
    assert cli.main(["plan", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert _warning_lines(text) == [f"Warning: {w['message']}: {', '.join(w['workloads'])}" for w in data["warnings"]]
    assert data["workloads"][0]["requests"] == {"cpu": 200, "memory": 0}


@pytest.mark.parametrize("count", [1, MAX_WARNING_NAMES, MAX_WARNING_NAMES + 7])
def test_text_and_json_name_the_same_workloads(count):
    workloads = [Workload(f"w{i:02d}", 0, 0, replicas=1, max_surge=0) for i in range(count)]
    workloads.append(Workload("sized", 100, 64, replicas=1, max_surge=0))
    plan = _plan(workloads)
    data = json.loads(json.dumps(plan_data(plan)))
    lines = _warning_lines(render_report(plan))
    assert [w["resource"] for w in data["warnings"]] == ["cpu", "memory"] and len(lines) == 2
    for warning, line in zip(data["warnings"], lines, strict=True):
        names = [f"w{i:02d}" for i in range(count)]
        assert warning["workloads"] == names
        listed = line.removeprefix(f"Warning: {warning['message']}: ")
        shown, _, rest = listed.partition(", … and ")
        assert shown.split(", ") == names[:MAX_WARNING_NAMES]
        hidden = count - MAX_WARNING_NAMES
        assert rest == (f"{hidden} more (all of them are in --json)" if hidden > 0 else "")


def test_no_warning_when_every_workload_requests_both():
    plan = _plan([Workload("sized", 100, 64, replicas=2)])
    assert plan.unrequested == {} and plan_data(plan)["warnings"] == []
    assert not _warning_lines(render_report(plan))


def test_pods_without_requests_still_take_a_pod_slot():
    # An m5.large holds 29 pods; the three EKS DaemonSets take 3 slots, which leaves 26.
    plan = _plan([Workload("besteffort", 0, 0, replicas=30, max_surge=0)])
    assert sorted(node.pod_count for node in plan.fleet.nodes) == [4, 26]
    assert plan.unrequested == {"cpu": ("besteffort",), "memory": ("besteffort",)}


def test_a_description_may_leave_out_cpu_or_memory():
    plan_input = plan_input_from_document(
        {
            "workloads": [
                {"name": "php", "requests": {"cpu": "200m"}, "maxReplicas": 3},
                {"name": "cache", "requests": {"memory": "1Gi"}, "maxReplicas": 2},
                {"name": "zero", "requests": {"cpu": "100m", "memory": 0}, "maxReplicas": 1},
            ]
        }
    )
    php, cache, zero = plan_input.workloads
    assert (php.cpu_millicores, php.memory_mib, cache.cpu_millicores, cache.memory_mib) == (200, 0, 0, 1024)
    assert (php.unrequested, cache.unrequested, zero.unrequested) == (("memory",), ("cpu",), ("memory",))


def test_a_description_still_needs_requests_and_refuses_negative_ones():
    with pytest.raises(SizingInputError, match="workloads\\[0\\]: missing field 'requests'"):
        plan_input_from_document({"workloads": [{"name": "api", "maxReplicas": 2}]})
    with pytest.raises(SizingInputError, match="workload 'api' requests -1Mi memory"):
        plan_input_from_document({"workloads": [{"name": "api", "requests": {"memory": "-1Mi"}, "maxReplicas": 2}]})


@pytest.mark.parametrize(
    "spec, expected",
    [
        # A limit without a request stands in for it (API-server defaulting): nothing is missing.
        ({"containers": [{"name": "a", "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}]}, (500, 128)),
        # The app asks no memory, an init container does: the pod reserves the larger, 64Mi.
        (
            {
                "initContainers": [{"name": "init", "resources": {"requests": {"memory": "64Mi"}}}],
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "200m"}}}],
            },
            (200, 64),
        ),
        # A sidecar's memory runs beside the app for the pod's whole life.
        (
            {
                "initContainers": [
                    {"name": "mesh", "restartPolicy": "Always", "resources": {"requests": {"memory": "32Mi"}}}
                ],
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "200m"}}}],
            },
            (200, 32),
        ),
        # Only cpu anywhere: memory stays 0.
        ({"containers": [{"name": "a", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "1"}}}]}, (200, 0)),
    ],
    ids=["limits-stand-in", "init-container", "sidecar", "cpu-only"],
)
def test_what_counts_as_a_request_follows_kubernetes(spec, expected):
    assert pod_requests(spec, "pod") == expected


POD_LEVEL = textwrap.dedent("""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: batch}
    spec:
      replicas: 2
      template:
        metadata: {labels: {app: batch}}
        spec:
          resources: {requests: {cpu: 1500m}, limits: {cpu: "2", memory: 3Gi}}
          overhead: {cpu: 10m, memory: 8Mi}
          containers: [{name: app, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
""")


def test_pod_level_limits_stand_in_for_missing_pod_level_requests_in_both_doors(tmp_path):
    """A pod-level request wins over the containers' sum; a resource with only a pod-level limit is
    requested at that limit (the API server's defaulting of pod-level requests); the pod overhead comes
    on top of either. The Kubernetes objects door and a description's `manifests` read it alike."""
    (from_objects,) = read_objects([("batch.yaml", POD_LEVEL)]).workloads
    manifest = tmp_path / "batch.yaml"
    manifest.write_text(POD_LEVEL)
    (from_description,) = plan_input_from_document({"manifests": [str(manifest)]}).workloads
    for workload in (from_objects, from_description):
        assert (workload.cpu_millicores, workload.memory_mib) == (1500 + 10, 3072 + 8)
        assert workload.unrequested == ()


def test_an_extended_resource_at_pod_level_is_named_as_unmodelled():
    text = POD_LEVEL.replace('limits: {cpu: "2", memory: 3Gi}', 'limits: {cpu: "2", hugepages-2Mi: 1Gi}')
    (unmodelled,) = read_objects([("batch.yaml", text)]).unmodelled
    assert (unmodelled.what, unmodelled.path) == (
        "Deployment default/batch",
        "spec.template.spec.resources.limits.hugepages-2Mi",
    )


@pytest.mark.parametrize(
    "spec, field",
    [
        (
            {"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]},
            "containers[0].resources.requests.cpu",
        ),
        (
            {"containers": [{"name": "a", "resources": {"limits": {"memory": "-1Mi"}}}]},
            "containers[0].resources.requests.memory",
        ),
        ({"containers": [{"name": "a"}], "resources": {"limits": {"cpu": "-2"}}}, "pod.resources.limits.cpu"),
        ({"containers": [{"name": "a"}], "overhead": {"memory": "-8Mi"}}, "pod.overhead.memory"),
    ],
)
def test_a_negative_quantity_is_refused_naming_the_field(spec, field):
    # The API server refuses a negative request, limit or overhead; an empty one is 0, not a negative one.
    with pytest.raises(SizingInputError, match="must be 0 or more") as error:
        pod_requests(spec, "pod")
    assert field in str(error.value)


def test_the_stack_output_carries_the_same_warnings():
    from stackplan.capacity import plan_summary

    plan = _plan([Workload("cache", 0, 512, replicas=2), Workload("web", 100, 64, replicas=2)])
    assert (
        plan_summary(plan)["warnings"]
        == plan_data(plan)["warnings"]
        == [{"resource": "cpu", "message": "no cpu request: the plan cannot size cpu for them", "workloads": ["cache"]}]
    )
