"""The workload description file: every field read, every mistake refused with its place."""

import textwrap

import pytest

from sizing.errors import SizingInputError
from sizing.kube.resources import Resources
from sizing.kube.workloads import DEFAULT_DAEMON_SETS
from sizing.planning.description import plan_input_from_document, read_description
from sizing.planning.plan_types import GETTING_STARTED_REQUIREMENTS

FULL = """
region: ap-northeast-1
zones: [ap-northeast-1a, ap-northeast-1c]
headroomPercent: 20
maxPodsPerNode: 30
priceOverrides: {m5.large: 0.124}
solverWorkLimit: 500
nodePool:
  name: test-app
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
  kubelet:
    maxPods: 20
    kubeReserved: {cpu: 100m, memory: 512Mi}
    systemReserved: {memory: 100Mi}
    evictionHard: {memory.available: 200Mi}
  limits: {cpu: 1000, memory: 1000Gi}
workloads:
  - name: api
    requests: {cpu: 250m, memory: 0.5Gi}
    maxReplicas: 8
    maxSurge: 100%
    nodeSelector: {kubernetes.io/arch: amd64}
daemonSets:
  - name: fluent-bit
    requests: {cpu: 50m, memory: 64Mi}
existingNodes:
  - name: ip-10-0-1-10
    instanceType: m5.large
    requested: {cpu: 500m, memory: 1Gi, pods: 6}
    zone: ap-northeast-1a
    capacityReported: false
"""


def test_every_field_of_a_description_is_read():
    plan_input = plan_input_from_document(__import__("yaml").safe_load(FULL))
    assert plan_input.region == "ap-northeast-1"
    assert plan_input.zones == ("ap-northeast-1a", "ap-northeast-1c")
    assert (plan_input.headroom_percent, plan_input.max_pods_per_node) == (20, 30)
    assert dict(plan_input.price_overrides) == {"m5.large": 0.124}
    assert plan_input.solver_work_limit == 500
    pool = plan_input.node_pool
    assert pool.name == "test-app" and dict(pool.limits) == {"cpu": 1000, "memory": "1000Gi"}
    assert pool.kubelet.max_pods == 20
    assert (pool.kubelet.kube_reserved.cpu, pool.kubelet.kube_reserved.memory) == (100, 512)
    assert (pool.kubelet.system_reserved.cpu, pool.kubelet.system_reserved.memory) == (None, 100)
    assert pool.kubelet.eviction_hard_memory_mib == 200
    (api,) = plan_input.workloads
    assert (api.name, api.cpu_millicores, api.memory_mib, api.peak_pods) == ("api", 250, 512, 16)
    assert [ds.name for ds in plan_input.daemon_sets] == [ds.name for ds in DEFAULT_DAEMON_SETS] + ["fluent-bit"]
    (node,) = plan_input.existing_nodes
    assert node.requested == Resources(500, 1024, 6)
    assert (node.zone, node.capacity_reported, node.in_node_pool) == ("ap-northeast-1a", False, True)


def test_manifests_are_read_relative_to_the_description(tmp_path):
    (tmp_path / "app.yaml").write_text(
        textwrap.dedent(
            """
            kind: Deployment
            metadata: {name: web}
            spec:
              replicas: 3
              template:
                spec:
                  containers: [{name: web, resources: {requests: {cpu: 200m, memory: 256Mi}}}]
            """
        )
    )
    (tmp_path / "plan.yaml").write_text("defaultDaemonSets: false\nmanifests: [app.yaml]\n")
    plan_input = read_description(tmp_path / "plan.yaml")
    (web,) = plan_input.workloads
    assert (web.name, web.peak_pods) == ("web", 4)
    assert plan_input.daemon_sets == ()


@pytest.mark.parametrize(
    "document, message",
    [
        ({"workloads": [], "colour": "blue"}, "the description: unknown field 'colour'"),
        ({"workloads": []}, "has no workloads"),
        (
            {
                "workloads": [
                    {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 2, "replicas": 3}
                ]
            },
            "workloads[0]: unknown field 'replicas'",
        ),
        (
            {"workloads": [{"name": "api", "requests": {"cpu": "-1", "memory": "1Gi"}, "maxReplicas": 2}]},
            "workload 'api' requests -1000m cpu",
        ),
        (
            {"workloads": [{"name": "api", "requests": {"cpu": "100m", "memory": "-1Mi"}, "maxReplicas": 2}]},
            "workload 'api' requests -1Mi memory",
        ),
        (
            {"workloads": [{"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 0}]},
            "workloads[0].maxReplicas must be an integer >= 1, got 0 (workload 'api')",
        ),
        (
            {
                "workloads": [
                    {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 2, "maxSurge": "lots"}
                ]
            },
            "maxSurge must be a pod count",
        ),
        ({"nodePool": {"requirements": [], "taints": []}, "workloads": []}, "nodePool: unknown field 'taints'"),
        ({"nodePool": {"kubelet": {"evictionHard": {"memory.available": "5%"}}}, "workloads": []}, "percentages"),
        ({"headroomPercent": "ten", "workloads": []}, "headroomPercent must be a number"),
        ({"workloads": "api"}, "workloads must be a list"),
        ({"existingNodes": [{"name": "n1"}], "workloads": []}, "existingNodes[0]: missing field 'instanceType'"),
        ("just text", "the description must be an object"),
        (
            {"workloads": [{"name": "api", "requests": {"cpu": "lots", "memory": "1Gi"}, "maxReplicas": 2}]},
            "workloads[0].requests.cpu must be a Kubernetes cpu quantity such as 100m, 0.5 or 2, got 'lots' (workload 'api')",
        ),
        (
            {"workloads": [], "priceOverrides": {"m5.large": "cheap"}},
            "priceOverrides['m5.large'] must be a number, got 'cheap'",
        ),
        (
            {"workloads": [], "nodePool": {"kubelet": {"kubeReserved": {"gpu": 1}}}},
            "nodePool.kubelet.kubeReserved: unknown field 'gpu'; allowed fields are ['cpu', 'memory', 'ephemeral-storage']",
        ),
        (
            {"workloads": [], "existingNodes": [{"name": "n1", "instanceType": "m5.large", "requested": {"pods": -1}}]},
            "existingNodes[0].requested.pods must be an integer >= 0, got -1 (existing node 'n1')",
        ),
        ({"workloads": [], "maxPodsPerNode": "30"}, "maxPodsPerNode must be an integer, got '30'"),
    ],
)
def test_bad_descriptions_are_refused_with_one_clear_message(document, message):
    with pytest.raises(SizingInputError) as error:
        plan_input_from_document(document)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


API = {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 2}


def test_list_positions_count_from_zero_in_every_list():
    web = {**API, "name": "web", "replicas": 3}
    with pytest.raises(SizingInputError) as error:
        plan_input_from_document({"workloads": [API, web], "daemonSets": [{"name": "a"}, {"name": "b", "limits": {}}]})
    assert str(error.value) == (
        "workloads[1]: unknown field 'replicas'; allowed fields are "
        "['name', 'requests', 'maxReplicas', 'maxSurge', 'nodeSelector'] (workload 'web'); "
        "daemonSets[1]: unknown field 'limits'; allowed fields are ['name', 'requests', 'nodeSelector'] (daemonSet 'b')"
    )


def test_every_problem_is_named_on_one_line():
    with pytest.raises(SizingInputError) as error:
        plan_input_from_document({"workloads": [{"requests": {"cpu": "lots"}}], "region": ""})
    assert str(error.value) == (
        "region must be a non-empty string, got ''; workloads[0]: missing field 'name'; "
        "workloads[0].requests.cpu must be a Kubernetes cpu quantity such as 100m, 0.5 or 2, got 'lots'; "
        "workloads[0]: missing field 'maxReplicas'"
    )


def test_yaml_scalars_in_a_node_selector_mean_their_text():
    plan_input = plan_input_from_document(
        {"workloads": [{**API, "nodeSelector": {"kubernetes.io/arch": "amd64", "gpu": True}}]}
    )
    assert dict(plan_input.workloads[0].node_selector) == {"kubernetes.io/arch": "amd64", "gpu": "True"}


def test_without_requirements_the_getting_started_node_pool_is_planned():
    assert plan_input_from_document({"workloads": [API]}).node_pool.requirements == GETTING_STARTED_REQUIREMENTS
    assert plan_input_from_document({"workloads": [API], "nodePool": {"requirements": []}}).node_pool.requirements == ()


def test_malformed_yaml_and_missing_files_are_refused(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("workloads: [\n")
    with pytest.raises(SizingInputError, match="broken.yaml.*YAML syntax error at line 2"):
        read_description(broken)
    with pytest.raises(SizingInputError, match="cannot be read"):
        read_description(tmp_path / "missing.yaml")


def test_the_documented_example_is_a_valid_description():
    from pathlib import Path

    import yaml

    doc = Path(__file__).resolve().parents[2] / "docs" / "sizing-input.md"
    if not doc.is_file():
        pytest.skip("docs/sizing-input.md is not in this checkout")
    example = doc.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    document = yaml.safe_load(example)
    document.pop("manifests")  # the example's app.yaml does not exist
    plan_input = plan_input_from_document(document)
    assert [w.name for w in plan_input.workloads] == ["test-app"]
    assert plan_input.workloads[0].peak_pods == 20
    assert plan_input.existing_nodes[0].requested == Resources(500, 1024, 6)
