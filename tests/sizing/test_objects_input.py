"""`python -m sizing plan` on Kubernetes objects: NodePools, EC2NodeClass, workloads, HPAs,
`kind: List`, stdin, and unmodelled fields that stop the plan unless accepted."""

import io
import json
import textwrap
from pathlib import Path

import pytest

from sizing import cli
from sizing.errors import SizingInputError
from sizing.kube.objects import read_objects
from sizing.planning.objects import plan_input_from_objects

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "cluster-objects.yaml"
PVC_STATEFULSET = textwrap.dedent("""
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db, namespace: data}
    spec:
      replicas: 3
      template:
        metadata: {labels: {app: db}}
        spec:
          containers: [{name: db, image: pg, resources: {requests: {cpu: 250m, memory: 1Gi, nvidia.com/gpu: 1}}}]
      volumeClaimTemplates: [{metadata: {name: data}}]
""")


def _objects(text=None):
    return read_objects([("example", text if text is not None else EXAMPLE.read_text())])


def test_objects_become_workloads_pools_and_node_class_settings():
    plan_input = plan_input_from_objects(_objects())
    web, etl = plan_input.workloads
    assert (web.name, web.replicas, web.min_replicas, web.peak_pods) == ("shop/web", 12, 3, 12)
    assert web.scale_up_policies == ({"type": "Pods", "value": 4, "periodSeconds": 15},)
    # Pod-level requests replace the containers' sum; a Job runs `parallelism` pods.
    assert (etl.kind, etl.cpu_millicores, etl.memory_mib, etl.peak_pods) == ("Job", 2000, 8192, 4)
    assert plan_input.node_pool.name == "general" and plan_input.node_pool.ami_family == "AL2023"
    assert plan_input.node_pool.kubelet.max_pods == 58
    assert [p.name for p in plan_input.other_node_pools] == ["data"]


def test_the_cli_plans_objects_with_anti_affinity_and_a_tainted_template_label_pool(capsys):
    status = cli.main(["plan", str(EXAMPLE), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert data["fleet"]["nodeCount"] >= 12 + 1  # one node per web replica, etl on the data pool


def test_unmodelled_fields_stop_the_plan_naming_object_and_field():
    with pytest.raises(SizingInputError) as error:
        plan_input_from_objects(_objects(EXAMPLE.read_text() + "---\n" + PVC_STATEFULSET))
    message = str(error.value)
    assert "StatefulSet data/db: spec.volumeClaimTemplates" in message
    assert "nvidia.com/gpu" in message and "--accept-unmodelled" in message


def test_accepted_unmodelled_fields_are_listed_as_ignored():
    plan_input = plan_input_from_objects(_objects(EXAMPLE.read_text() + "---\n" + PVC_STATEFULSET), True)
    assert any("volumeClaimTemplates" in item for item in plan_input.ignored)


def test_a_kubectl_list_on_stdin_is_read(monkeypatch, capsys):
    import yaml

    items = list(yaml.safe_load_all(EXAMPLE.read_text()))
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert cli.main(["plan", "-", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pods"]["withSurge"] == 16


def _plan_with_behavior(behavior):
    from sizing.planning.planner import plan_capacity

    example = EXAMPLE.read_text()
    policies = "      policies: [{type: Pods, value: 4, periodSeconds: 15}]\n"
    assert example.count(policies) == 1
    text = example.replace(policies, textwrap.indent(behavior, "      "))
    return plan_capacity(plan_input_from_objects(_objects(text)))


def test_the_hpa_ramp_follows_the_hpa_objects_scale_up_behavior():
    # The example's HPA: 3 -> 12 by at most 4 pods per 15 s: 3 -> 7 -> 11 -> 12, three steps.
    plan = _plan_with_behavior("policies: [{type: Pods, value: 4, periodSeconds: 15}]\n")
    assert "in 3 step(s) of 15 s" in plan.scenarios["hpa-ramp"].description
    # The last step comes 45 s after the load; the Job, which no HPA scales, has no step after 0 s.
    assert plan.ramp_seconds == 45 and plan.ramps["data/etl"] == ((0, 4),)
    # One pod per 15 s: nine steps; a stabilization window of 60 s delays the first step, not their number.
    slow = _plan_with_behavior(
        "policies: [{type: Pods, value: 1, periodSeconds: 15}]\nstabilizationWindowSeconds: 60\n"
    )
    assert "in 9 step(s) of 15 s" in slow.scenarios["hpa-ramp"].description
    assert slow.scenarios["hpa-ramp"].batches >= 9


@pytest.mark.parametrize(
    "behavior, message",
    [
        ("policies: [{type: Cores, value: 1, periodSeconds: 15}]\n", r"policies\[0\].type must be one of"),
        ("policies: [{type: Pods, value: 1}]\n", r"policies\[0\] lacks periodSeconds"),
        ("selectPolicy: Fastest\n", "selectPolicy must be one of"),
    ],
)
def test_a_bad_scale_up_behavior_names_the_workload(behavior, message):
    with pytest.raises(SizingInputError, match=rf"workload 'shop/web': HPA .*{message}"):
        _plan_with_behavior(behavior)


def test_scenarios_count_the_planned_pool_and_show_the_other_pools_apart():
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import plan_data, render_report

    plan = plan_capacity(plan_input_from_objects(_objects()))
    peak = plan.scenarios["peak"]
    # The web tier (hostname anti-affinity, 12 replicas) on "general"; the Job on the tainted "data" pool.
    # The row counts every node of the scenario, as the fleet does; the limits count general's 12.
    assert peak.usage.pods == 12
    assert "16 pods: 13 nodes (12 × m5.large; NodePool data: 1 × r5.4xlarge): 24 cpu" in render_report(plan)
    data = plan_data(plan)["scenarios"]["peak"]
    assert data["nodePools"] == {"general": {"m5.large": 12}, "data": {"r5.4xlarge": 1}}
    assert data["nodeCount"] == 13 and data["nodesByZone"] == {
        "us-east-1a": 4,
        "us-east-1b": 4,
        "us-east-1c": 4,
        "any": 1,
    }
    # Drift replaces the largest node of the planned pool, not of another pool.
    disruption = plan.scenarios["disruption"]
    (replacement,) = [node for node in disruption.result.nodes if node.name.startswith("replacement-of-")]
    assert replacement.node_pool == "general" and disruption.usage.pods == 13


def _api_list(kind, items):
    # What the API returns for a list (`kubectl get --raw /apis/apps/v1/deployments`): the items
    # carry neither kind nor apiVersion.
    return json.dumps({"kind": kind, "apiVersion": "apps/v1", "metadata": {"resourceVersion": "1"}, "items": items})


def _api_deployment(name, replicas=2):
    return {
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}]
                },
            },
        },
    }


def test_a_list_of_the_api_is_read_as_its_items_of_its_kind():
    objects = read_objects(
        [("deployments.json", _api_list("DeploymentList", [_api_deployment("web"), _api_deployment("api", 3)]))]
    )
    assert [(w.name, w.replicas, w.cpu_millicores) for w in objects.workloads] == [
        ("shop/web", 2, 250),
        ("shop/api", 3, 250),
    ]
    # The items of `kind: List` keep their own kinds; an item of an API list that names one keeps it.
    mixed = _api_list("DeploymentList", [{"kind": "StatefulSet", **_api_deployment("db")}])
    assert [w.kind for w in read_objects([("x", mixed)]).workloads] == ["StatefulSet"]


def test_workloads_of_an_api_list_count_against_the_ceiling_while_read():
    from sizing.kube.workloads import MAX_WORKLOADS

    text = _api_list("DeploymentList", [_api_deployment(f"w{i}", 1) for i in range(MAX_WORKLOADS + 1)])
    with pytest.raises(
        SizingInputError, match=rf"deployments.json document 1.items\[{MAX_WORKLOADS}\]: 1,001 workloads"
    ):
        read_objects([("deployments.json", text)])
