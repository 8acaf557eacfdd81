"""`make plan`: the files exist and parse, and say what the mocks recorded."""

import json
import subprocess
import sys

import pytest
import yaml

from offline import run_program
from offline.plan import Presenter, iam_documents, kubernetes_objects, write_plan
from offline.program import PROJECT_DIR


@pytest.fixture(scope="module")
def recording():
    return run_program("dev")


@pytest.fixture(scope="module")
def plan_dir(recording, tmp_path_factory):
    directory = tmp_path_factory.mktemp("plan") / "dev"
    write_plan(recording, directory, capacity_report=lambda: "capacity report\n")
    return directory


def test_resource_tree_lists_every_resource_under_its_parent(recording, plan_dir):
    text = (plan_dir / "resources.txt").read_text()
    assert f"{len(recording.resources)} resources" in text
    for resource in recording.resources:
        assert f"{resource.type}  {resource.name}" in text
    lines = text.splitlines()
    parent_line = next(i for i, line in enumerate(lines) if line.strip() == "eks-autoscaling:cluster:Cluster  cluster")
    depth = len(lines[parent_line]) - len(lines[parent_line].lstrip())
    # The cluster sits under the stack's EksAutoscaling component, and its own children under it.
    assert depth > 0
    assert lines[parent_line + 1].startswith(" " * (depth + 4))


def test_manifests_equal_what_the_mocks_recorded(recording, plan_dir):
    objects = kubernetes_objects(recording, Presenter(recording.invented))
    assert objects, "the stack registers Kubernetes objects"
    files = sorted((plan_dir / "manifests").glob("*.yaml"))
    assert len(files) == len(objects)
    parsed = [yaml.safe_load(path.read_text()) for path in files]
    for resource, document in objects:
        assert document in parsed
        assert document["kind"] == resource.type.rsplit(":", 1)[-1]


def test_helm_releases_name_chart_version_repository_and_values(recording, plan_dir):
    releases = recording.of_type("kubernetes:helm.sh/v3:Release")
    files = {path.stem: yaml.safe_load(path.read_text()) for path in (plan_dir / "manifests" / "helm").glob("*.yaml")}
    assert set(files) == {release.input("name") for release in releases}
    karpenter = files["karpenter"]
    assert karpenter["chart"] == "oci://public.ecr.aws/karpenter/karpenter"
    assert karpenter["version"] == "1.14.1"
    assert karpenter["values"]["settings"]["clusterName"] == "karpenter-test"
    assert files["aws-load-balancer-controller"]["repository"] == "https://aws.github.io/eks-charts"


def test_iam_documents_parse_and_cover_every_role_and_policy(recording, plan_dir):
    documents = iam_documents(recording)
    roles = recording.of_type("aws:iam/role:Role")
    policies = recording.of_type("aws:iam/policy:Policy")
    assert len([key for key in documents if key.startswith("roles/")]) == len(roles)
    assert len([key for key in documents if key.startswith("policies/")]) == len(policies)
    for relative in documents:
        document = json.loads((plan_dir / "iam" / relative).read_text())
        assert document["Statement"]


def test_invented_values_are_shown_as_placeholders(recording, plan_dir):
    trust = json.loads((plan_dir / "iam" / "roles" / "identities-karpenter-role.trust.json").read_text())
    assert trust["Statement"][0]["Principal"]["Federated"] == "<oidcProviderArn of cluster-eks>"
    everything = "".join(path.read_text() for path in plan_dir.rglob("*") if path.is_file())
    assert "123456789012" not in everything
    for invented in recording.invented:
        assert invented not in everything, invented
    outputs = json.loads((plan_dir / "outputs.json").read_text())
    assert outputs["vpcId"] == "<vpcId of network-vpc>"
    assert outputs["clusterName"] == "karpenter-test"


def test_graph_is_valid_dot_with_the_teardown_order(recording, plan_dir):
    text = (plan_dir / "graph.dot").read_text()
    assert text.startswith("digraph plan {") and text.rstrip().endswith("}")
    assert text.count(" [label=") == len(recording.resources)
    order = recording.deletion_order()
    first, last = order[0], order[-1]
    assert f'"{first.urn}" [label="[1] {first.name}' in text
    assert f'[label="[{len(order)}] {last.name}' in text
    pydot = pytest.importorskip("pydot", reason="pydot parses the graph when installed")
    assert pydot.graph_from_dot_data(text)


def test_capacity_report_is_written(plan_dir):
    assert (plan_dir / "capacity.txt").read_text() == "capacity report\n"


def test_the_command_writes_where_it_says(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "dev", "--output", str(tmp_path / "out")],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"to {tmp_path / 'out'}" in result.stdout
    assert (tmp_path / "out" / "resources.txt").exists()
    assert (tmp_path / "out" / "capacity.txt").read_text().strip()


def test_unknown_stack(tmp_path):
    result = subprocess.run([sys.executable, "-m", "offline", "plan", "--stack", "nope"], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "no stack file Pulumi.nope.yaml" in result.stderr
