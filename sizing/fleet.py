"""The cheapest fleet for a set of pending pods, from the bin-packing solver.

Bins are the NodePool's instance types with room = allocatable - DaemonSet
overhead (cpu m, memory MiB, pod slots) and cost = price per hour. A pod
that may only run on some nodes (instance constraint, zone, capacity type)
gets an extra dimension of its own: it uses 1 of it, and a node offers it
only where the pod may run. Nodes are split by zone or capacity type only
when some pod tells them apart.

The solver is imported when first needed, so the rest of the planner works
without it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from types import MappingProxyType
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from sizing.errors import SizingInputError
from sizing.model import BinType, ItemType, Problem, Solution
from sizing.simulation import NodeOption, PodGroup


@dataclass(frozen=True)
class FleetGroup:
    """`count` nodes of one instance type holding the same pods (workload -> pods per node)."""

    instance_type: str
    capacity_type: str
    zone: Optional[str]
    count: int
    price: float
    pods: Mapping[str, int]


@dataclass(frozen=True)
class OptimalFleet:
    """The solver's fleet: status "optimal" (proven) or "feasible" (best found in time).

    cost and lower_bound_cost per hour in the price unit; lower_bound_nodes:
    fewest nodes any fleet needs.
    """

    status: str
    cost: float
    node_count: int
    lower_bound_cost: float
    lower_bound_nodes: int
    groups: Tuple[FleetGroup, ...]
    seconds: float

    @property
    def instance_types(self) -> Tuple[str, ...]:
        return tuple(sorted({group.instance_type for group in self.groups}))


@dataclass(frozen=True)
class _Bin:
    option: NodeOption
    capacity_type: str
    zone: Optional[str]

    @property
    def name(self) -> str:
        return "|".join([self.option.name, self.capacity_type, self.zone or ""])


def _split_values(groups: Sequence[PodGroup], attribute: str, pool_values) -> List[Optional[str]]:
    """The values nodes must be told apart by, or [None] when no pod cares."""
    if pool_values is None:
        return [None]
    pool = frozenset(pool_values)
    if any(getattr(g, attribute) is not None and not pool <= getattr(g, attribute) for g in groups):
        return sorted(pool)
    return [None]


def _admits(group: PodGroup, bin_: _Bin) -> bool:
    if group.allowed_types is not None and bin_.option.name not in group.allowed_types:
        return False
    if group.zones is not None and bin_.zone is not None and bin_.zone not in group.zones:
        return False
    if group.capacity_types is not None and bin_.capacity_type not in group.capacity_types:
        return False
    return True


def _cheapest_capacity_type(option: NodeOption, capacity_types: Sequence[str]) -> str:
    return min(capacity_types, key=lambda kind: (option.price_for(kind), kind))


def build_problem(
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: Optional[FrozenSet[str]],
    capacity_types: Sequence[str],
    time_limit_seconds: float,
) -> Tuple[Problem, Dict[str, _Bin]]:
    """The solver's problem for these pods, and its bin names -> what they stand for."""
    groups = [g for g in groups if g.count > 0]
    usable_types = [kind for kind in capacity_types if kind != "reserved"] or ["on-demand"]
    zone_split = _split_values(groups, "zones", zones)
    kind_split = _split_values(groups, "capacity_types", usable_types)
    bins: List[_Bin] = []
    for option in options:
        room = option.room
        if room.cpu < 0 or room.memory < 0 or room.pods < 1:
            continue
        for kind in kind_split:
            for zone in zone_split:
                bins.append(_Bin(option, kind or _cheapest_capacity_type(option, usable_types), zone))
    # One extra dimension per distinct set of nodes some pods are confined to.
    restricted: Dict[FrozenSet[str], str] = {}
    group_dimension: Dict[int, str] = {}
    for index, group in enumerate(groups):
        admitted = frozenset(b.name for b in bins if _admits(group, b))
        if len(admitted) == len(bins):
            continue
        if not admitted:
            raise SizingInputError(f"workload {group.workload!r}: no instance type of the NodePool may run its pods")
        restricted.setdefault(admitted, f"fits-{len(restricted)}")
        group_dimension[index] = restricted[admitted]
    bin_types = []
    by_name = {}
    for b in bins:
        room = b.option.room
        capacity = {"cpu": room.cpu, "memory": room.memory, "pods": room.pods}
        for admitted, dimension in restricted.items():
            capacity[dimension] = room.pods if b.name in admitted else 0
        bin_types.append(BinType(b.name, MappingProxyType(capacity), b.option.price_for(b.capacity_type)))
        by_name[b.name] = b
    items = []
    for index, group in enumerate(groups):
        size = {"cpu": group.requests.cpu, "memory": group.requests.memory, "pods": group.requests.pods}
        if index in group_dimension:
            size[group_dimension[index]] = 1
        items.append(ItemType(f"{index}", MappingProxyType(size), group.count))
    return Problem(tuple(bin_types), tuple(items), time_limit_seconds), by_name


def solver_available() -> bool:
    """Whether the bin-packing solver can be imported."""
    return importlib.util.find_spec("sizing.solver") is not None


def optimal_fleet(
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: Optional[FrozenSet[str]] = None,
    capacity_types: Sequence[str] = ("on-demand",),
    time_limit_seconds: float = 5.0,
) -> OptimalFleet:
    """The cheapest fleet the solver finds for `groups` within `time_limit_seconds`."""
    from sizing.solver import solve

    live = [g for g in groups if g.count > 0]
    problem, bins = build_problem(options, live, zones, capacity_types, time_limit_seconds)
    if not live:
        return OptimalFleet("optimal", 0.0, 0, 0.0, 0, (), 0.0)
    solution: Solution = solve(problem)
    if solution.status == "infeasible":
        raise SizingInputError(f"the pods fit no fleet of the NodePool's instance types: {solution.reason}")
    fleet_groups = []
    for bin_group in solution.bins:
        b = bins[bin_group.bin_type]
        pods: Dict[str, int] = {}
        for item_name, count in bin_group.items.items():
            workload = live[int(item_name)].workload
            pods[workload] = pods.get(workload, 0) + count
        fleet_groups.append(
            FleetGroup(
                instance_type=b.option.name,
                capacity_type=b.capacity_type,
                zone=b.zone,
                count=bin_group.count,
                price=b.option.price_for(b.capacity_type),
                pods=MappingProxyType(pods),
            )
        )
    fleet_groups.sort(key=lambda g: (g.instance_type, g.zone or "", -g.count))
    return OptimalFleet(
        status=solution.status,
        cost=solution.cost,
        node_count=solution.bin_count,
        lower_bound_cost=solution.lower_bound.cost,
        lower_bound_nodes=solution.lower_bound.bins,
        groups=tuple(fleet_groups),
        seconds=solution.seconds,
    )
