"""Pulumi.yaml declares the stack configuration's keys that the CLI can type, each with the model's type,
a description and the model's default; it names the others, and it is a project file the CLI accepts."""

import re
import typing

import pytest
import yaml
from pydantic import BaseModel

from offline.program import PROJECT_DIR
from stackconfig.load import PROJECT, parse_stack_config, project_keys
from stackconfig.model import StackConfig

PROJECT_TEXT = (PROJECT_DIR / "Pulumi.yaml").read_text()
PROJECT_FILE = yaml.safe_load(PROJECT_TEXT)
DECLARED = {key.split(":", 1)[1]: spec for key, spec in (PROJECT_FILE.get("config") or {}).items() if key.startswith(f"{PROJECT}:")}

# The types a project file may declare (the CLI's project schema, Pulumi 3.44 and later); `array` needs `items`.
CLI_CONFIG_TYPES = {"string", "integer", "boolean", "array"}


def _type_matches(kind: str, value: typing.Any, items: dict | None) -> bool:
    if kind == "array":
        assert items is not None, "an array declares its items"
        return isinstance(value, list) and all(_type_matches(items["type"], item, items.get("items")) for item in value)
    return {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
    }[kind](value)


def project_config_problems(config: dict, project: str) -> list[str]:
    """What the CLI refuses in the `config:` section of a project file, as it loads the project."""
    problems = []
    for key, spec in config.items():
        if not isinstance(spec, dict):
            continue  # a plain value
        namespace, _, _ = key.rpartition(":")
        if namespace not in ("", project):
            if "type" in spec or "default" in spec:
                problems.append(f"{key}: not namespaced by the project, so it may only have a value")
            continue
        kind = spec.get("type")
        if kind is None:
            continue
        if kind not in CLI_CONFIG_TYPES:
            problems.append(f"{key}: type {kind!r} is not one of {sorted(CLI_CONFIG_TYPES)}")
            continue
        if kind == "array" and "items" not in spec:
            problems.append(f"{key}: an array needs `items`")
            continue
        if "default" in spec and "value" in spec:
            problems.append(f"{key}: both a default and a value")
        if "default" in spec and not _type_matches(kind, spec["default"], spec.get("items")):
            problems.append(f"{key}: default {spec['default']!r} is not a {kind}")
    return problems


def _declared_type(annotation) -> str | None:
    """The CLI type of a model field, or None for an object (which the CLI cannot declare)."""
    origin = typing.get_origin(annotation)
    if annotation is bool:
        return "boolean"
    if annotation is int:
        return "integer"
    if annotation is str or origin is typing.Literal:
        return "string"
    if origin is tuple:
        return "array"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return None
    raise AssertionError(f"no project config type for {annotation!r}")


def _model_types() -> dict[str, str | None]:
    return {key: _declared_type(StackConfig.model_fields[name].annotation) for key, name in project_keys().items()}


def test_the_cli_accepts_the_project_file():
    assert PROJECT_FILE["name"] == PROJECT
    assert project_config_problems(PROJECT_FILE["config"], PROJECT) == []


@pytest.mark.parametrize(
    "config, problem",
    [
        ({"p:network": {"type": "object", "default": {}}}, "p:network: type 'object' is not one of"),
        ({"p:zones": {"type": "array", "default": []}}, "p:zones: an array needs `items`"),
        ({"aws:region": {"type": "string", "default": "us-east-1"}}, "aws:region: not namespaced by the project"),
        ({"p:deployTestApp": {"type": "boolean", "default": "yes"}}, "p:deployTestApp: default 'yes' is not a boolean"),
    ],
)
def test_what_the_cli_refuses_is_found(config, problem):
    (found,) = project_config_problems(config, "p")
    assert found.startswith(problem)


def test_every_key_the_cli_can_type_is_declared_and_nothing_else():
    typable = {key for key, kind in _model_types().items() if kind is not None}
    assert sorted(typable - set(DECLARED)) == [], "declare these keys under config: in Pulumi.yaml"
    assert sorted(set(DECLARED) - typable) == [], "Pulumi.yaml declares keys the model does not have, or objects"


def test_the_comment_names_the_keys_left_undeclared():
    comment = " ".join(line for line in PROJECT_TEXT.splitlines() if line.startswith("#"))
    objects = [key for key, kind in _model_types().items() if kind is None]
    assert objects and [key for key in objects if not re.search(rf"\b{key}\b", comment)] == []


def test_declarations_have_the_model_type_and_a_description():
    types = _model_types()
    for key, spec in DECLARED.items():
        assert spec["type"] == types[key], key
        assert spec.get("description", "").strip(), key


def test_defaults_are_the_model_defaults():
    fields = project_keys()
    for key, spec in DECLARED.items():
        assert spec["default"] == StackConfig.model_fields[fields[key]].default, key
    defaults = {f"{PROJECT}:{key}": spec["default"] for key, spec in DECLARED.items()}
    region = {"aws:region": "ap-northeast-1"}
    assert parse_stack_config({**region, **defaults}) == parse_stack_config(region)


@pytest.mark.parametrize("example", ["yaml", "typescript", "python-existing-vpc"])
def test_the_cli_accepts_the_config_of_the_examples(example):
    project = yaml.safe_load((PROJECT_DIR / "examples" / example / "Pulumi.yaml").read_text())
    assert project_config_problems(project.get("config") or {}, project["name"]) == []
