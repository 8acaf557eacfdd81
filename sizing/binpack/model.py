"""The bin-packing problem and its solution as plain data.

The solver is generic over resource dimensions: a dimension is any string
(in this project "cpu" in millicores, "memory" in MiB and "pods" as a count).
An item that does not name a dimension uses 0 of it; a bin type that does not
name a dimension has no limit in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple


@dataclass(frozen=True)
class BinType:
    """A kind of bin that may be opened any number of times (up to `max_count`).

    capacity: amount per dimension (integers, e.g. millicores, MiB, pod slots).
    cost: price of one open bin (USD/hour in this project).
    max_count: most bins of this type that may be opened; None for no limit.
    """

    name: str
    capacity: Mapping[str, int]
    cost: float
    max_count: Optional[int] = None


@dataclass(frozen=True)
class ItemType:
    """`count` identical items of the given size per dimension."""

    name: str
    size: Mapping[str, int]
    count: int


# Units of solver work (see `sizing.binpack.work`): about 2 s on a 2-core machine for a
# problem of a few dozen bin types.
DEFAULT_WORK_LIMIT = 2000


@dataclass(frozen=True)
class Problem:
    """work_limit: the search's budget in units of work, which makes the result the same on any
    machine; time_limit_seconds: an optional wall-clock safety cap (None: none), which does not.
    """

    bin_types: Tuple[BinType, ...]
    items: Tuple[ItemType, ...]
    time_limit_seconds: Optional[float] = None
    work_limit: int = DEFAULT_WORK_LIMIT


@dataclass(frozen=True)
class BinGroup:
    """`count` identical bins of type `bin_type`, each holding `items` (item name -> count)."""

    bin_type: str
    count: int
    items: Mapping[str, int]


@dataclass(frozen=True)
class LowerBound:
    cost: float
    bins: int


@dataclass(frozen=True)
class Solution:
    """status: "optimal" (cost equals a proven lower bound), "feasible" or "infeasible".

    For "infeasible", `reason` names the item and the dimension that fits no bin
    type and `bins` is empty.
    """

    status: str
    cost: float
    bin_count: int
    lower_bound: LowerBound
    bins: Tuple[BinGroup, ...] = field(default_factory=tuple)
    seconds: float = 0.0
    reason: Optional[str] = None
    work: float = 0.0
