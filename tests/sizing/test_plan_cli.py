"""`python -m sizing plan`: the report, --json, and one clear error line for every bad input."""

import json
import re
import textwrap

import pytest

from sizing import cli
from tests.catalogs import refreshed, write_catalog

DEV = """
region: ap-northeast-1
priceOverrides: {m5.large: 0.124}
solverWorkLimit: null
nodePool:
  name: test-app
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
    - {key: topology.kubernetes.io/zone, operator: In, values: [ap-northeast-1a, ap-northeast-1c]}
  limits: {cpu: 1000, memory: 1000Gi}
workloads:
  - name: test-app
    requests: {cpu: 100m, memory: 64Mi}
    maxReplicas: 10
    maxSurge: 100%
    nodeSelector: {karpenter.sh/nodepool: test-app}
"""


def write(tmp_path, text, name="plan.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def run(capsys, *argv):
    status = cli.main(["plan", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_plan_prints_the_report(tmp_path, capsys):
    status, out, err = run(capsys, write(tmp_path, DEV))
    assert (status, err) == (0, "")
    assert len(re.findall(r"^nodeclaim-\d+ +cpu +[█░]+", out, re.MULTILINE)) == 2
    assert '  limits:\n    cpu: "5"\n    memory: 17Gi\n' in out
    assert "Current limits (cpu: 1000, memory: 1000Gi) keep every scenario's decisions." in out
    assert "0.248 USD/hour" in out


def test_plan_json_is_the_same_plan(tmp_path, capsys):
    status, out, _ = run(capsys, write(tmp_path, DEV), "--json")
    data = json.loads(out)
    assert status == 0
    assert data["limits"]["spec"] == {"cpu": "5", "memory": "17Gi"}
    assert data["fleet"]["nodeCount"] == 2 and data["pods"]["withSurge"] == 20
    assert data["fleet"]["cost"] == pytest.approx(0.248)


def test_manifests_on_the_command_line_add_workloads(tmp_path, capsys):
    manifest = write(
        tmp_path,
        """
        kind: Deployment
        metadata: {name: worker}
        spec:
          replicas: 4
          strategy: {rollingUpdate: {maxSurge: 1}}
          template:
            spec:
              containers: [{name: w, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
        """,
        "worker.yaml",
    )
    status, out, _ = run(capsys, write(tmp_path, DEV), "--manifests", manifest, "--json")
    data = json.loads(out)
    assert status == 0
    assert [(w["name"], w["podsWithSurge"]) for w in data["workloads"]] == [("test-app", 20), ("worker", 5)]


def test_stack_without_stack_support_says_so(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_stackconfig(name, *args, **kwargs):
        if name.startswith("stackconfig"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_stackconfig)
    status, out, err = run(capsys, "--stack", "dev")
    assert status == 2 and out == ""
    assert err.startswith("error: stack configuration support is not available")


BAD_INPUTS = [
    (
        """
        defaultDaemonSets: false
        solverWorkLimit: null
        nodePool:
          requirements:
            - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
            - {key: karpenter.k8s.aws/instance-size, operator: In, values: [large, xlarge, 2xlarge]}
        workloads:
          - {name: api, requests: {cpu: 9000m, memory: 1Gi}, maxReplicas: 2}
        """,
        "workload 'api' requests 9000m cpu; the largest allowed instance type (m5.2xlarge) has 7910m "
        "allocatable after DaemonSets",
    ),
    (
        """
        nodePool:
          requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [zz9]}]
        workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2}]
        """,
        "the NodePool requirements leave no instance type",
    ),
    (
        """
        nodePool:
          requirements: [{key: karpenter.k8s.aws/instance-colour, operator: In, values: [red]}]
        workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2}]
        """,
        'nodePool.requirements[0].key: label domain "karpenter.k8s.aws" is restricted',
    ),
    (
        """
        nodePool:
          requirements: [{key: kubernetes.io/arch, operator: Like, values: [amd64]}]
        workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2}]
        """,
        "operator 'Like' is not supported",
    ),
    (
        "workloads: [{name: api, requests: {cpu: -1m, memory: 1Gi}, maxReplicas: 2}]\n",
        "workload 'api' requests -1m cpu",
    ),
    ("workloads: [{name: api\n", "YAML syntax error at line 2, column 1"),
    (
        "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2}]\nspot: yes\n",
        "unknown field 'spot'",
    ),
    (
        "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2, nodeSelector: {team: a}}]\n",
        "nodeSelector requires custom label team=a, which no NodePool gives its nodes and no running node carries "
        "(NodePool default: no team label); Karpenter would leave these pods pending",
    ),
    (
        "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 2,"
        " nodeSelector: {kubernetes.io/arch: arm64}}]\n",
        "matches none of the NodePool's",
    ),
    (
        "workloads: [{name: api, requests: {cpu: 100m, memory: 8Ti}, maxReplicas: 1}]\n",
        "workload 'api' requests 8388608Mi memory; the largest allowed instance type",
    ),
]


@pytest.mark.parametrize("text, message", BAD_INPUTS, ids=[m[:40] for _, m in BAD_INPUTS])
def test_bad_input_exits_2_with_one_clear_line(tmp_path, capsys, text, message):
    status, out, err = run(capsys, write(tmp_path, text))
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert message in err


def test_a_missing_file_is_one_clear_line(tmp_path, capsys):
    status, _, err = run(capsys, tmp_path / "nowhere.yaml")
    assert status == 2 and "cannot be read" in err and err.count("\n") == 1


def test_an_unknown_stack_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    status, out, err = run(capsys, "--stack", "nosuch", "--project-dir", tmp_path)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "no stack file Pulumi.nosuch.yaml" in err and "stacks there: dev" in err
    assert "Traceback" not in err


def test_a_bad_stack_file_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "Pulumi.t.yaml").write_text("config:\n  aws:region: us-east-1\n  eks-autoscaling:app: {hpa: [\n")
    status, out, err = run(capsys, "--stack", "t", "--project-dir", tmp_path)
    assert status == 2 and out == ""
    assert err.startswith("error: invalid stack configuration: ") and "YAML syntax error at line" in err


def test_a_stack_with_a_bad_value_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "Pulumi.t.yaml").write_text("config:\n  aws:region: us-east-7\n")
    status, out, err = run(capsys, "--stack", "t", "--project-dir", tmp_path)
    assert status == 2 and out == ""
    assert "'us-east-7' is not an AWS region" in err


def test_a_binary_description_is_one_clear_line(tmp_path, capsys):
    path = tmp_path / "plan.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00")
    status, out, err = run(capsys, path)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"file {str(path)!r} is not a text file" in err


def test_a_binary_manifest_is_one_clear_line(tmp_path, capsys):
    manifest = tmp_path / "deployment.yaml"
    manifest.write_bytes(b"\x00\xff\x01")
    status, out, err = run(capsys, write(tmp_path, DEV), "--manifests", manifest)
    assert status == 2 and out == ""
    assert f"manifest {str(manifest)!r} is not a text file" in err


def test_an_oversized_daemon_set_is_blamed_not_the_app(tmp_path, capsys):
    text = DEV + 'daemonSets:\n  - {name: big-agent, requests: {cpu: "2", memory: 64Mi}}\n'
    status, out, err = run(capsys, write(tmp_path, text))
    assert status == 2 and out == ""
    assert "the DaemonSets request 2125m cpu on every node" in err
    assert "1930m allocatable of the largest allowed instance type (m5.large)" in err
    assert "test-app" not in err


def test_a_binary_file_among_object_files_is_one_clear_line(tmp_path, capsys):
    objects = tmp_path / "objects.yaml"
    objects.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    binary = tmp_path / "image.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    status, out, err = run(capsys, objects, binary)
    assert status != 0 and out == ""
    assert "is not a text file" in err and "Traceback" not in err


SPOT_DEV = DEV.replace("values: [on-demand]", "values: [spot, on-demand]")


def write_tokyo_catalog(tmp_path, region="ap-northeast-1"):
    zones = [f"{region}{z}" for z in "acd"]
    m5 = refreshed("m5.large", region, 0.124, {zone: 0.05 for zone in zones}, zones)
    return write_catalog(tmp_path / f"catalog-{region}.json", [m5], region)


def test_plan_spot_discount_prices_spot_and_says_who_set_it(tmp_path, capsys):
    status, out, err = run(capsys, write(tmp_path, SPOT_DEV), "--spot-discount", "50", "--json")
    data = json.loads(out)
    assert status == 0, err
    assert data["fleet"]["cost"] == pytest.approx(0.124)
    assert {node["priceSource"] for node in data["fleet"]["nodes"]} == {"spot-discount"}
    assert data["prices"]["spot"]["setBy"] == "--spot-discount"


def test_plan_catalog_uses_the_refreshed_prices_and_offerings(tmp_path, capsys):
    catalog = write_tokyo_catalog(tmp_path)
    status, out, err = run(capsys, write(tmp_path, SPOT_DEV), "--catalog", catalog)
    assert status == 0, err
    assert "m5.large/0.0500 spot [spot at market prices of 2026-08-03T09:30:00Z]" in out
    assert "  offerings: checked against the offerings catalog file" in out


def test_plan_catalog_of_another_region_is_refused_naming_both(tmp_path, capsys):
    catalog = write_tokyo_catalog(tmp_path, region="eu-west-1")
    status, out, err = run(capsys, write(tmp_path, DEV), "--catalog", catalog)
    assert (status, out) == (2, "")
    assert "--catalog: catalog file" in err and "was refreshed for eu-west-1, but the plan is for ap-northeast-1" in err
    assert err.count("\n") == 1


def test_plan_objects_take_the_catalogs_region_by_default(tmp_path, capsys):
    catalog = write_tokyo_catalog(tmp_path)
    objects = write(
        tmp_path,
        """
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: general}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
              requirements:
                - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: shop}
        spec:
          replicas: 3
          template:
            spec:
              containers:
                - name: web
                  resources: {requests: {cpu: 500m, memory: 512Mi}}
        """,
        "objects.yaml",
    )
    status, out, err = run(capsys, objects, "--catalog", catalog, "--json")
    assert status == 0, err
    assert json.loads(out)["region"] == "ap-northeast-1"


@pytest.mark.parametrize("value", ["100", "-1", "nan"])
def test_plan_spot_discount_out_of_range_is_one_clear_line(tmp_path, capsys, value):
    status, out, err = run(capsys, write(tmp_path, DEV), f"--spot-discount={value}")
    assert (status, out) == (2, "")
    assert "--spot-discount must be a percentage below the on-demand price from 0 to 99" in err
