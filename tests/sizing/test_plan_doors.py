"""`python -m sizing plan`: what each door accepts, and that no object or flag passed in is
silently dropped. Every object is planned, refused naming it, or listed in the report (text and
`--json` alike); every flag is used or refused."""

from __future__ import annotations

import io
import json
import textwrap

import pytest

from sizing import cli
from tests.sizing.sample_objects import NODE_POOL, deployment

DESCRIPTION = """\
solverWorkLimit: null
nodePool:
  requirements:
    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
    - {key: karpenter.k8s.aws/instance-size, operator: In, values: [large, xlarge]}
workloads:
  - {name: api, requests: {cpu: 250m, memory: 256Mi}, maxReplicas: 4}
"""


PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(
            "sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode() if isinstance(stdin, str) else stdin))
        )
    status = cli.main(["plan", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def plan_json(capsys, *argv, **kwargs):
    status, out, err = run(capsys, *argv, "--json", **kwargs)
    assert status == 0, err
    return json.loads(out)


def refusal(capsys, *argv, **kwargs):
    status, out, err = run(capsys, *argv, **kwargs)
    assert (status, out) == (2, ""), err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def peak_pods(data):
    return {workload["name"]: workload["podsWithSurge"] for workload in data["workloads"]}


# --- Kubernetes objects: every file and every object ---------------------------------------------


def test_manifests_next_to_object_files_are_planned_too(tmp_path, capsys):
    pool = write(tmp_path, "pool.yaml", NODE_POOL)
    web = write(tmp_path, "web.yaml", deployment("web", 2))
    batch = write(tmp_path, "batch.yaml", deployment("batch", 30))
    data = plan_json(capsys, pool, web, "--manifests", batch)
    assert peak_pods(data) == {"web": 3, "batch": 38}


def test_objects_that_place_no_pods_are_listed_in_text_and_json(tmp_path, capsys):
    objects = write(tmp_path, "all.yaml", "---\n".join([NODE_POOL, deployment("web", 2), PDB, SERVICE]))
    data = plan_json(capsys, objects)
    notes = [note for note in data["notes"] if note.startswith("not planned: ")]
    assert any("PodDisruptionBudget default/web (a disruption budget limits evictions" in note for note in notes)
    assert any("Service default/web (places no pods)" in note for note in notes)
    status, text, _ = run(capsys, objects)
    assert status == 0
    for note in notes:
        assert f"Note: {note}" in text


def test_a_deployment_scaled_to_zero_is_listed_not_dropped(tmp_path, capsys):
    objects = write(tmp_path, "all.yaml", "---\n".join([NODE_POOL, deployment("web", 2), deployment("idle", 0)]))
    data = plan_json(capsys, objects)
    assert "idle" not in peak_pods(data)
    assert any("Deployment default/idle (0 replicas and no HPA: it runs no pods)" in note for note in data["notes"])


def test_an_unknown_kind_stops_the_plan_unless_accepted_and_then_is_listed(tmp_path, capsys):
    cron = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec: {schedule: '@daily'}\n"
    objects = write(tmp_path, "all.yaml", "---\n".join([NODE_POOL, deployment("web", 2), cron]))
    err = refusal(capsys, objects)
    assert "CronJob default/nightly (kind CronJob is not read by the planner" in err and "--accept-unmodelled" in err
    data = plan_json(capsys, objects, "--accept-unmodelled")
    assert any(note.startswith("ignored, may under-plan: CronJob default/nightly") for note in data["notes"])


def test_a_document_without_kind_among_objects_is_refused(tmp_path, capsys):
    objects = write(tmp_path, "all.yaml", NODE_POOL + "---\n" + deployment("web", 2) + "---\nreplicas: 3\n")
    err = refusal(capsys, objects)
    assert "document 3: has no kind" in err and "['replicas']" in err


def test_an_object_given_twice_is_refused_naming_both_places(tmp_path, capsys):
    first = write(tmp_path, "a.yaml", NODE_POOL + "---\n" + deployment("web", 2))
    second = write(tmp_path, "b.yaml", deployment("web", 40))
    err = refusal(capsys, first, second)
    assert (
        "Deployment default/web is given twice" in err and "a.yaml' document 2" in err and "b.yaml' document 1" in err
    )


def test_an_hpa_with_min_above_max_is_refused_naming_it(tmp_path, capsys):
    hpa = textwrap.dedent("""\
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: web-hpa}
        spec: {scaleTargetRef: {kind: Deployment, name: web}, minReplicas: 12, maxReplicas: 4}
        """)
    objects = write(tmp_path, "all.yaml", "---\n".join([NODE_POOL, deployment("web", 2), hpa]))
    err = refusal(capsys, objects)
    assert "HorizontalPodAutoscaler default/web-hpa: spec.minReplicas (12) is greater than spec.maxReplicas (4)" in err


def test_a_key_given_twice_in_a_manifest_is_refused_with_both_lines(tmp_path, capsys):
    text = NODE_POOL + "---\n" + deployment("web", 2).replace("  replicas: 2\n", "  replicas: 2\n  replicas: 30\n")
    err = refusal(capsys, write(tmp_path, "all.yaml", text))
    assert "key 'replicas' appears twice in one map, on line 16 and line 17" in err


@pytest.mark.parametrize(
    "value, message",
    [
        ("replicas: lots", "spec.replicas must be an integer >= 0, got 'lots'"),
        ("replicas: -1", "spec.replicas must be an integer >= 0, got -1"),
        ("replicas: true", "spec.replicas must be an integer >= 0, got True"),
    ],
)
def test_a_malformed_count_is_named(tmp_path, capsys, value, message):
    text = NODE_POOL + "---\n" + deployment("web", 2).replace("replicas: 2", value)
    assert message in refusal(capsys, write(tmp_path, "all.yaml", text))


def test_a_malformed_spread_is_named_not_a_traceback(tmp_path, capsys):
    spread = """\
    topologySpreadConstraints:
      - {maxSkew: lots, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
    """
    text = (
        NODE_POOL
        + "---\n"
        + deployment("web", 2).replace(
            "      containers:", textwrap.indent(textwrap.dedent(spread), "      ") + "      containers:"
        )
    )
    err = refusal(capsys, write(tmp_path, "all.yaml", text))
    assert "topologySpreadConstraints[0].maxSkew must be an integer >= 1, got 'lots'" in err


# --- zones and regions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--zones", "eu-west-1a"], "--zones: 'eu-west-1a' is a zone of eu-west-1, not of us-east-1"),
        (["--zones", "us-east-7a"], "--zones: 'us-east-7a' is not a zone of us-east-1"),
        (["--zones", "us-east-1"], "'us-east-1' is a region, not a zone"),
        (["--region", "us-east-7"], "--region: 'us-east-7' is not an AWS region"),
        (["--region", "eu-west-1", "--zones", "us-east-1a"], "'us-east-1a' is a zone of us-east-1, not of eu-west-1"),
    ],
)
def test_zones_of_another_region_or_of_none_are_refused(tmp_path, capsys, flags, message):
    objects = write(tmp_path, "all.yaml", NODE_POOL + "---\n" + deployment("web", 2))
    assert message in refusal(capsys, objects, *flags)


def test_a_node_pool_requirement_on_another_regions_zones_is_refused(tmp_path, capsys):
    pool = NODE_POOL + "        - {key: topology.kubernetes.io/zone, operator: In, values: [eu-west-1a, eu-west-1b]}\n"
    objects = write(tmp_path, "all.yaml", pool + "---\n" + deployment("web", 2))
    err = refusal(capsys, objects)
    assert "NodePool general: requirements[2] (topology.kubernetes.io/zone): 'eu-west-1a' is a zone of eu-west-1" in err


def test_zones_of_the_region_are_used(tmp_path, capsys):
    objects = write(tmp_path, "all.yaml", NODE_POOL + "---\n" + deployment("web", 2))
    data = plan_json(capsys, objects, "--region", "us-east-1", "--zones", "us-east-1b", "us-east-1c")
    assert {zone for node in data["fleet"]["nodes"] for zone in node["zones"]} <= {"us-east-1b", "us-east-1c"}


@pytest.mark.parametrize(
    "extra, message",
    [
        ("zones: [eu-west-1a]\n", "zones: 'eu-west-1a' is a zone of eu-west-1, not of us-east-1"),
        ("region: us-east-7\n", "region: 'us-east-7' is not an AWS region"),
        (
            "existingNodes: [{name: old, instanceType: m5.large, zone: eu-west-1b}]\n",
            "existing node 'old': zone: 'eu-west-1b' is a zone of eu-west-1",
        ),
    ],
    ids=["zones", "region", "existing-node-zone"],
)
def test_a_description_zone_or_region_that_does_not_fit_is_refused(tmp_path, capsys, extra, message):
    assert message in refusal(capsys, write(tmp_path, "d.yaml", DESCRIPTION + extra))


# --- a description and the objects that join it ----------------------------------------------------


def test_a_description_with_manifests_plans_statefulsets_and_their_spread(tmp_path, capsys):
    spread = """\
    topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: db}}}
    """
    db = deployment("db", 4, kind="StatefulSet").replace(
        "      containers:", textwrap.indent(textwrap.dedent(spread), "      ") + "      containers:"
    )
    description = write(tmp_path, "d.yaml", DESCRIPTION)
    data = plan_json(capsys, description, "--manifests", write(tmp_path, "db.yaml", db))
    assert peak_pods(data) == {"api": 5, "db": 4}
    hosts = [node for node in data["fleet"]["nodes"] if "db" in node["podsByWorkload"]]
    assert len(hosts) >= 4 and all(node["podsByWorkload"]["db"] == 1 for node in hosts)


@pytest.mark.parametrize(
    "text, named",
    [
        (NODE_POOL, "NodePool general"),
        (
            "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec: {}\n",
            "EC2NodeClass default",
        ),
    ],
)
def test_a_description_refuses_cluster_objects_among_its_manifests(tmp_path, capsys, text, named):
    description = write(tmp_path, "d.yaml", DESCRIPTION)
    err = refusal(capsys, description, "--manifests", write(tmp_path, "m.yaml", text))
    assert f"the description's manifests hold {named}" in err and "plans its own `nodePool`" in err


def test_a_description_lists_what_its_manifests_hold_that_places_no_pods(tmp_path, capsys):
    description = write(tmp_path, "d.yaml", DESCRIPTION)
    data = plan_json(capsys, description, write(tmp_path, "m.yaml", deployment("web", 2) + "---\n" + PDB))
    assert "web" in peak_pods(data)
    assert any("PodDisruptionBudget default/web" in note for note in data["notes"])


def test_unmodelled_fields_in_a_descriptions_manifests_stop_it_unless_accepted(tmp_path, capsys):
    gpu = deployment("gpu", 1).replace("memory: 64Mi}", "memory: 64Mi, nvidia.com/gpu: 1}")
    description = write(tmp_path, "d.yaml", DESCRIPTION)
    manifest = write(tmp_path, "gpu.yaml", gpu)
    assert "nvidia.com/gpu" in refusal(capsys, description, "--manifests", manifest)
    data = plan_json(capsys, description, "--manifests", manifest, "--accept-unmodelled")
    assert any("ignored, may under-plan: Deployment default/gpu" in note for note in data["notes"])


def test_two_descriptions_are_refused(tmp_path, capsys):
    err = refusal(capsys, write(tmp_path, "a.yaml", DESCRIPTION), write(tmp_path, "b.yaml", DESCRIPTION))
    assert "are both workload descriptions" in err


@pytest.mark.parametrize("flags", [["--region", "eu-west-1"], ["--zones", "us-east-1a"]])
def test_region_and_zones_flags_are_refused_with_a_description(tmp_path, capsys, flags):
    err = refusal(capsys, write(tmp_path, "d.yaml", DESCRIPTION), *flags)
    assert f"{flags[0]} cannot be used with a workload description" in err and "`region` and `zones` keys" in err


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_a_headroom_that_is_not_a_number_is_refused(tmp_path, capsys, value):
    err = refusal(capsys, write(tmp_path, "d.yaml", DESCRIPTION + f"headroomPercent: {value}\n"))
    assert "headroomPercent must be a finite number (YAML reads .nan and .inf as such)" in err


def test_a_key_given_twice_in_a_description_is_refused_with_both_lines(tmp_path, capsys):
    err = refusal(capsys, write(tmp_path, "d.yaml", DESCRIPTION + "solverWorkLimit: 100\n"))
    assert "key 'solverWorkLimit' appears twice in one map, on line 1 and line 8" in err


# --- stdin -----------------------------------------------------------------------------------------


def test_a_description_on_stdin_is_read_as_a_description(capsys, monkeypatch):
    data = plan_json(capsys, "-", stdin=DESCRIPTION, monkeypatch=monkeypatch)
    assert peak_pods(data) == {"api": 5}


def test_objects_on_stdin_join_object_files(tmp_path, capsys, monkeypatch):
    pool = write(tmp_path, "pool.yaml", NODE_POOL)
    data = plan_json(capsys, pool, "-", stdin=deployment("web", 2), monkeypatch=monkeypatch)
    assert peak_pods(data) == {"web": 3}


def test_stdin_is_read_once(tmp_path, capsys, monkeypatch):
    err = refusal(capsys, "-", "--manifests", "-", stdin=DESCRIPTION, monkeypatch=monkeypatch)
    assert "'-' (stdin) is given more than once" in err


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\xff\xdc\xb0", b"kind: Deployment\x00\n"])
def test_binary_stdin_is_one_clear_line(capsys, monkeypatch, data):
    err = refusal(capsys, "-", stdin=data, monkeypatch=monkeypatch)
    assert err.startswith("error: stdin is not a text file (")


def test_empty_stdin_is_refused(capsys, monkeypatch):
    assert "stdin holds no YAML document" in refusal(capsys, "-", stdin="", monkeypatch=monkeypatch)


# --- files that are not files ---------------------------------------------------------------------


def test_a_folder_a_dangling_link_and_a_fifo_are_named(tmp_path, capsys):
    import os

    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "gone.yaml")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    assert "is a folder, not a file" in refusal(capsys, folder)
    assert f"is a link to {str(tmp_path / 'gone.yaml')!r}, which does not exist" in refusal(capsys, link)
    # Named from its type, never opened: opening a FIFO with no writer would wait forever.
    assert "is a FIFO (named pipe), not a regular file; save its contents to a file, or pipe it to '-'" in refusal(
        capsys, fifo
    )


# --- --stack ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--region", "us-east-1"], "--region"),
        (["--zones", "us-east-1a"], "--zones"),
        (["--accept-unmodelled"], "--accept-unmodelled"),
        (["--manifests", "x.yaml"], "--manifests"),
        (["x.yaml"], "FILE"),
    ],
)
def test_flags_the_stack_sets_are_refused_with_stack(capsys, extra, named):
    err = refusal(capsys, "--stack", "dev", *extra)
    assert f"{named} cannot be used with --stack" in err


def test_an_unknown_flag_with_stack_is_named_as_unknown(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["plan", "--stack", "dev", "--destination", "x"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --destination" in capsys.readouterr().err


def test_project_dir_without_stack_is_refused(tmp_path, capsys):
    err = refusal(capsys, write(tmp_path, "d.yaml", DESCRIPTION), "--project-dir", tmp_path)
    assert "--project-dir cannot be used without --stack" in err


@pytest.mark.parametrize("kind", ["folder", "dangling link", "fifo"])
def test_a_stack_file_that_is_not_a_file_is_named_so(tmp_path, capsys, kind):
    import os

    path = tmp_path / "Pulumi.x.yaml"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(tmp_path / "elsewhere.yaml")
    err = refusal(capsys, "--stack", "x", "--project-dir", tmp_path)
    assert "no stack file" not in err
    expected = {
        "folder": "is a folder, not a file",
        "fifo": "is a FIFO (named pipe), not a regular file",
        "dangling link": "which does not exist",
    }[kind]
    assert f"stack file {path} {expected}" in err or expected in err


@pytest.mark.parametrize(
    "line, message",
    [
        ("aws:defaultTags: {tags: {team: a}}", "`aws:defaultTags` would not reach the program's AWS provider"),
        ("aws:accessKey: AKIAEXAMPLE", "`aws:accessKey` would not reach the program's AWS provider"),
        ("aws:assumeRoles: [{roleArn: nope}]", "'nope' is not an IAM role ARN"),
        ("aws:allowedAccountIds: ['123']", "'123' is not a 12-digit AWS account id"),
    ],
)
def test_plan_stack_runs_the_aws_checks_of_the_stack_program(tmp_path, capsys, line, message):
    (tmp_path / "Pulumi.x.yaml").write_text(f"config:\n  aws:region: us-east-1\n  {line}\n")
    err = refusal(capsys, "--stack", "x", "--project-dir", tmp_path)
    assert message in err
