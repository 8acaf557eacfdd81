"""Plain Python values from the protobuf structs the SDK sends, and back.

The stock mock monitor deserialises resource references on an executor thread,
which starts a `getResource` invoke on that thread's event loop and fails with
"attached to a different loop" whenever a resource object is an input. Decoding
the struct ourselves turns references into `ResourceRef` markers instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from offline.pulumi_internals import OUTPUT_VALUE_SIG, RESOURCE_SIG, SECRET_SIG, SIG_KEY
from offline.pulumi_internals import UNKNOWN as WIRE_UNKNOWN


@dataclass(frozen=True)
class ResourceRef:
    urn: str
    id: str | None = None


class Unknown:
    """A value the engine would only know after deployment."""

    def __repr__(self) -> str:
        return "<unknown>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unknown)

    def __hash__(self) -> int:
        return 0


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Secret:
    value: Any


def decode_struct(struct) -> dict:
    return {key: decode(value) for key, value in json_format.MessageToDict(struct).items()}


def decode(value: Any) -> Any:
    if isinstance(value, str):
        return UNKNOWN if value == WIRE_UNKNOWN else value
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        signature = value.get(SIG_KEY)
        if signature == RESOURCE_SIG:
            return ResourceRef(value["urn"], value.get("id") or None)
        if signature == SECRET_SIG:
            return Secret(decode(value.get("value")))
        if signature == OUTPUT_VALUE_SIG:
            if "value" not in value:
                return UNKNOWN
            inner = decode(value["value"])
            return Secret(inner) if value.get("secret") else inner
        return {key: decode(item) for key, item in value.items()}
    return value


def reveal(value: Any) -> Any:
    """The value with secrets unwrapped, for assertions."""
    if isinstance(value, Secret):
        return reveal(value.value)
    if isinstance(value, list):
        return [reveal(item) for item in value]
    if isinstance(value, dict):
        return {key: reveal(item) for key, item in value.items()}
    return value


def encode(value: Any) -> Any:
    """Back to what the SDK's `serialize_properties` turns into the wire form."""
    if isinstance(value, ResourceRef):
        reference = {SIG_KEY: RESOURCE_SIG, "urn": value.urn}
        if value.id is not None:
            reference["id"] = value.id
        return reference
    if isinstance(value, Unknown):
        return WIRE_UNKNOWN
    if isinstance(value, Secret):
        return {SIG_KEY: SECRET_SIG, "value": encode(value.value)}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    return value
