"""Conventions shared by every section of the stack configuration."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ConfigSection(BaseModel):
    """A section of `Pulumi.<stack>.yaml`.

    Keys are camelCase in YAML (`minSize`), snake_case in Python (`min_size`).
    Unknown keys are rejected so that a typo such as `nodeGroup.minSise` stops
    the program instead of silently falling back to a default. Values are not
    coerced between types ("2" is not an int) so that a wrong type is reported.

    Sections are validated from JSON text (`model_validate_json`), which is how
    Pulumi hands structured config to the program; in that mode YAML lists are
    accepted for tuple fields.
    """

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        strict=True,
    )
