"""pydantic's validation errors of a workload description as plain sentences.

Each problem names its place as it is written in the file: keys in camelCase, list positions
from 0 (`workloads[0].requests.cpu`), map keys quoted (`priceOverrides['m5.large']`). An entry
of a list that has a name is also named (`(workload 'api')`), because a position alone is hard
to find in a long file.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Union

from pydantic import BaseModel

from sizing.errors import echo
from sizing.planning.description_model import Description

# How an entry of each list is named in messages, next to its position.
ENTRY_KINDS = {"workloads": "workload", "daemonSets": "daemonSet", "existingNodes": "existing node"}
ROOT = "the description"


def describe_problem(detail: Mapping[str, Any], document: Any) -> str:
    """One sentence for one entry of `ValidationError.errors()` on `document`."""
    location = [part for part in detail["loc"] if isinstance(part, (str, int))]
    kind, given = detail["type"], detail.get("input")
    if kind in ("extra_forbidden", "missing"):
        place, annotation, entry = _walk(location[:-1], document)
        key = location[-1]
        where = place or ROOT
        if kind == "missing":
            return f"{where}: missing field {echo(key)}{entry}"
        return f"{where}: unknown field {echo(key)}; allowed fields are {_fields(annotation)}{entry}"
    place, annotation, entry = _walk(location, document)
    return f"{place or ROOT} {_requirement(kind, detail, annotation)}, got {echo(given)}{entry}"


def _requirement(kind: str, detail: Mapping[str, Any], annotation: Any) -> str:
    context = detail.get("ctx") or {}
    if kind == "value_error":
        # Our validators word their own requirement ("must be a Kubernetes cpu quantity ...").
        message = str(detail["msg"]).removeprefix("Value error, ")
        return message.rsplit(", got ", 1)[0]
    if kind in ("model_type", "model_attributes_type"):
        return f"must be an object with keys {_fields(annotation)}"
    bounds = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
    if kind in bounds:
        limit = next(iter(context.values()))
        number = "an integer" if annotation is int else "a number"
        return f"must be {number} {bounds[kind]} {limit:g}"
    simple = {
        "dict_type": "must be a map of keys to values",
        "list_type": "must be a list",
        "string_type": "must be a string",
        "string_too_short": "must be a non-empty string",
        "int_type": "must be an integer",
        "float_type": "must be a number",
        "bool_type": "must be true or false",
        "finite_number": "must be a finite number (YAML reads .nan and .inf as such)",
    }
    return simple.get(kind, f"is not valid ({detail['msg']})")


def _walk(location: list[str | int], document: Any) -> tuple[str, Any, str]:
    """The place of `location` as written in the file, the annotation found there, and the
    named entry it lies in (" (workload 'api')", or "")."""
    place, value, entry = "", document, ""
    annotation: Any = Description
    for part in location:
        model = _model(annotation)
        if model is not None and isinstance(part, str):
            field = next(f for name, f in model.model_fields.items() if part in (name, f.alias))
            key = field.alias or part
            place = f"{place}.{key}" if place else key
            annotation = field.annotation
        else:
            parent_key = place.rsplit(".", 1)[-1]
            place += f"[{part}]" if isinstance(part, int) else f"[{part!r}]"
            args = typing.get_args(_plain(annotation))
            annotation = args[-1] if args else Any
            item = _item(value, part)
            if isinstance(part, int) and parent_key in ENTRY_KINDS and isinstance(item, Mapping):
                name = item.get("name")
                entry = f" ({ENTRY_KINDS[parent_key]} {name!r})" if isinstance(name, str) and name else ""
        value = _item(value, part)
        annotation = _plain(annotation)
    return place, annotation, entry


def _plain(annotation: Any) -> Any:
    """The annotation without Annotated metadata or Optional."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin is Union or origin is types.UnionType:
            options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            annotation = options[0] if len(options) == 1 else annotation
            if len(options) != 1:
                return annotation
        else:
            return annotation


def _model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _fields(annotation: Any) -> list[str]:
    model = _model(annotation)
    return [field.alias or name for name, field in model.model_fields.items()] if model else []


def _item(value: Any, part: str | int) -> Any:
    if isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value):
        return value[part]
    if isinstance(part, str) and isinstance(value, Mapping):
        return value.get(part)
    return None
