"""`make plan`: the files exist and parse, and say what the mocks recorded."""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from offline import run_program
from offline.plan import (
    MARKER,
    PlanDirectoryError,
    Presenter,
    iam_documents,
    kubernetes_objects,
    remove_stale_scratch,
    resource_label,
    write_plan,
)
from offline.program import PROJECT_DIR


@pytest.fixture(scope="module")
def recording():
    return run_program("dev")


@pytest.fixture(scope="module")
def plan_dir(recording, tmp_path_factory):
    directory = tmp_path_factory.mktemp("plan") / "dev"
    write_plan(recording, directory, capacity_report=lambda: "capacity report\n", capacity_html=lambda: "<p>page</p>\n")
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


def test_manifests_start_with_api_version_kind_metadata_spec(plan_dir):
    for path in (plan_dir / "manifests").glob("*.yaml"):
        top_level = [
            line.split(":")[0]
            for line in path.read_text().splitlines()
            if line and not line[0].isspace() and not line.startswith("-")
        ]
        expected = [key for key in ("apiVersion", "kind", "metadata", "spec") if key in top_level]
        assert top_level[: len(expected)] == expected, path.name
        assert top_level[len(expected) :] == sorted(top_level[len(expected) :]), path.name


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
    assert f'"{resource_label(first.urn)}" [label="[1] {first.name}' in text
    assert f'[label="[{len(order)}] {last.name}' in text
    pydot = pytest.importorskip("pydot", reason="pydot parses the graph when installed")
    assert pydot.graph_from_dot_data(text)


def test_capacity_report_is_written(plan_dir):
    assert (plan_dir / "capacity.txt").read_text() == "capacity report\n"
    assert (plan_dir / "capacity.html").read_text() == "<p>page</p>\n"


def test_the_command_writes_where_it_says(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "dev", "--output", str(tmp_path / "out")],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"to {tmp_path / 'out'}" in result.stdout
    # The capacity plan as a page beside its text: the same plan, the same NodePool limits.
    page = (tmp_path / "out" / "capacity.html").read_text()
    text = (tmp_path / "out" / "capacity.txt").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="chart-fleet"' in page
    limits = re.search(r'cpu: "?(\d+)"?', text)
    assert limits and f'data-op="value">{limits.group(1)}</span>' in page
    assert (tmp_path / "out" / "resources.txt").exists()
    assert (tmp_path / "out" / "capacity.txt").read_text().strip()


def test_the_prod_plan_names_what_its_operator_must_set(tmp_path, capsys):
    from offline.__main__ import main

    assert main(["plan", "--stack", "prod", "--output", str(tmp_path / "prod")]) == 0
    error = capsys.readouterr().err
    assert "note: Pulumi.prod.yaml leaves <the operator's address: cluster.publicAccessCidrs> to its operator" in error
    assert "`make up` refuses until it is set" in error


def test_unknown_stack(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "nope"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "no stack file Pulumi.nope.yaml" in result.stderr
    assert "stacks there: dev, prod" in result.stderr


@pytest.mark.parametrize(
    "stack, hint",
    [
        ("Pulumi.dev.yaml", "(give the stack's name, such as 'dev', not a path or file name)"),
        ("./Pulumi.prod.yaml", "(give the stack's name, such as 'prod', not a path or file name)"),
        ("dev ", "(a stack's name has no spaces)"),
    ],
)
def test_a_path_or_a_space_for_the_stack_lists_the_stacks(tmp_path, stack, hint):
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", stack, "--output", str(tmp_path / "plan")],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and hint in result.stderr and "stacks there: dev, prod" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "plan").exists()


# --- every resource's inputs, for review before `pulumi up` ---------------------------------------


def _resource_file(plan_dir, type_, name):
    (path,) = [
        p
        for p in (plan_dir / "resources").glob("*.yaml")
        if yaml.safe_load(p.read_text())["name"] == name and yaml.safe_load(p.read_text())["type"] == type_
    ]
    return yaml.safe_load(path.read_text())


def test_every_resource_has_a_file_with_its_inputs(recording, plan_dir):
    files = list((plan_dir / "resources").glob("*.yaml"))
    assert len(files) == len(recording.resources)
    documents = {(doc["type"], doc["name"]) for doc in (yaml.safe_load(path.read_text()) for path in files)}
    assert documents == {(resource.type, resource.name) for resource in recording.resources}


def test_a_reviewer_sees_what_matters_before_up(plan_dir):
    cluster = _resource_file(plan_dir, "eks:index:Cluster", "cluster-eks")["inputs"]
    assert cluster["publicAccessCidrs"] == ["0.0.0.0/0"]
    assert cluster["version"] == "1.35"
    assert cluster["endpointPrivateAccess"] is True
    nodes = _resource_file(plan_dir, "eks:index:ManagedNodeGroup", "cluster-system-nodes")
    assert nodes["inputs"]["instanceTypes"] == ["m5.large"]
    template = _resource_file(plan_dir, "aws:ec2/launchTemplate:LaunchTemplate", "cluster-system-nodes")["inputs"]
    assert template["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 20
    assert template["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert nodes["inputs"]["nodeRole"] == {"resource": "aws:iam/role:Role::cluster-system-node-role"}
    assert "eks:index:Cluster::cluster-eks" in nodes["dependsOn"]
    vpc = _resource_file(plan_dir, "awsx:ec2:Vpc", "network-vpc")["inputs"]
    assert vpc["cidrBlock"] == "10.0.0.0/16" and vpc["natGateways"] == {"strategy": "Single"}


def test_the_prod_plan_shows_its_kms_key_and_restricted_endpoint(tmp_path):
    recording = run_program("prod")
    write_plan(recording, tmp_path / "prod")
    cluster = _resource_file(tmp_path / "prod", "eks:index:Cluster", "cluster-eks")["inputs"]
    assert cluster["endpointPublicAccess"] is True and cluster["endpointPrivateAccess"] is True
    # The stack file leaves the addresses to its operator: the plan says so instead of a stand-in.
    assert cluster["publicAccessCidrs"] == ["<the operator's address: cluster.publicAccessCidrs>"]
    assert cluster["encryptionConfigKeyArn"] == "<arn of cluster-secrets>"
    key = _resource_file(tmp_path / "prod", "aws:kms/key:Key", "cluster-secrets")["inputs"]
    assert key["enableKeyRotation"] is True


def test_the_prod_plan_shows_what_up_and_destroy_rely_on(tmp_path):
    """The log group, the network policy agent, the webhook setting and the node
    class's edges to the node security group are there for a reviewer before `pulumi up`."""
    recording = run_program("prod")
    plan = tmp_path / "prod"
    write_plan(recording, plan)
    group = _resource_file(plan, "aws:cloudwatch/logGroup:LogGroup", "cluster-control-plane-logs")["inputs"]
    assert (group["name"], group["retentionInDays"]) == ("/aws/eks/autoscaling-prod/cluster", 365)
    assert (
        "aws:cloudwatch/logGroup:LogGroup::cluster-control-plane-logs"
        in _resource_file(plan, "eks:index:Cluster", "cluster-eks")["dependsOn"]
    )
    vpc_cni = _resource_file(plan, "aws:eks/addon:Addon", "cluster-vpc-cni")["inputs"]
    assert json.loads(vpc_cni["configurationValues"]) == {"enableNetworkPolicy": "true"}
    controller = _resource_file(plan, "kubernetes:helm.sh/v3:Release", "addons-aws-load-balancer-controller")["inputs"]
    assert controller["values"]["enableServiceMutatorWebhook"] is False
    node_class = _resource_file(
        plan, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "karpenter-node-class-ec2nodeclass"
    )
    assert "aws:ec2/securityGroup:SecurityGroup::cluster-node-sg" in node_class["dependsOn"]
    graph = (plan / "graph.dot").read_text()
    assert (
        '"kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::karpenter-node-class-ec2nodeclass" -> '
        '"aws:ec2/securityGroup:SecurityGroup::cluster-node-sg"'
    ) in graph


def test_secrets_are_masked(recording, plan_dir):
    outputs = json.loads((plan_dir / "outputs.json").read_text())
    assert "kubeconfig" in recording.secret_outputs
    assert outputs["kubeconfig"] == "[secret]"


def test_no_invented_certificate_authority(plan_dir):
    everything = "".join(path.read_text() for path in plan_dir.rglob("*") if path.is_file())
    assert "Q0E=" not in everything
    provider = _resource_file(plan_dir, "pulumi:providers:kubernetes", "cluster-kubernetes")
    (cluster,) = provider["inputs"]["kubeconfig"]["clusters"]
    assert cluster["cluster"]["certificate-authority-data"] == "<certificate-authority-data of cluster-eks>"


def test_floats_carry_no_binary_noise():
    show = Presenter({})
    assert show({"cost": 0.1 + 0.2, "price": 4.0680000000000005, "count": 2.0}) == {
        "cost": 0.3,
        "price": 4.068,
        "count": 2,
    }
    assert show([1.23456789]) == [1.23457]


def test_the_plan_has_no_float_noise(plan_dir):
    import re

    noisy = [
        (path.name, match)
        for path in plan_dir.rglob("*")
        if path.is_file() and path.suffix in (".json", ".yaml")
        for match in re.findall(r"\d+\.\d{7,}", path.read_text())
    ]
    assert noisy == []


def test_two_plans_are_identical(recording, plan_dir, tmp_path):
    again = run_program("dev")
    write_plan(
        again, tmp_path / "again", capacity_report=lambda: "capacity report\n", capacity_html=lambda: "<p>page</p>\n"
    )
    first = {path.relative_to(plan_dir): path.read_bytes() for path in plan_dir.rglob("*") if path.is_file()}
    second = {
        path.relative_to(tmp_path / "again"): path.read_bytes()
        for path in (tmp_path / "again").rglob("*")
        if path.is_file()
    }
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []


def test_the_program_warnings_are_written(recording, plan_dir):
    text = (plan_dir / "warnings.txt").read_text()
    assert recording.warnings and all(f"warning: {warning}\n" in text for warning in recording.warnings)


# --- the output folder ------------------------------------------------------------------------------


def test_a_folder_with_a_users_file_is_refused_untouched(recording, tmp_path):
    target = tmp_path / "x"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    with pytest.raises(PlanDirectoryError) as failure:
        write_plan(recording, target)
    assert f"{target} is not empty and has no {MARKER} file" in str(failure.value)
    assert [path.name for path in target.iterdir()] == ["keep.txt"]
    assert (target / "keep.txt").read_text() == "keep\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["x"], "no staging folder is left behind"


def test_the_command_refuses_a_users_folder(tmp_path):
    target = tmp_path / "x"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "dev", "--output", str(target)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert f"{target} is not empty and has no {MARKER} file" in result.stderr and "Traceback" not in result.stderr
    assert (target / "keep.txt").read_text() == "keep\n"


@pytest.mark.parametrize(
    "own_files",
    [
        {"manifests/my-app.yaml": "kind: Deployment\n"},
        {"outputs.json": "{}\n", "iam/role.json": "{}\n"},
        {"resources.txt": "my notes\n"},
    ],
    ids=["manifests", "outputs-and-iam", "resources-txt-of-its-own"],
)
def test_a_users_folder_named_like_a_plans_parts_is_refused_untouched(recording, tmp_path, own_files):
    target = tmp_path / "deploy"
    for name, text in own_files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text)
    with pytest.raises(PlanDirectoryError):
        write_plan(recording, target)
    for name, text in own_files.items():
        assert (target / name).read_text() == text


def test_a_plan_written_before_the_marker_is_replaced(recording, tmp_path):
    target = tmp_path / "plan"
    write_plan(recording, target)
    (target / MARKER).unlink()
    write_plan(recording, target)
    assert (target / MARKER).is_file()


def test_a_previous_plan_is_replaced_whole(recording, tmp_path):
    target = tmp_path / "plan"
    write_plan(recording, target)
    (target / "resources" / "stale--resource.yaml").write_text("left by an older plan\n")
    write_plan(recording, target)
    assert (target / MARKER).is_file()
    assert not (target / "resources" / "stale--resource.yaml").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plan"]


def test_an_empty_folder_is_used(recording, tmp_path):
    (tmp_path / "empty").mkdir()
    written = write_plan(recording, tmp_path / "empty")
    assert all(path.is_file() and tmp_path / "empty" in path.parents for path in written)


def test_a_failed_write_leaves_the_previous_plan(recording, tmp_path):
    target = tmp_path / "plan"
    write_plan(recording, target, capacity_report=lambda: "first\n")

    def broken_report():
        raise RuntimeError("the report failed")

    with pytest.raises(RuntimeError):
        write_plan(recording, target, capacity_report=broken_report)
    assert (target / "capacity.txt").read_text() == "first\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plan"]


@pytest.mark.parametrize("failing", ["mkdtemp", "swap"])
def test_a_read_only_output_is_one_message_and_leaves_nothing(recording, tmp_path, monkeypatch, failing):
    import errno
    import os
    import tempfile

    target = tmp_path / "plan"
    write_plan(recording, target, capacity_report=lambda: "first\n")
    real_mkdtemp, real_replace = tempfile.mkdtemp, os.replace

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    def refused_swap(source, destination):
        # The old plan moves aside, then the new one cannot take its place.
        if ".new-" in str(source):
            read_only()
        real_replace(source, destination)

    if failing == "mkdtemp":
        monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    else:
        monkeypatch.setattr(os, "replace", refused_swap)
    with pytest.raises(PlanDirectoryError) as failure:
        write_plan(recording, target)
    assert f"{target} cannot be written (Read-only file system); nothing was changed" in str(failure.value)
    monkeypatch.setattr(tempfile, "mkdtemp", real_mkdtemp)
    assert (target / "capacity.txt").read_text() == "first\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plan"]


def test_a_mount_point_is_refused_before_anything_is_written(recording, tmp_path, monkeypatch):
    import os

    target = tmp_path / "mnt"
    target.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda path: str(path) == str(target))
    with pytest.raises(PlanDirectoryError, match="is a mount point"):
        write_plan(recording, target)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mnt"] and list(target.iterdir()) == []


def test_the_command_names_a_read_only_output_without_a_traceback(tmp_path):
    # /proc/<pid> cannot hold new folders, for root too: the real error path, no mock. It is found
    # before the program is evaluated.
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "dev", "--output", "/proc/self/plan"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: /proc/self/plan cannot be written (")


# --- a symbolic link, and what stopped runs left ------------------------------------------------


def _previous_plan(folder):
    folder.mkdir(parents=True)
    (folder / MARKER).write_text("a plan\n")
    (folder / "resources.txt").write_text("TYPE  NAME\nthe previous plan\n")


def test_an_output_that_is_a_symbolic_link_is_written_through(recording, tmp_path):
    target = tmp_path / "elsewhere" / "dev"
    _previous_plan(target)
    link = tmp_path / "dev"
    link.symlink_to(target)
    written = write_plan(recording, link)
    assert link.is_symlink() and os.readlink(link) == str(target), "the link stays"
    assert (target / "resources.txt").read_text().startswith("TYPE  NAME\n") and "previous" not in (
        target / "resources.txt"
    ).read_text()
    assert all(path.is_file() and link in path.parents for path in written)
    assert sorted(path.name for path in target.parent.iterdir()) == ["dev"], "no scratch folder is left"


def test_the_command_names_the_folder_a_link_points_to(tmp_path):
    target = tmp_path / "elsewhere"
    link = tmp_path / "dev"
    link.symlink_to(target)
    result = subprocess.run(
        [sys.executable, "-m", "offline", "plan", "--stack", "dev", "--output", str(link)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == (
        f"error: {link} is a symbolic link to {target}, which does not exist; nothing was changed. "
        "Create that folder, or choose another --output\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dev"]


def _dead_pid():
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(finished.stdout)


def test_scratch_folders_of_stopped_runs_are_removed_and_a_plan_left_mid_swap_put_back(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    directory = tmp_path / "dev"
    for name in (f".dev.new-{dead}-abc", ".dev.new-abc12345", f".dev.new-{alive}-abc", f".prod.new-{dead}-abc"):
        _previous_plan(tmp_path / name)
    _previous_plan(tmp_path / f".dev.old-{dead}-xyz" / "dev")
    (tmp_path / ".dev.new-users").mkdir()
    (tmp_path / ".dev.new-users" / "notes.txt").write_text("mine\n")
    removed = remove_stale_scratch(directory)
    assert sorted(path.name for path in removed) == sorted(
        [f".dev.new-{dead}-abc", ".dev.new-abc12345", f".dev.old-{dead}-xyz"]
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["dev", f".dev.new-{alive}-abc", f".prod.new-{dead}-abc", ".dev.new-users"]
    )
    assert (directory / "resources.txt").read_text() == "TYPE  NAME\nthe previous plan\n"


def test_a_plan_removes_what_stopped_runs_left(recording, tmp_path):
    _previous_plan(tmp_path / f".dev.new-{_dead_pid()}-abc")
    write_plan(recording, tmp_path / "dev")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dev"]


# --- make plan and make plan-diff ---------------------------------------------------------------------


def _make_dry_run(*arguments):
    result = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", *arguments],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_plan_runs_the_security_gates():
    commands = _make_dry_run("plan", "STACK=prod")
    assert "-m offline plan --stack prod" in commands
    assert "-m security gates --stack prod" in commands


def test_make_plan_diff_plans_both_stacks_and_diffs_them():
    commands = _make_dry_run("plan-diff", "A=dev", "B=prod")
    assert "-m offline plan --stack dev" in commands and "-m offline plan --stack prod" in commands
    assert "diff -ru build/plan/dev build/plan/prod" in commands
