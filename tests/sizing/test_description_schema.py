"""The published JSON Schema of the workload description is current and agrees with the models."""

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from scripts.generate_description_schema import SCHEMA_FILE, main, schema_text
from sizing.errors import SizingInputError
from sizing.planning.description import validate_description

REPO_ROOT = Path(__file__).resolve().parents[2]
API = {"name": "api", "requests": {"cpu": "250m", "memory": "0.5Gi"}, "maxReplicas": 4}


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_checked_in_schema_is_generated_from_the_models():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        f"{SCHEMA_FILE.relative_to(REPO_ROOT)} is out of date: run `make schemas`"
    )


def test_the_check_mode_reports_a_stale_schema(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    monkeypatch.setattr("scripts.generate_description_schema.SCHEMA_FILE", stale)
    monkeypatch.setattr("scripts.generate_description_schema.REPO_ROOT", tmp_path)
    assert main(["--check"]) == 1
    assert "schema.json is out of date; run `make schemas`" in capsys.readouterr().err
    assert main([]) == 0 and main(["--check"]) == 0


def test_the_documented_example_is_valid_for_editors(validator):
    doc = (REPO_ROOT / "docs" / "sizing-input.md").read_text(encoding="utf-8")
    example = yaml.safe_load(doc.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert list(validator.iter_errors(example)) == []
    validate_description(example)


@pytest.mark.parametrize(
    "document",
    [
        {"workloads": [{**API, "replicas": 3}]},
        {"workloads": [{**API, "requests": {"cpu": "lots", "memory": "1Gi"}}]},
        {"workloads": [{**API, "maxReplicas": 0}]},
        {"workloads": [{**API, "maxSurge": "half"}]},
        {"workloads": [{"name": "api", "maxReplicas": 2}]},
        {"nodePool": {"kubelet": {"evictionHard": {"memory.available": "5%"}}}},
        {"nodePool": {"requirements": [{"key": "kubernetes.io/arch"}]}, "workloads": [API]},
        {"existingNodes": [{"name": "n1"}]},
        {"headroomPercent": "ten"},
        {"maxPodsPerNode": 0},
        {"zones": [""]},
        {"colour": "blue"},
    ],
)
def test_what_the_models_refuse_the_schema_refuses_too(validator, document):
    assert list(validator.iter_errors(document)), "an editor would accept what the planner refuses"
    if "requirements" not in json.dumps(document):  # requirement entries are checked when planning
        with pytest.raises(SizingInputError):
            validate_description(document)


@pytest.mark.parametrize(
    "document",
    [
        {"workloads": [API]},
        {"workloads": [{**API, "maxSurge": 1, "nodeSelector": {"kubernetes.io/arch": "amd64"}}]},
        {"workloads": [{**API, "requests": {"cpu": 0.5, "memory": 1073741824}}], "solverWorkLimit": None},
        {"workloads": [{**API, "requests": {"cpu": "200m"}}, {**API, "name": "cache", "requests": {"memory": "1Gi"}}]},
        {"nodePool": {"limits": {"cpu": 1000, "memory": "1000Gi"}, "kubelet": {"kubeReserved": {"cpu": "100m"}}}},
        {"daemonSets": [{"name": "agent"}], "existingNodes": [{"name": "n1", "instanceType": "m5.large"}]},
    ],
)
def test_what_the_models_accept_the_schema_accepts(validator, document):
    validate_description(document)
    assert list(validator.iter_errors(document)) == []
