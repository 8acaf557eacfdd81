"""A bin-packing problem in the numeric form the solver works on.

Items of identical size are merged into one *shape* (their names are kept to
split the shape's count back out), dimensions are put in sorted order, and a
dimension a bin type does not limit gets a capacity no packing can exhaust:
the total demand in that dimension (at least 1). Sizes and capacities are
integers in the problem's own units (millicores, MiB, pod slots, ...).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sizing.binpack.model import Problem
from sizing.errors import SizingInputError

# Large enough for any real fleet, small enough that sums of sizes times
# counts stay exact in 64-bit integers and in the LP solver's doubles.
MAX_QUANTITY = 10**12
MAX_COUNT = 10**7
MAX_DIMENSION_TOTAL = 2**53
# Costs are looked at on a grid of 1e-6 (prices have at most 6 decimals) to find a common step.
COST_GRID = 10**6


@dataclass(frozen=True)
class Instance:
    """Bin types t = 0..T-1 and item shapes i = 0..M-1 over dimensions d = 0..D-1.

    capacity[t, d]: room of one bin of type t (unlimited dimensions hold the total demand);
    limited[t, d]: whether bin type t names dimension d at all;
    cost[t]: price of one bin of type t (> 0, in the problem's unit: USD/hour here);
    max_count[t]: most bins of type t, None for unlimited;
    sizes[i, d]: size of one item of shape i; demand[i]: how many items of shape i;
    members[i]: the (item name, count) pairs merged into shape i, in input order.
    """

    dimensions: tuple[str, ...]
    bin_names: tuple[str, ...]
    capacity: np.ndarray
    limited: np.ndarray
    cost: np.ndarray
    max_count: tuple[int | None, ...]
    sizes: np.ndarray
    demand: np.ndarray
    members: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def type_count(self) -> int:
        return len(self.bin_names)

    @property
    def shape_count(self) -> int:
        return int(self.sizes.shape[0])

    def fit_counts(self, type_index: int) -> np.ndarray:
        """How many items of each shape fit alone in an empty bin of the type (capped by demand)."""
        return fit_counts(self.capacity[type_index], self.sizes, self.demand)

    def typical_items_per_bin(self) -> float:
        """How many average items fill the largest bin type, in its tightest dimension.

        It tells bins that hold a handful of items (where patterns can be listed and LP
        rounding is coarse) from bins that hold dozens (where rounding loses little).
        """
        total = float(self.demand.sum())
        if total == 0:
            return 0.0
        mean = (self.demand @ self.sizes) / total
        best = 0.0
        for t in range(self.type_count):
            ratios = [self.capacity[t, d] / mean[d] for d in range(len(self.dimensions)) if mean[d] > 0]
            best = max(best, min(ratios) if ratios else total)
        return best

    def count_limits(self) -> np.ndarray:
        """Max count per bin type as column generation and the master LP take it: -1 for unlimited."""
        return np.array([-1 if m is None else m for m in self.max_count], dtype=np.int64)

    def unit_cost(self) -> float | None:
        """The common cost when every bin type costs the same, else None."""
        first = float(self.cost[0])
        return first if all(float(c) == first for c in self.cost) else None

    def cost_step(self) -> float | None:
        """The largest g with every cost a whole multiple of g, so every packing costs a multiple
        of g: the common cost if all are equal, else found on a grid of 1e-6; None if off the grid."""
        unit = self.unit_cost()
        if unit is not None:
            return unit
        scaled = [float(c) * COST_GRID for c in self.cost]
        whole = [round(c) for c in scaled]
        # Off the grid by more than rounding in the scaling could explain.
        if any(w < 1 or abs(w - c) > 1e-6 + 1e-15 * c for w, c in zip(whole, scaled, strict=True)):
            return None
        return math.gcd(*whole) / COST_GRID


def fit_counts(room: np.ndarray, sizes: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Per shape, min(limit, how many items fit in `room`), computed dimension by dimension."""
    counts = np.asarray(limit, dtype=np.int64).copy()
    for d in range(sizes.shape[1]):
        positive = sizes[:, d] > 0
        if positive.any():
            counts[positive] = np.minimum(counts[positive], room[d] // sizes[positive, d])
    return np.maximum(counts, 0)


def _check_quantity(value: object, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SizingInputError(f"{where} must be an integer, got {value!r}")
    if not minimum <= value <= MAX_QUANTITY:
        raise SizingInputError(f"{where} must be between {minimum} and {MAX_QUANTITY}, got {value}")
    return int(value)


def _check_names(kind: str, names: Iterable[object]) -> None:
    seen: set[object] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise SizingInputError(f"every {kind} needs a non-empty name, got {name!r}")
        if name in seen:
            raise SizingInputError(f"{kind} name {name!r} appears more than once")
        seen.add(name)


def build_instance(problem: Problem) -> Instance:
    """Validate `problem` and convert it; raises SizingInputError naming the bad field.

    A capacity of 0 is allowed here (callers use it to keep items off some bin
    types); an item that fits no bin type is not an error at this level.
    """
    if not problem.bin_types:
        raise SizingInputError("there must be at least one bin type")
    _check_names("bin type", [b.name for b in problem.bin_types])
    _check_names("item", [i.name for i in problem.items])
    cap = problem.time_limit_seconds
    if cap is not None and not (isinstance(cap, (int, float)) and cap > 0 and math.isfinite(cap)):
        raise SizingInputError(f"the time limit must be a positive number of seconds or unset, got {cap!r}")
    limit = problem.work_limit
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise SizingInputError(f"the work limit must be a positive integer (units of solver work), got {limit!r}")

    dimension_set: set[str] = set()
    for bin_type in problem.bin_types:
        dimension_set.update(bin_type.capacity)
    for item in problem.items:
        dimension_set.update(item.size)
    dimensions = tuple(sorted(dimension_set))

    for bin_type in problem.bin_types:
        where = f"bin type {bin_type.name!r}"
        for dim, value in bin_type.capacity.items():
            _check_quantity(value, f"{where}: capacity {dim!r}", 0)
        cost = bin_type.cost
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost <= 0:
            raise SizingInputError(f"{where}: cost must be a positive number, got {cost!r}")
        max_count = bin_type.max_count
        if max_count is not None and (isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0):
            raise SizingInputError(f"{where}: max count must be a non-negative integer or None, got {max_count!r}")

    merged: dict[tuple[int, ...], list[tuple[str, int]]] = {}
    for item in problem.items:
        where = f"item {item.name!r}"
        for dim, value in item.size.items():
            _check_quantity(value, f"{where}: size {dim!r}", 0)
        if isinstance(item.count, bool) or not isinstance(item.count, int) or not 0 <= item.count <= MAX_COUNT:
            raise SizingInputError(f"{where}: count must be an integer between 0 and {MAX_COUNT}, got {item.count!r}")
        if item.count == 0:
            continue
        key = tuple(int(item.size.get(dim, 0)) for dim in dimensions)
        merged.setdefault(key, []).append((item.name, item.count))

    shape_keys = sorted(merged)
    sizes = np.array(shape_keys, dtype=np.int64).reshape(len(shape_keys), len(dimensions))
    demand = np.array([sum(c for _, c in merged[key]) for key in shape_keys], dtype=np.int64)
    totals = [
        int(sum(int(s) * int(n) for s, n in zip(sizes[:, d], demand, strict=True))) for d in range(len(dimensions))
    ]
    for dim, total in zip(dimensions, totals, strict=True):
        if total > MAX_DIMENSION_TOTAL:
            raise SizingInputError(f"the items need {total} {dim} in total; at most {MAX_DIMENSION_TOTAL} is supported")

    capacity = np.array(
        [
            [int(b.capacity[dim]) if dim in b.capacity else max(1, totals[d]) for d, dim in enumerate(dimensions)]
            for b in problem.bin_types
        ],
        dtype=np.int64,
    ).reshape(len(problem.bin_types), len(dimensions))
    return Instance(
        dimensions=dimensions,
        bin_names=tuple(b.name for b in problem.bin_types),
        capacity=capacity,
        limited=np.array([[dim in b.capacity for dim in dimensions] for b in problem.bin_types], dtype=bool).reshape(
            len(problem.bin_types), len(dimensions)
        ),
        cost=np.array([float(b.cost) for b in problem.bin_types]),
        max_count=tuple(b.max_count for b in problem.bin_types),
        sizes=sizes,
        demand=demand,
        members=tuple(tuple(merged[key]) for key in shape_keys),
    )


def describe_unfit(instance: Instance, shape: int) -> str:
    """Why items of `shape` fit no bin type, naming the item and a dimension."""
    name = instance.members[shape][0][0]
    size = instance.sizes[shape]
    for d, dim in enumerate(instance.dimensions):
        if instance.limited[:, d].all() and size[d] > instance.capacity[:, d].max():
            return f"item {name!r} needs {int(size[d])} {dim} but the largest bin type offers {int(instance.capacity[:, d].max())}"
    shortfalls = []
    for t, bin_name in enumerate(instance.bin_names):
        lacking = [d for d in range(len(instance.dimensions)) if size[d] > instance.capacity[t, d]]
        d = lacking[0]
        shortfalls.append(
            f"{bin_name!r} offers {int(instance.capacity[t, d])} {instance.dimensions[d]} (needs {int(size[d])})"
        )
    shown = "; ".join(shortfalls[:3]) + ("; ..." if len(shortfalls) > 3 else "")
    return f"item {name!r} fits no bin type in every dimension at once: {shown}"


def undominated_types(instance: Instance) -> tuple[int, ...]:
    """Bin types worth considering: drop unusable ones (max count 0) and those another unlimited
    type dominates (at least as much room in every dimension for no more cost; among identical
    types the first stays). Dropping them never raises the optimal cost."""
    unlimited = np.array([m is None for m in instance.max_count])
    index = np.arange(instance.type_count)
    keep = []
    for t in range(instance.type_count):
        if instance.max_count[t] == 0:
            continue
        roomier = (instance.capacity >= instance.capacity[t]).all(axis=1) & (instance.cost <= instance.cost[t])
        strictly = (instance.cost < instance.cost[t]) | (instance.capacity > instance.capacity[t]).any(axis=1)
        if not (roomier & unlimited & (index != t) & (strictly | (index < t))).any():
            keep.append(t)
    return tuple(keep)


def restrict_types(instance: Instance, types: tuple[int, ...]) -> Instance:
    """The same items with only the given bin types (in that order)."""
    index = np.array(types, dtype=np.int64)
    return Instance(
        dimensions=instance.dimensions,
        bin_names=tuple(instance.bin_names[t] for t in types),
        capacity=instance.capacity[index],
        limited=instance.limited[index],
        cost=instance.cost[index],
        max_count=tuple(instance.max_count[t] for t in types),
        sizes=instance.sizes,
        demand=instance.demand,
        members=instance.members,
    )
