"""The JSON form of a bin-packing problem and of its solution.

Problem (every field checked; unknown fields are errors):

    {"binTypes": [{"name": "m5.large", "capacity": {"cpu": 1930, "memory": 6903, "pods": 29},
                   "cost": 0.096, "max": null}],
     "items": [{"name": "web", "size": {"cpu": 100, "memory": 128, "pods": 1}, "count": 10}],
     "workLimit": 2000}

Capacities are integers >= 1 (leave a dimension out to make it unlimited), sizes
and counts integers >= 0, costs numbers > 0, "max" a count >= 0 or null (the
default), "workLimit" an integer >= 1 (units of solver work, default 2000: the
result is the same on any machine) and "timeLimitSeconds" an optional wall-clock
cap > 0 (results cut by it depend on the machine). A dimension an item
does not name counts as 0 for it.

Solution: status, cost, binCount, lowerBound {cost, bins}, bins [{type, count,
items}], seconds, work, and reason when infeasible. Costs are rounded to 6 decimals;
a lower bound that is not met is rounded down, so it stays a lower bound.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Dict, List, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from sizing.errors import SizingInputError
from sizing.binpack.instance import MAX_COUNT, MAX_QUANTITY
from sizing.binpack.model import DEFAULT_WORK_LIMIT, BinType, ItemType, Problem, Solution

COST_DECIMALS = 6


Capacity = Annotated[int, Field(ge=1, le=MAX_QUANTITY)]
Size = Annotated[int, Field(ge=0, le=MAX_QUANTITY)]
DimensionName = Annotated[str, Field(min_length=1)]


class _BinTypeDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    capacity: Dict[DimensionName, Capacity]
    cost: float = Field(gt=0, allow_inf_nan=False)
    max: Optional[int] = Field(default=None, ge=0)


class _ItemDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    size: Dict[DimensionName, Size]
    count: int = Field(ge=0, le=MAX_COUNT)


class _ProblemDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    binTypes: List[_BinTypeDocument] = Field(min_length=1)
    items: List[_ItemDocument]
    timeLimitSeconds: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)
    workLimit: int = Field(default=DEFAULT_WORK_LIMIT, ge=1)

    @model_validator(mode="after")
    def _unique_names(self) -> "_ProblemDocument":
        for field, names in (("binTypes", [b.name for b in self.binTypes]), ("items", [i.name for i in self.items])):
            seen: Dict[str, int] = {}
            for index, name in enumerate(names):
                if name in seen:
                    raise ValueError(f"{field}[{index}].name: {name!r} is already the name of {field}[{seen[name]}]")
                seen[name] = index
        return self


def _location(loc: Sequence[Union[int, str]]) -> str:
    """('binTypes', 0, 'capacity', 'cpu') -> 'binTypes[0].capacity.cpu'; odd keys in brackets."""
    path = ""
    for part in loc:
        if part == "[key]":
            path += " (a key)"
        elif isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).isidentifier():
            path += f"[{str(part)!r}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _describe(error: ErrorDetails) -> str:
    where = _location(error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"{where}: is required"
    if kind == "extra_forbidden":
        return f"{where}: is not a known field"
    message = error["msg"]
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    return f"{where}: {message[0].lower()}{message[1:]}, got {error.get('input')!r}"


class _NonFiniteNumber(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonFiniteNumber(name)


def problem_from_json(text: str, source: str = "problem") -> Problem:
    """Parse and check a problem document; SizingInputError names the first bad field."""
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except _NonFiniteNumber as error:
        raise SizingInputError(f"{source}: {error} is not a valid JSON number") from None
    except json.JSONDecodeError as error:
        raise SizingInputError(f"{source}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(document, dict):
        raise SizingInputError(f"{source}: must be a JSON object with binTypes and items, got {type(document).__name__}")
    try:
        parsed = _ProblemDocument.model_validate(document)
    except ValidationError as error:
        problems = error.errors()
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise SizingInputError(f"{source}: {_describe(problems[0])}{more}") from None
    return Problem(
        bin_types=tuple(BinType(b.name, dict(b.capacity), b.cost, b.max) for b in parsed.binTypes),
        items=tuple(ItemType(i.name, dict(i.size), i.count) for i in parsed.items),
        time_limit_seconds=parsed.timeLimitSeconds,
        work_limit=parsed.workLimit,
    )


def _rounded_down(value: float) -> float:
    scale: int = 10**COST_DECIMALS
    return math.floor(value * scale + 1e-6) / scale


def solution_to_json(solution: Solution) -> Dict[str, Any]:
    """The solution as a JSON-ready dict (see the module docstring)."""
    cost = round(solution.cost, COST_DECIMALS)
    bound = cost if solution.status == "optimal" else _rounded_down(solution.lower_bound.cost)
    document = {
        "status": solution.status,
        "cost": cost,
        "binCount": solution.bin_count,
        "lowerBound": {"cost": bound, "bins": solution.lower_bound.bins},
        "bins": [
            {"type": group.bin_type, "count": group.count, "items": {name: group.items[name] for name in sorted(group.items)}}
            for group in solution.bins
        ],
        "seconds": round(solution.seconds, 3),
        "work": solution.work,
    }
    if solution.reason is not None:
        document["reason"] = solution.reason
    return document
