"""Values Kubernetes accepts, or a careless manifest carries, that are almost surely mistakes: the
plan goes on with them as written, and the report warns, naming the object, the field and the value.

- a memory quantity in millibytes (`memory: 1000m` is one byte; `m` is a thousandth, not "mega"),
  or of less than one MiB (`memory: 512` is 512 bytes): the planner rounds either up to 1 MiB;
- a label value longer than the 63 characters Kubernetes allows (the API server refuses it), in
  an object's or its pod template's labels or a pod's `nodeSelector`.

Each warning echoes the value cut (`sizing.errors.echo`), and at most `MAX_DOUBTFUL` are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sizing.errors import SizingInputError, echo
from sizing.kube.quantities import MEMORY_FORMS, parse_quantity

MAX_LABEL_VALUE = 63
MAX_DOUBTFUL = 50
_BYTES_PER_MIB = 1024 * 1024
_CONTAINER_LISTS = ("containers", "initContainers")
MEMORY_WARNING = "a memory quantity below one MiB, almost surely a mistake (planned as 1 MiB)"
LABEL_WARNING = f"a label value longer than the {MAX_LABEL_VALUE} characters Kubernetes allows"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _memory_fields(pod: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for list_name in _CONTAINER_LISTS:
        containers = pod.get(list_name)
        for index, container in enumerate(containers if isinstance(containers, list) else []):
            resources = _mapping(_mapping(container).get("resources"))
            for section in ("requests", "limits"):
                value = _mapping(resources.get(section)).get("memory")
                if value is not None:
                    yield f"{list_name}[{index}].resources.{section}.memory", value
    resources = _mapping(pod.get("resources"))
    for section in ("requests", "limits"):
        value = _mapping(resources.get(section)).get("memory")
        if value is not None:
            yield f"resources.{section}.memory", value
    overhead = _mapping(pod.get("overhead")).get("memory")
    if overhead is not None:
        yield "overhead.memory", overhead


def _memory_doubt(value: Any) -> str | None:
    """Why a memory quantity is almost surely a mistake, None when it is not (or it cannot be read,
    which the reader refuses on its own)."""
    try:
        amount = parse_quantity(value, "memory", MEMORY_FORMS)
    except SizingInputError:
        return None
    if not 0 < amount < _BYTES_PER_MIB:
        return None
    text = str(value).strip()
    size = f"{int(amount):,}" if amount == int(amount) else f"{float(amount):g}"
    size += " byte" if amount == 1 else " bytes"
    if text.endswith("m"):
        return f"{size}: 'm' is a thousandth, not mega; write Mi or M"
    if text.replace(".", "", 1).isdigit():
        return f"{size}: a number without a suffix is bytes; write Mi or Gi"
    return size


def _label_fields(where: str, labels: Any) -> Iterator[tuple[str, Any]]:
    for key, value in _mapping(labels).items():
        yield f"{where}[{echo(str(key), 40)}]", value


def doubtful_values(document: Mapping[str, Any], what: str) -> list[tuple[str, str]]:
    """(warning, "object: field = value (why)") for each value of a workload or DaemonSet that is
    almost surely a mistake (see the module docstring)."""
    found: list[tuple[str, str]] = []
    spec = _mapping(document.get("spec"))
    template = _mapping(spec.get("template"))
    pod = _mapping(template.get("spec"))
    for field, value in _memory_fields(pod):
        why = _memory_doubt(value)
        if why is not None:
            found.append((MEMORY_WARNING, f"{what}: spec.template.spec.{field} = {echo(value)} ({why})"))
    labelled = [
        ("metadata.labels", _mapping(document.get("metadata")).get("labels")),
        ("spec.template.metadata.labels", _mapping(template.get("metadata")).get("labels")),
        ("spec.template.spec.nodeSelector", pod.get("nodeSelector")),
    ]
    for where, labels in labelled:
        for field, value in _label_fields(where, labels):
            if isinstance(value, str) and len(value) > MAX_LABEL_VALUE:
                found.append(
                    (LABEL_WARNING, f"{what}: {field} = {echo(value, 30)} (the API server refuses such an object)")
                )
    return found
