"""Reading and validating a stack's configuration, from Pulumi or from a stack file.

Pulumi hands the program every config value as a string: plain strings for
scalars and JSON text for structured values. Both sources below are turned into
that form first, so that a stack file and a real run are validated the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from stackconfig.errors import StackConfigError
from stackconfig.model import StackConfig

PROJECT = "eks-autoscaling"
REGION_KEY = "aws:region"


def project_keys() -> dict[str, str]:
    """Project config key (camelCase) -> field name, for every field but the region."""
    return {
        (field.alias or name): name for name, field in StackConfig.model_fields.items() if name != "region"
    }


def parse_stack_config(raw: Mapping[str, Any], project: str = PROJECT) -> StackConfig:
    """Validate config values keyed `<namespace>:<key>` as Pulumi provides them.

    Values may be strings (as Pulumi gives them) or already-parsed YAML values.
    Keys of namespaces other than the project's and `aws:region` are ignored:
    they belong to providers.
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
        raise StackConfigError(_describe(error)) from None


def load_stack_file(path: Path, project: str = PROJECT) -> StackConfig:
    """Validate the `config:` map of a `Pulumi.<stack>.yaml` file."""
    try:
        document = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise StackConfigError([f"cannot read stack file {path}: {error}"]) from None
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise StackConfigError([f"{path}: `config` must be a map of keys to values"])
    return parse_stack_config(config, project)


def load_from_pulumi(project: Optional[str] = None) -> StackConfig:
    """Validate the configuration of the running Pulumi program."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    # The SDK offers no public way to list every key, and unknown keys must be found.
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return parse_stack_config(raw, project or pulumi.get_project())


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


def _describe(error: ValidationError) -> list[str]:
    return [_describe_one(detail) for detail in error.errors()]


def _describe_one(detail: Mapping[str, Any]) -> str:
    location = [part for part in detail["loc"] if isinstance(part, (str, int))]
    key = _dotted(location)
    kind = detail["type"]
    given = detail.get("input")
    if kind == "extra_forbidden":
        parent = _model_at(location[:-1])
        allowed = sorted(field.alias or name for name, field in parent.model_fields.items()) if parent else []
        return f"unknown key `{key}`; the allowed keys here are: {', '.join(allowed)}"
    if kind == "missing":
        return f"`{key}` is required"
    message = detail["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
        return f"`{key}`: {message}" if key else message
    return f"`{key}`: {message} (got {given!r})" if key else f"{message} (got {given!r})"


def _dotted(location: list) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _model_at(location: list) -> Optional[type[BaseModel]]:
    model: Optional[type[BaseModel]] = StackConfig
    for part in location:
        if model is None or isinstance(part, int):
            return None
        field = next(
            (f for name, f in model.model_fields.items() if part in (name, f.alias)),
            None,
        )
        annotation = field.annotation if field else None
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    return model


def select_zones(config: StackConfig, region_zones: Sequence[str]) -> list[str]:
    """The VPC's zones: the first `network.availabilityZones` of the region, by name. The
    NodePool's zones, when set, must be among them (Karpenter launches into the VPC's subnets)."""
    wanted = config.network.availability_zones
    if len(region_zones) < wanted:
        raise StackConfigError(
            [f"`network.availabilityZones` is {wanted} but {config.region} has only {len(region_zones)} "
             f"available zones ({', '.join(sorted(region_zones))})"]
        )
    zones = sorted(region_zones)[:wanted]
    outside = [zone for zone in config.node_pool.zones or () if zone not in zones]
    if outside:
        raise StackConfigError(
            [f"`nodePool.zones`: {', '.join(outside)} not among the VPC's zones ({', '.join(zones)}); "
             "raise network.availabilityZones or choose among those"]
        )
    return zones
