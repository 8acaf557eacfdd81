"""`python -m sizing catalog`: JSON schema, table, requirement files and bad input, through the real CLI entry point."""

import json

import pytest

from sizing import cli
from sizing.karpenter.allocatable import allocatable, max_pods
from sizing.karpenter.catalog import catalog_by_name, load_catalog

CATALOG = load_catalog()
BY_NAME = catalog_by_name(CATALOG)
ENTRY_KEYS = {"name", "arch", "vcpu", "memoryMiB", "maxPods", "allocatable", "price", "spotPrices", "zones"}


@pytest.fixture(autouse=True)
def only_the_catalog_command(monkeypatch):
    # The CLI imports every command module; this test is about the catalog command alone.
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("sizing.commands.catalog",))


def run(capsys, *argv):
    code = cli.main(["catalog", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv):
    code, out, err = run(capsys, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def test_json_lists_every_type_with_the_documented_schema(capsys):
    entries = run_json(capsys)
    assert [entry["name"] for entry in entries] == [i.name for i in CATALOG]
    for entry in entries:
        assert set(entry) == ENTRY_KEYS
        assert set(entry["allocatable"]) == {"cpu", "memory", "pods"}
        assert all(isinstance(entry["allocatable"][key], int) for key in ("cpu", "memory", "pods"))
        assert entry["price"] is None or (isinstance(entry["price"], float) and entry["price"] > 0)
        instance = BY_NAME[entry["name"]]
        assert entry["allocatable"] == allocatable(instance).as_dict()
        assert entry["maxPods"] == max_pods(instance)
        assert (entry["arch"], entry["vcpu"], entry["memoryMiB"]) == (instance.arch, instance.vcpu, instance.memory_mib)
    m5 = next(entry for entry in entries if entry["name"] == "m5.large")
    assert m5 == {
        "name": "m5.large",
        "arch": "amd64",
        "vcpu": 2,
        "memoryMiB": 8192,
        "maxPods": 29,
        "allocatable": {"cpu": 1930, "memory": 6903, "pods": 29},
        "price": 0.096,
        "spotPrices": {},
        "zones": None,
    }, "the bundled catalog has no spot prices and records no offerings"


def test_region_without_prices_gives_null_prices(capsys):
    entries = run_json(capsys, "--region", "ap-northeast-1")
    assert len(entries) == len(CATALOG)
    assert all(entry["price"] is None for entry in entries)


NODEPOOL_YAML = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "c6g"]
        - key: karpenter.k8s.aws/instance-cpu
          operator: Lte
          values: ["4"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
"""


def test_requirements_from_a_nodepool_yaml(tmp_path, capsys):
    path = tmp_path / "nodepool.yaml"
    path.write_text(NODEPOOL_YAML)
    entries = run_json(capsys, "--requirements", str(path))
    assert [entry["name"] for entry in entries] == ["m5.large", "m5.xlarge"]


def test_requirements_from_a_json_list(tmp_path, capsys):
    path = tmp_path / "requirements.json"
    path.write_text(
        json.dumps([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c6g.xlarge"]}])
    )
    (entry,) = run_json(capsys, "--requirements", str(path))
    assert entry["allocatable"] == {"cpu": 3920, "memory": 6525, "pods": 58}


def test_multi_document_file_with_one_nodepool(tmp_path, capsys):
    path = tmp_path / "manifests.yaml"
    path.write_text(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\n---\n" + NODEPOOL_YAML
    )
    assert [entry["name"] for entry in run_json(capsys, "--requirements", str(path))] == ["m5.large", "m5.xlarge"]


def test_table_output(tmp_path, capsys):
    path = tmp_path / "nodepool.yaml"
    path.write_text(NODEPOOL_YAML)
    code, out, _ = run(capsys, "--requirements", str(path))
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split()[0] == "TYPE" and lines[0].endswith("USD/h us-east-1")
    assert lines[1].split() == ["m5.large", "amd64", "2", "8192", "29", "1930", "6903", "29", "0.096"]
    assert lines[-1] == "2 instance types (0 without a price for us-east-1); capacity types planned: on-demand, spot"


def test_a_refreshed_catalog_file_can_be_listed(tmp_path, capsys):
    from sizing.karpenter.catalog import catalog_document, dump_catalog_document

    path = tmp_path / "catalog.json"
    path.write_text(dump_catalog_document(catalog_document([BY_NAME["m5.large"]], "test")))
    assert [entry["name"] for entry in run_json(capsys, "--catalog", str(path))] == ["m5.large"]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "setup, fragment",
    [
        (
            lambda p: ["--requirements", write(p, "r.yaml", "- {key: karpenter.sh/bar, operator: In, values: [a]}\n")],
            "requirements[0].key: label domain \"karpenter.sh\" is restricted (got 'karpenter.sh/bar') (the NodePool",
        ),
        (
            lambda p: [
                "--requirements",
                write(p, "r.yaml", "- {key: kubernetes.io/arch, operator: Equals, values: [a]}\n"),
            ],
            "operator 'Equals' is not supported; allowed operators are",
        ),
        (
            lambda p: [
                "--requirements",
                write(p, "r.yaml", "- {key: kubernetes.io/arch, operator: In, values: [s390x]}\n"),
            ],
            "the NodePool requirements leave no instance type: kubernetes.io/arch In [s390x]",
        ),
        (
            lambda p: [
                "--requirements",
                write(p, "r.yaml", "- {key: karpenter.sh/capacity-type, operator: DoesNotExist}\n"),
            ],
            "leave no capacity type",
        ),
        (
            lambda p: ["--requirements", write(p, "r.yaml", "- {key: [unclosed\n")],
            "YAML syntax error at line 2, column 1",
        ),
        (
            lambda p: ["--requirements", write(p, "r.yaml", "")],
            "is empty; expected a list of requirements or a NodePool object",
        ),
        (
            lambda p: ["--requirements", write(p, "r.yaml", "kind: NodePool\nspec: {}\n")],
            "a NodePool object needs spec.template.spec.requirements",
        ),
        (
            lambda p: ["--requirements", write(p, "r.yaml", "kind: A\n---\nkind: B\n")],
            "needs exactly one NodePool, found 0",
        ),
        (
            lambda p: ["--requirements", write(p, "r.yaml", "42\n")],
            "expected a list of requirements or a NodePool object, got int",
        ),
        (lambda p: ["--requirements", str(p / "absent.yaml")], "absent.yaml' cannot be read (it does not exist)"),
        (lambda p: ["--catalog", write(p, "c.json", "[]")], "expected an object with an 'instanceTypes' list"),
        (lambda p: ["--region", "Tokyo"], "region must be an AWS region name such as 'us-east-1', got 'Tokyo'"),
        (lambda p: ["--output", str(p / "x.json")], "--output is only used with catalog refresh"),
        (
            lambda p: ["--json", "refresh", "--region", "us-east-1"],
            "catalog refresh takes only --region, --stack, --profile and --output, not --json",
        ),
        (lambda p: ["refresh", "--region", "Tokyo"], "region must be an AWS region name"),
        (lambda p: ["--refresh"], "--refresh needs --output FILE"),
        (
            lambda p: ["--refresh", "--json", "--output", str(p / "x.json")],
            "--refresh takes only --region and --output, not --json",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, setup, fragment):
    code, out, err = run(capsys, *setup(tmp_path))
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert fragment in err
