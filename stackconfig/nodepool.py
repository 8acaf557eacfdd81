"""The `nodePool` section: the Karpenter NodePool that runs the test workload.

The defaults reproduce the reference Provisioner (m5.large on-demand,
ttlSecondsAfterEmpty 30, ttlSecondsUntilExpired 900) in the Karpenter v1 API
and equal the values written in `manifests/karpenter/nodepool.yaml`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import field_validator, model_validator

from sizing.errors import SizingInputError
from sizing.karpenter.requirements import Requirement, parse_requirements
from stackconfig.app import DNS_LABEL, MAX_LABEL_LENGTH, positive_quantity
from stackconfig.base import ConfigSection
from stackconfig.errors import StackConfigError

ZONE_KEY = "topology.kubernetes.io/zone"
# The operators of a NodePool requirement (Karpenter's NodeSelectorRequirement).
RequirementOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]
# Karpenter's own duration pattern for consolidateAfter and expireAfter.
DURATION_OR_NEVER = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
BUDGET_DURATION = re.compile(r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")
BUDGET_SCHEDULE = re.compile(
    r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
)
ZONE_SHAPE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")


class RequirementConfig(ConfigSection):
    """One NodePool requirement, as in `spec.template.spec.requirements`."""

    key: str
    operator: RequirementOperator
    values: tuple[str, ...] = ()
    min_values: int | None = None

    def to_dict(self) -> dict:
        """The NodePool form of this requirement."""
        return Requirement(self.key, self.operator, tuple(self.values), self.min_values).to_dict()


class BudgetConfig(ConfigSection):
    """A disruption budget: at most `nodes` (count or percent) disrupted at once."""

    nodes: str
    reasons: tuple[Literal["Underutilized", "Empty", "Drifted"], ...] | None = None
    schedule: str | None = None
    duration: str | None = None

    @field_validator("nodes")
    @classmethod
    def _nodes_shape(cls, value: str) -> str:
        if not BUDGET_NODES.match(value):
            raise ValueError(f'nodes {value!r} must be a node count such as "1" or a percentage such as "10%"')
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule_shape(cls, value: str | None) -> str | None:
        if value is not None and not BUDGET_SCHEDULE.match(value):
            raise ValueError(f"schedule {value!r} must be a cron expression (5 fields) or a macro such as @daily")
        return value

    @field_validator("duration")
    @classmethod
    def _duration_shape(cls, value: str | None) -> str | None:
        if value is not None and not BUDGET_DURATION.match(value):
            raise ValueError(f"duration {value!r} must be in hours and minutes, such as 30m, 8h or 1h30m")
        return value

    @model_validator(mode="after")
    def _schedule_with_duration(self) -> BudgetConfig:
        if (self.schedule is None) != (self.duration is None):
            raise ValueError("schedule and duration must be set together (a schedule opens a window of duration)")
        return self

    def to_dict(self) -> dict:
        obj: dict = {"nodes": self.nodes}
        if self.reasons is not None:
            obj["reasons"] = list(self.reasons)
        if self.schedule is not None:
            obj["schedule"] = self.schedule
            obj["duration"] = self.duration
        return obj


# Empty nodes carry no pods, so all may go at once; drift and underutilisation move
# running pods, so one node at a time keeps the app serving.
DEFAULT_BUDGETS = (
    BudgetConfig(nodes="100%", reasons=("Empty",)),
    BudgetConfig(nodes="1", reasons=("Drifted", "Underutilized")),
)


class NodePoolLimits(ConfigSection):
    """Overrides for the limits the program computes; unset fields keep the computed value."""

    cpu: str | None = None
    memory: str | None = None

    @field_validator("cpu", "memory", mode="before")
    @classmethod
    def _number_as_quantity(cls, value: object) -> object:
        # A NodePool takes `cpu: 16` as readily as `cpu: "16"`: a plain number is a quantity.
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("cpu", "memory")
    @classmethod
    def _is_quantity(cls, value: str | None) -> str | None:
        return None if value is None else positive_quantity(value)

    def given(self) -> dict[str, str]:
        """The limits set here, by resource (`spec.limits` keys)."""
        return {key: value for key, value in (("cpu", self.cpu), ("memory", self.memory)) if value}


class NodePoolConfig(ConfigSection):
    """The Karpenter NodePool of the test workload.

    `requirements`, when set, replace the preset's; zones are never given there
    but through `zones` (None: the VPC's zones).
    """

    name: str = "test-app"
    preset: Literal["reference", "spot"] = "reference"
    requirements: tuple[RequirementConfig, ...] | None = None
    zones: tuple[str, ...] | None = None
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] = "WhenEmpty"
    consolidate_after: str = "30s"
    expire_after: str = "15m"
    budgets: tuple[BudgetConfig, ...] = DEFAULT_BUDGETS
    limits: NodePoolLimits | None = None
    acknowledge_limits_below_peak: bool = False
    weight: int | None = None

    @field_validator("name")
    @classmethod
    def _name_is_label_value(cls, value: str) -> str:
        # The name becomes the value of the node label karpenter.sh/nodepool.
        if len(value) > MAX_LABEL_LENGTH or not DNS_LABEL.match(value):
            raise ValueError(
                f"{value!r} is not a NodePool name: 1 to 63 lowercase letters, digits or '-', "
                "starting and ending with a letter or digit"
            )
        return value

    @field_validator("requirements")
    @classmethod
    def _requirements_are_valid(
        cls, value: tuple[RequirementConfig, ...] | None
    ) -> tuple[RequirementConfig, ...] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("requirements is empty; list at least one requirement or leave it unset to use the preset")
        for index, requirement in enumerate(value):
            if requirement.key == ZONE_KEY:
                raise ValueError(
                    f"requirements[{index}]: set zones with nodePool.zones, not with a {ZONE_KEY} requirement"
                )
        check_requirements([requirement.to_dict() for requirement in value])
        return value

    @field_validator("zones")
    @classmethod
    def _zones_are_named(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("zones is empty; list at least one zone, or leave it unset to use the VPC's zones")
        for zone in value:
            if not ZONE_SHAPE.match(zone):
                raise ValueError(f"{zone!r} is not an availability zone name such as ap-northeast-1a")
        if len(set(value)) != len(value):
            raise ValueError(f"zones {list(value)} lists a zone twice")
        return value

    @field_validator("consolidate_after", "expire_after")
    @classmethod
    def _is_duration(cls, value: str) -> str:
        if not DURATION_OR_NEVER.match(value):
            raise ValueError(f"{value!r} must be a duration such as 30s, 15m or 1h30m, or Never")
        return value

    @field_validator("budgets")
    @classmethod
    def _budget_count(cls, value: tuple[BudgetConfig, ...]) -> tuple[BudgetConfig, ...]:
        if len(value) > 50:
            raise ValueError(f"budgets lists {len(value)} budgets; Karpenter accepts at most 50")
        return value

    @field_validator("weight")
    @classmethod
    def _weight_in_range(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 100:
            raise ValueError(f"weight must be from 1 to 100 (or unset), got {value}")
        return value


def check_requirements(requirement_dicts: list[dict]) -> None:
    """Key and operator checks, shared with the sizing library so both accept the same lists."""
    try:
        parse_requirements(requirement_dicts, where="requirements")
    except SizingInputError as error:
        raise ValueError(str(error)) from None


def validate_zones(zones: Sequence[str], region: str) -> tuple[str, ...]:
    """Check that every zone of `nodePool.zones` lies in `region` (e.g. ap-northeast-1a in ap-northeast-1)."""
    shape = re.compile(rf"^{re.escape(region)}[a-z]$")
    foreign = [zone for zone in zones if not shape.match(zone)]
    if foreign:
        raise StackConfigError(
            [
                f"nodePool.zones: {foreign} are not zones of the region {region}; "
                f"use zones named {region} followed by one letter, such as {region}a"
            ]
        )
    return tuple(zones)
