"""Pulumi.yaml declares every key of the stack configuration, with its type and a description, and
defaults that change nothing (the model's own)."""

import typing

import yaml
from pydantic import BaseModel

from offline.program import PROJECT_DIR
from stackconfig.load import PROJECT, parse_stack_config, project_keys
from stackconfig.model import StackConfig

PROJECT_FILE = yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())
DECLARED = {key.split(":", 1)[1]: spec for key, spec in (PROJECT_FILE.get("config") or {}).items() if key.startswith(f"{PROJECT}:")}


def _declared_type(annotation) -> str:
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
        return "object"
    raise AssertionError(f"no project config type for {annotation!r}")


def test_every_config_key_is_declared_and_nothing_else():
    keys = set(project_keys())
    assert sorted(keys - set(DECLARED)) == [], "declare these keys under config: in Pulumi.yaml"
    assert sorted(set(DECLARED) - keys) == [], "Pulumi.yaml declares keys the model does not have"


def test_declarations_have_the_model_type_and_a_description():
    fields = project_keys()
    for key, spec in DECLARED.items():
        annotation = StackConfig.model_fields[fields[key]].annotation
        assert spec["type"] == _declared_type(annotation), key
        assert spec.get("description", "").strip(), key


def test_defaults_change_nothing():
    defaults = {f"{PROJECT}:{key}": spec["default"] for key, spec in DECLARED.items()}
    region = {"aws:region": "ap-northeast-1"}
    assert parse_stack_config({**region, **defaults}) == parse_stack_config(region)
    for key, spec in DECLARED.items():
        if spec["type"] != "object":
            assert spec["default"] == StackConfig.model_fields[project_keys()[key]].default, key
