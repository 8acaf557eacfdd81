"""The component's inputs and the stack configuration model name the same keys with compatible types.

A key added to the model needs an input of the same name in components/eks_autoscaling_args.py (with a
docstring), then `make schema`; the failure message names the keys on either side.
"""

import typing
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from offline.program import PROJECT_DIR
from stackconfig.load import load_stack_file
from stackconfig.model import StackConfig
from stackplan.deployment import (
    COMPONENT_ONLY_INPUTS,
    args_from_config,
    config_from_args,
)
from tests.package.schema_checks import SCHEMA, TYPE_PREFIX, component


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _strip_optional(annotation: Any) -> Any:
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None)) and len(args) == 1:
        return args[0]
    return annotation


def _model_kind(annotation: Any) -> tuple[str, Any]:
    """(schema kind, nested) of a model annotation: nested is the item/section annotation."""
    annotation = _strip_optional(annotation)
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        # Quantities and surges: validated by the model, written as strings (a number is a quantity too).
        kind = _written_as(annotation)
        return kind, (str if kind == "map" else None)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        kinds = {_model_kind(arg)[0] for arg in get_args(annotation) if arg is not type(None)}
        return ("string" if "string" in kinds else kinds.pop()), None
    if origin is list:
        return "array", get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object-type", annotation
    if origin is tuple:
        return "array", get_args(annotation)[0]
    if origin is dict:
        return "map", get_args(annotation)[1]
    if origin is Literal:
        return "string", None
    if annotation is Any:
        return "any", None
    return {str: "string", int: "integer", float: "number", bool: "boolean"}[annotation], None


def _written_as(annotation: Any) -> str:
    for meta in annotation.__metadata__:
        schema = getattr(meta, "json_schema", None)
        if schema is not None:
            types = {option.get("type") for option in schema.get("anyOf", [schema])}
            if "object" in types:
                return "map"
            return "string" if "string" in types else types.pop()
    return _model_kind(get_args(annotation)[0])[0]


def _schema_kind(prop: dict) -> tuple[str, Any]:
    ref = prop.get("$ref", "")
    if ref.startswith(TYPE_PREFIX):
        return "object-type", SCHEMA["types"][ref[len(TYPE_PREFIX) :]]["properties"]
    if ref == "pulumi.json#/Any":
        return "any", None
    if prop.get("type") == "array":
        return "array", prop["items"]
    if prop.get("type") == "object":
        return "map", prop.get("additionalProperties", {})
    return prop["type"], None


def mismatches(model: type[BaseModel], properties: dict, prefix: str = "") -> list[str]:
    problems = []
    # A field excluded from dumps is a retired key, kept only to refuse it with a clear message.
    # A key Kubernetes spells with a hyphen (`ephemeral-storage`) is no identifier in any Pulumi
    # language: the input takes the field's own name, camel-cased, which the model also accepts.
    fields = {
        (field.alias if field.alias and "-" not in field.alias else None) or _camel(name): field
        for name, field in model.model_fields.items()
        if not field.exclude
    }
    if model is StackConfig:
        fields.pop("region")
        properties = {k: v for k, v in properties.items() if k not in {_camel(n) for n in COMPONENT_ONLY_INPUTS}}
    for key in sorted(set(fields) - set(properties)):
        problems.append(f"config key `{prefix}{key}` has no input: add it to components/eks_autoscaling_args.py")
    for key in sorted(set(properties) - set(fields)):
        problems.append(f"input `{prefix}{key}` is not a config key: add it to the model in stackconfig/ or drop it")
    for key in sorted(set(fields) & set(properties)):
        field = fields[key]
        # pydantic keeps a field's Annotated[...] metadata apart from its annotation.
        annotation = typing.Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        problems += _compare(annotation, properties[key], f"{prefix}{key}")
    return problems


def _compare(annotation: Any, prop: dict, path: str) -> list[str]:
    model_kind, model_inner = _model_kind(annotation)
    schema_kind, schema_inner = _schema_kind(prop)
    if model_kind != schema_kind:
        return [f"`{path}`: the model has {model_kind}, the input {schema_kind}"]
    if model_kind == "object-type":
        return mismatches(model_inner, schema_inner, f"{path}.")
    if model_kind in ("array", "map"):
        return _compare(model_inner, schema_inner, f"{path}[]")
    return []


def test_every_config_key_is_an_input_and_every_input_a_config_key():
    assert mismatches(StackConfig, component()["inputProperties"]) == []


def test_a_missing_input_or_a_wrong_type_is_reported():
    properties = dict(component()["inputProperties"])
    del properties["deployTestApp"]
    properties["extra"] = {"type": "string"}
    properties["identity"] = {"type": "integer"}
    assert mismatches(StackConfig, properties) == [
        "config key `deployTestApp` has no input: add it to components/eks_autoscaling_args.py",
        "input `extra` is not a config key: add it to the model in stackconfig/ or drop it",
        "`identity`: the model has string, the input integer",
    ]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stack_and_the_inputs_made_from_it_are_the_same_configuration(stack):
    config = load_stack_file(PROJECT_DIR / f"Pulumi.{stack}.yaml")
    assert config_from_args(args_from_config(config), config.region) == config


def test_a_storage_request_given_as_an_input_reaches_the_plan_as_in_a_stack_file():
    # The SDKs hand a nested input over under its Python name; the stack file spells it as
    # Kubernetes does. Both reach the same configuration.
    workload = {"name": "scratch", "max_replicas": 2}
    from_input = config_from_args(
        {"capacity": {"workloads": [{**workload, "requests": {"cpu": "1", "ephemeral_storage": "10Gi"}}]}}, "us-east-1"
    )
    from_file = config_from_args(
        {"capacity": {"workloads": [{**workload, "requests": {"cpu": "1", "ephemeral-storage": "10Gi"}}]}}, "us-east-1"
    )
    assert from_input == from_file
    assert args_from_config(from_input)["capacity"]["workloads"][0]["requests"]["ephemeral_storage"] == "10Gi"
