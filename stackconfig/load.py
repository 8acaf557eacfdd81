"""Reading and validating a stack's configuration, from Pulumi or from a stack file.

Pulumi hands the program every config value as a string: plain strings for
scalars and JSON text for structured values. Both sources below are turned into
that form first, so that a stack file and a real run are validated the same way.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from sizing.errors import echo
from sizing.kube.safe_yaml import YamlInputError, load_document, read_text
from stackconfig.errors import StackConfigError
from stackconfig.model import StackConfig

PROJECT = "eks-autoscaling"
REGION_KEY = "aws:region"
# The top-level keys of Pulumi's stack settings file (docs "Stack settings file reference"):
# anything else is a typo Pulumi would not read.
STACK_FILE_KEYS = ("config", "encryptedkey", "encryptionsalt", "environment", "secretsprovider")


def project_keys() -> dict[str, str]:
    """Project config key (camelCase) -> field name, for every field but the region."""
    return {(field.alias or name): name for name, field in StackConfig.model_fields.items() if name != "region"}


def parse_stack_config(raw: Mapping[str, Any], project: str = PROJECT, region_key: str = REGION_KEY) -> StackConfig:
    """Validate config values keyed `<namespace>:<key>` as Pulumi provides them.

    Values may be strings (as Pulumi gives them) or already-parsed YAML values.
    Keys of namespaces other than the project's and `aws:region` are ignored:
    they belong to providers. region_key: how messages name the region (`aws:region` in a
    stack, `region` for a component's input).
    """
    keys = project_keys()
    document: dict[str, Any] = {}
    problems = []
    if REGION_KEY in raw:
        document["region"] = raw[REGION_KEY]
    else:
        problems.append(f"`{REGION_KEY}` is not set; set it with `pulumi config set aws:region ap-northeast-1`")
    for full_key, value in sorted(raw.items()):
        namespace, _, key = full_key.partition(":")
        if namespace != project:
            continue
        if key not in keys:
            problems.append(f"unknown key `{key}`; the allowed keys are: {', '.join(sorted(keys))}")
            continue
        document[key] = _decode(key, value, keys[key], problems)
    if problems:
        raise StackConfigError(problems)
    try:
        return StackConfig.model_validate_json(json.dumps(document))
    except ValidationError as error:
        raise StackConfigError(_describe(error, region_key)) from None


def stack_file(stack: str, project_dir: Path) -> Path:
    """`Pulumi.<stack>.yaml` in `project_dir`; a stack without its file is refused with the stacks
    there listed, and a path or a file name given for the stack's name is named as such."""
    project_dir = Path(project_dir)
    path = project_dir / f"Pulumi.{stack}.yaml"
    if path.exists() or path.is_symlink():
        return path
    stacks = sorted(
        found.name[len("Pulumi.") : -len(".yaml")] for found in project_dir.glob("Pulumi.*.yaml") if found.is_file()
    )
    hint = ""
    name = Path(stack).name
    if "/" in stack or "\\" in stack or name.endswith((".yaml", ".yml")):
        short = name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
        hint = f" (give the stack's name, such as {echo(short, 40)}, not a path or file name)"
    elif stack != stack.strip() or " " in stack:
        hint = " (a stack's name has no spaces)"
    listed = ", ".join(stacks) if stacks else "none (use --project-dir)"
    raise StackConfigError(
        [f"no stack file Pulumi.{stack}.yaml in {project_dir.resolve()}{hint}; stacks there: {listed}"]
    )


def load_stack_file(path: Path, project: str = PROJECT) -> StackConfig:
    """Validate the `config:` map of a `Pulumi.<stack>.yaml` file."""
    return parse_stack_config(read_stack_file(path), project)


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `config:` map of a stack file, unvalidated. The file is read as every YAML input is
    (`sizing.kube.safe_yaml`: a regular UTF-8 text file, no key twice in a map, aliases bounded);
    an unreadable file, a YAML error (with its line and column) or a document of the wrong shape
    raise StackConfigError."""
    path = Path(path)
    try:
        document = load_document(read_text(path, f"stack file {path}"), str(path))
    except YamlInputError as error:
        raise StackConfigError([str(error)]) from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise StackConfigError(
            [f"{path}: the top level must be a map with a `config:` key, not a {_yaml_kind(document)}"]
        )
    unknown = sorted(str(key) for key in document if key not in STACK_FILE_KEYS)
    if unknown:
        raise StackConfigError([_unknown_top_level(path, key) for key in unknown[:5]])
    config = document.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise StackConfigError(
            [
                f"{path}: `config` must be a map of keys to values (such as `aws:region: us-east-1`), "
                f"not a {_yaml_kind(config)}"
            ]
        )
    return config


def _unknown_top_level(path: Path, key: str) -> str:
    close = difflib.get_close_matches(key, STACK_FILE_KEYS, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return (
        f"{path}: unknown top-level key {echo(key, 40)}{hint}; a stack file holds only "
        f"{', '.join(f'`{name}`' for name in STACK_FILE_KEYS)}"
    )


def _yaml_kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return f"string ({echo(value, 40)})"
    return type(value).__name__


def load_from_pulumi(project: str | None = None) -> StackConfig:
    """Validate the configuration of the running Pulumi program."""
    import pulumi

    return parse_stack_config(pulumi_config_values(), project or pulumi.get_project())


def pulumi_config_values() -> dict[str, Any]:
    """Every config value of the running Pulumi program, keyed `<namespace>:<key>`."""
    from pulumi.runtime import config as runtime_config

    # The SDK offers no public way to list every key, and unknown keys must be found.
    return {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}


def _decode(key: str, value: Any, field_name: str, problems: list) -> Any:
    if not isinstance(value, str):
        return value
    if _is_text_field(StackConfig.model_fields[field_name].annotation):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        problems.append(f"`{key}`: {value!r} is not a structured value; give it as a YAML map or list")
        return None


def _is_text_field(annotation: Any) -> bool:
    if annotation is str:
        return True
    return get_origin(annotation) is Literal and all(isinstance(option, str) for option in get_args(annotation))


def _describe(error: ValidationError, region_key: str = REGION_KEY) -> list[str]:
    return [_describe_one(detail, region_key) for detail in error.errors()]


def _describe_one(detail: Mapping[str, Any], region_key: str = REGION_KEY) -> str:
    location = [part for part in detail["loc"] if isinstance(part, (str, int))]
    key = region_key if location == ["region"] else _dotted(location)
    kind = detail["type"]
    given = detail.get("input")
    if kind == "extra_forbidden":
        parent = _model_at(location[:-1])
        allowed = sorted(field.alias or name for name, field in parent.model_fields.items()) if parent else []
        return f"unknown key `{key}`; the allowed keys here are: {', '.join(allowed)}"
    if kind == "missing":
        return f"`{key}` is required"
    if kind == "string_type" and isinstance(given, (int, float)) and not isinstance(given, bool):
        return f"`{key}`: {_unquoted_number(given, location)}"
    if kind == "finite_number":
        return f"`{key}`: must be a finite number, not {given} (YAML reads .nan and .inf as such)"
    message = detail["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
        return f"`{key}`: {message}" if key else message
    return f"`{key}`: {message} (got {echo(given)})" if key else f"{message} (got {echo(given)})"


def _unquoted_number(given: Any, location: list) -> str:
    """YAML reads an unquoted 1.30 as the number 1.3: say so, and how to write the text. The
    same words serve a component's input given as a number in code."""
    parent = _model_at(location[:-1])
    field = parent.model_fields.get(str(location[-1])) if parent and location else None
    field = field or next(
        (f for f in (parent.model_fields.values() if parent else ()) if f.alias == location[-1]), None
    )
    example = field.default if field is not None and isinstance(field.default, str) else str(given)
    return (
        f"text is expected, not the number {given!r} (YAML reads an unquoted value as a number: "
        f'an unquoted 1.30 even becomes 1.3); write it in quotes, such as "{example}"'
    )


def _dotted(location: list) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _model_at(location: list) -> type[BaseModel] | None:
    annotation: Any = StackConfig
    for part in location:
        model = _model_in(annotation)
        if isinstance(part, int):
            # An entry of a list of models (`capacity.workloads[0]`).
            annotation = next((arg for arg in get_args(annotation) if _model_in(arg)), None)
            continue
        if model is None:
            return None
        field = next(
            (f for name, f in model.model_fields.items() if part in (name, f.alias)),
            None,
        )
        annotation = field.annotation if field else None
    return _model_in(annotation)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
