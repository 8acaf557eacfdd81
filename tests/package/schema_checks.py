"""Checking a program's use of the component against the package schema (schema.json)."""

from __future__ import annotations

import json
from typing import Any

from offline.program import PROJECT_DIR

SCHEMA = json.loads((PROJECT_DIR / "schema.json").read_text())
COMPONENT = "eks-autoscaling:index:EksAutoscaling"
TYPE_PREFIX = "#/types/"
# A value the check cannot see (an output of another resource, a config lookup): any type goes.
UNKNOWN = object()


def component() -> dict:
    return SCHEMA["resources"][COMPONENT]


def check_inputs(values: dict, where: str = "") -> list[str]:
    """Problems of a map of inputs (schema names): unknown names and values of the wrong type."""
    return _check_object(values, component()["inputProperties"], where)


def _check_object(values: Any, properties: dict, where: str) -> list[str]:
    if not isinstance(values, dict):
        return [f"{where or 'inputs'}: expected an object, got {values!r}"]
    problems = []
    for name, value in values.items():
        path = f"{where}.{name}" if where else name
        if name not in properties:
            problems.append(f"{path}: not an input of the schema (known here: {', '.join(sorted(properties))})")
            continue
        problems += check_value(value, properties[name], path)
    return problems


def check_value(value: Any, prop: dict, path: str) -> list[str]:
    if value is UNKNOWN:
        return []
    ref = prop.get("$ref")
    if ref:
        if not ref.startswith(TYPE_PREFIX):
            return []
        return _check_object(value, SCHEMA["types"][ref[len(TYPE_PREFIX):]]["properties"], path)
    kind = prop.get("type")
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {value!r}"]
        return [problem for index, item in enumerate(value) for problem in check_value(item, prop["items"], f"{path}[{index}]")]
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: expected a map, got {value!r}"]
        items = prop.get("additionalProperties", {})
        return [problem for key, item in value.items() for problem in check_value(item, items, f"{path}.{key}")]
    expected = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
    }.get(kind or "")
    if expected is not None and not expected(value):
        return [f"{path}: expected {kind}, got {value!r}"]
    return []
