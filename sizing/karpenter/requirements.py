"""Karpenter v1 NodePool requirements and the instance types, capacity types and zones they allow.

A requirement is a NodeSelectorRequirement `{key, operator, values, minValues?}`
from a NodePool's `spec.template.spec.requirements`. As in Karpenter, all
requirements must hold (several on one key intersect), a node without a label
satisfies NotIn and DoesNotExist but not In, Exists or a numeric comparison,
and Gt/Gte/Lt/Lte compare integer label values. Unlike Karpenter, a numeric
operator on a well-known key whose values are not integers is rejected rather
than left to match nothing, and minValues is checked only on instance-type keys.

What the NodePool CRD's validation rules refuse (`In` without values, a numeric
operator without a single non-negative integer, fewer `In` values than
minValues, a restricted key) is refused by those rules themselves, evaluated
(`sizing.karpenter.crd_rules`), with their message and the field path.

Keys: the instance-type labels of the catalog, capacity type and zone, and
custom labels (`sizing.karpenter.labels`): a requirement on a custom label,
such as `example.com/team In [web]`, narrows no instance type; it labels the
NodePool's nodes, for pods to select. Restricted keys and well-known labels the
catalog does not carry (`topology.kubernetes.io/region`,
`karpenter.k8s.aws/instance-local-nvme`, ...) are refused, naming the key.

Planning assumption on capacity types: Karpenter v1 has no implicit default,
so a NodePool without a `karpenter.sh/capacity-type` requirement may launch
spot (and reserved, with capacity reservations) as well as on-demand. The
planner treats such a NodePool as on-demand only: the catalog knows on-demand
prices only, and on-demand is the upper bound of what the nodes can cost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    LABEL_ARCH,
    LABEL_CATEGORY,
    LABEL_CPU,
    LABEL_FAMILY,
    LABEL_GENERATION,
    LABEL_GPU_COUNT,
    LABEL_HYPERVISOR,
    LABEL_INSTANCE_TYPE,
    LABEL_MEMORY,
    LABEL_OS,
    LABEL_SIZE,
    InstanceType,
)
from sizing.karpenter.crd_rules import REQUIREMENTS_PATH, check_part
from sizing.karpenter.labels import NORMALIZED, WELL_KNOWN, LabelRequirement, is_custom, merged, restriction, shown

CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
ZONE_KEY = "topology.kubernetes.io/zone"

INSTANCE_KEYS = (
    LABEL_INSTANCE_TYPE,
    LABEL_ARCH,
    LABEL_OS,
    LABEL_CATEGORY,
    LABEL_FAMILY,
    LABEL_GENERATION,
    LABEL_SIZE,
    LABEL_CPU,
    LABEL_MEMORY,
    LABEL_HYPERVISOR,
    LABEL_GPU_COUNT,
)
KNOWN_KEYS = INSTANCE_KEYS + (CAPACITY_TYPE_KEY, ZONE_KEY)
INTEGER_KEYS = (LABEL_GENERATION, LABEL_CPU, LABEL_MEMORY, LABEL_GPU_COUNT)

CAPACITY_TYPES = ("on-demand", "spot", "reserved")
PLANNING_DEFAULT_CAPACITY_TYPES = ("on-demand",)

SET_OPERATORS = ("In", "NotIn")
PRESENCE_OPERATORS = ("Exists", "DoesNotExist")
NUMERIC_OPERATORS = ("Gt", "Lt", "Gte", "Lte")
OPERATORS = SET_OPERATORS + PRESENCE_OPERATORS + NUMERIC_OPERATORS

MAX_MIN_VALUES = 50
_REQUIREMENT_FIELDS = ("key", "operator", "values", "minValues")
# Kubernetes label-value syntax, as in the NodePool CRD.
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_VALUE_MAX_LENGTH = 63
_NON_NEGATIVE_INTEGER = re.compile(r"^[0-9]+$")


@dataclass(frozen=True)
class Requirement:
    """One validated NodePool requirement; `values` are label values (strings)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None

    def admits(self, value: str | None) -> bool:
        """Whether a node whose label `key` has `value` (None: no such label) satisfies this."""
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        if value is None or not _NON_NEGATIVE_INTEGER.match(value):
            return False
        number, bound = int(value), int(self.values[0])
        return {
            "Gt": number > bound,
            "Gte": number >= bound,
            "Lt": number < bound,
            "Lte": number <= bound,
        }[self.operator]

    def describe(self) -> str:
        """Readable form, e.g. `karpenter.k8s.aws/instance-category In [c, m]`."""
        text = f"{self.key} {self.operator}"
        if self.operator in SET_OPERATORS:
            text += " [" + ", ".join(self.values) + "]"
        elif self.operator in NUMERIC_OPERATORS:
            text += f" {self.values[0]}"
        if self.min_values is not None:
            text += f" (minValues {self.min_values})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The NodePool form of this requirement."""
        obj: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            obj["values"] = list(self.values)
        if self.min_values is not None:
            obj["minValues"] = self.min_values
        return obj


def _label_values(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise SizingInputError(f"{where}.values must be a list of strings, got {raw!r}")
    values = []
    for index, value in enumerate(raw):
        # YAML turns `values: [5]` into an integer; its meaning is unambiguous, so accept it.
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise SizingInputError(f"{where}.values[{index}] must be a string, got {value!r}")
        values.append(value)
    return tuple(values)


def _check_label_value_syntax(values: tuple[str, ...], where: str) -> None:
    for index, value in enumerate(values):
        if len(value) > _LABEL_VALUE_MAX_LENGTH or not _LABEL_VALUE.match(value):
            raise SizingInputError(
                f"{where}.values[{index}] {value!r} is not a Kubernetes label value "
                f"(at most {_LABEL_VALUE_MAX_LENGTH} characters: letters, digits, '-', '_', '.', "
                "starting and ending with a letter or digit)"
            )


def parse_requirement(obj: Any, where: str = "requirements[0]") -> Requirement:
    """Validate one requirement dict `{key, operator, values?, minValues?}`: what the planner reads
    and models, then the rules the NodePool CRD sets on a requirement."""
    requirement = _parse_requirement(obj, where)
    check_part(obj, REQUIREMENTS_PATH, where, element=True)
    return requirement


def _parse_requirement(obj: Any, where: str) -> Requirement:
    if not isinstance(obj, Mapping):
        raise SizingInputError(f"{where} must be an object with key, operator and values, got {obj!r}")
    unknown = sorted(str(name) for name in obj if name not in _REQUIREMENT_FIELDS)
    if unknown:
        raise SizingInputError(f"{where}: unknown fields {unknown}; allowed fields are {list(_REQUIREMENT_FIELDS)}")
    key = obj.get("key")
    if key not in KNOWN_KEYS and not (isinstance(key, str) and is_custom(key)):
        # A key the CRD restricts is refused by its rule, in its words; any other, in the planner's.
        check_part(obj, REQUIREMENTS_PATH, where, element=True)
        raise SizingInputError(f"{where}.key {shown(key)} {_unsupported_key(key)}")
    custom = key not in KNOWN_KEYS
    where = f"{where} ({key})"
    operator = obj.get("operator")
    if operator not in OPERATORS:
        raise SizingInputError(
            f"{where}.operator {operator!r} is not supported; allowed operators are {list(OPERATORS)}"
        )
    values = _label_values(obj.get("values"), where)
    if operator == "NotIn" and not values:
        # The CRD takes it (NotIn of nothing excludes nothing); the planner asks for what is meant.
        raise SizingInputError(f"{where}: operator NotIn needs at least one value, got none")
    if operator in PRESENCE_OPERATORS and values:
        raise SizingInputError(f"{where}: operator {operator} takes no values, got {list(values)}")
    if operator in NUMERIC_OPERATORS and key not in INTEGER_KEYS and not custom:
        raise SizingInputError(
            f"{where}: operator {operator} compares integers; it applies to {list(INTEGER_KEYS)}, not {key}"
        )
    _check_label_value_syntax(values, where)
    if key == CAPACITY_TYPE_KEY:
        unknown_types = [value for value in values if value not in CAPACITY_TYPES]
        if unknown_types:
            raise SizingInputError(
                f"{where}: unknown capacity types {unknown_types}; allowed values are {list(CAPACITY_TYPES)}"
            )
    min_values = obj.get("minValues")
    if min_values is not None and (
        isinstance(min_values, bool) or not isinstance(min_values, int) or not 1 <= min_values <= MAX_MIN_VALUES
    ):
        raise SizingInputError(f"{where}.minValues must be an integer from 1 to {MAX_MIN_VALUES}, got {min_values!r}")
    return Requirement(key=key, operator=operator, values=values, min_values=min_values)


def _unsupported_key(key: Any) -> str:
    """Why a requirement key is refused, and what is allowed."""
    allowed = f"allowed keys are {list(KNOWN_KEYS)} and custom labels such as example.com/team"
    if not isinstance(key, str):
        return f"is not supported; {allowed}"
    reason = restriction(key)
    if reason is not None:
        return f"is not supported: {reason}; {allowed}"
    if key in NORMALIZED:
        return f"is the deprecated name of {NORMALIZED[key]!r}; use that key"
    if key in WELL_KNOWN:
        return (
            "is a label Karpenter derives from the instance type or its offering, which the planner's catalog "
            f"does not carry, so it cannot filter by it; {allowed}"
        )
    return f"is not supported; {allowed}"


def custom_label_requirements(requirements: Iterable[Requirement]) -> tuple[LabelRequirement, ...]:
    """The requirements on custom labels (one per key), which narrow no instance type but label the nodes."""
    return merged(
        LabelRequirement.of(requirement.key, requirement.operator, requirement.values)
        for requirement in requirements
        if requirement.key not in KNOWN_KEYS
    )


def parse_requirements(objs: Any, where: str = "requirements") -> tuple[Requirement, ...]:
    """Validate a NodePool's `spec.template.spec.requirements` list."""
    if not isinstance(objs, (list, tuple)):
        raise SizingInputError(f"{where} must be a list of requirements, got {type(objs).__name__}")
    requirements = tuple(_parse_requirement(obj, f"{where}[{index}]") for index, obj in enumerate(objs))
    check_part(list(objs), REQUIREMENTS_PATH, where)
    return requirements


def requirement_objects_from_document(document: Any, where: str = "document") -> Any:
    """The requirement list of a document that is either that list or a NodePool object."""
    if isinstance(document, list):
        return document
    if isinstance(document, Mapping):
        spec = document.get("spec")
        template = spec.get("template") if isinstance(spec, Mapping) else None
        template_spec = template.get("spec") if isinstance(template, Mapping) else None
        if isinstance(template_spec, Mapping) and "requirements" in template_spec:
            return template_spec["requirements"]
        raise SizingInputError(
            f"{where}: a NodePool object needs spec.template.spec.requirements; "
            f"found top-level keys {sorted(map(str, document))}"
        )
    raise SizingInputError(
        f"{where}: expected a list of requirements or a NodePool object, got {type(document).__name__}"
    )


def _describe_all(requirements: Iterable[Requirement]) -> str:
    return "; ".join(requirement.describe() for requirement in requirements) or "(none)"


def instance_requirements(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """The requirements on instance-type labels (not capacity type or zone)."""
    return tuple(requirement for requirement in requirements if requirement.key in INSTANCE_KEYS)


def instance_type_admitted(instance: InstanceType, requirements: Iterable[Requirement]) -> bool:
    """Whether `instance` satisfies every instance-level requirement."""
    labels = instance.labels()
    return all(requirement.admits(labels.get(requirement.key)) for requirement in instance_requirements(requirements))


def filter_instance_types(
    catalog: Iterable[InstanceType], requirements: Sequence[Requirement]
) -> tuple[InstanceType, ...]:
    """The catalog types a NodePool with these requirements may launch, in catalog order.

    Raises SizingInputError when none is left, or when fewer distinct values
    remain for a key than its requirement's minValues (Karpenter then launches
    nothing from the NodePool).
    """
    relevant = instance_requirements(requirements)
    admitted = tuple(instance for instance in catalog if instance_type_admitted(instance, relevant))
    if not admitted:
        raise SizingInputError(f"the NodePool requirements leave no instance type: {_describe_all(relevant)}")
    for requirement in relevant:
        if requirement.min_values is None:
            continue
        distinct = sorted(
            {instance.labels()[requirement.key] for instance in admitted if requirement.key in instance.labels()}
        )
        if len(distinct) < requirement.min_values:
            raise SizingInputError(
                f"the NodePool requirement {requirement.describe()} needs {requirement.min_values} distinct "
                f"values of {requirement.key}, but the requirements leave {len(distinct)} {distinct}: "
                f"{_describe_all(relevant)}"
            )
    return admitted


def allowed_capacity_types(requirements: Iterable[Requirement]) -> tuple[str, ...]:
    """Capacity types the NodePool allows, in the order on-demand, spot, reserved.

    Without any capacity-type requirement: on-demand only (see the module docstring).
    """
    relevant = tuple(requirement for requirement in requirements if requirement.key == CAPACITY_TYPE_KEY)
    if not relevant:
        return PLANNING_DEFAULT_CAPACITY_TYPES
    allowed = tuple(
        capacity_type
        for capacity_type in CAPACITY_TYPES
        if all(requirement.admits(capacity_type) for requirement in relevant)
    )
    if not allowed:
        raise SizingInputError(f"the NodePool requirements leave no capacity type: {_describe_all(relevant)}")
    return allowed


def allowed_zones(requirements: Iterable[Requirement], region_zones: Sequence[str]) -> tuple[str, ...]:
    """The zones of `region_zones` (in that order) the NodePool allows."""
    if isinstance(region_zones, str) or not all(isinstance(zone, str) and zone for zone in region_zones):
        raise SizingInputError(f"region_zones must be a list of zone names, got {region_zones!r}")
    relevant = tuple(requirement for requirement in requirements if requirement.key == ZONE_KEY)
    allowed = tuple(zone for zone in region_zones if all(requirement.admits(zone) for requirement in relevant))
    if not allowed:
        raise SizingInputError(
            f"the NodePool requirements leave no zone of {list(region_zones)}: {_describe_all(relevant)}"
        )
    return allowed
