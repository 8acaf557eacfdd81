"""The cheapest fleet for a set of pending pods, from the bin-packing solver.

Bins are the NodePool's instance types with room = allocatable - DaemonSet
overhead (cpu m, memory MiB, pod slots, and ephemeral storage MiB when some
pod requests it) and cost = price per hour. A pod
that may only run on some nodes (instance constraint, zone, capacity type)
gets an extra dimension of its own: it uses 1 of it, and a node offers it
only where the pod may run. Nodes are split by zone or capacity type only
when some pod tells them apart. A node costs its cheapest offering (capacity
type and zone) where it may be launched, and a type without an offering in a
zone or capacity type gets no bin there, as Karpenter launches none.

The solver is imported when first needed, so the rest of the planner works
without it. When a known fleet (Karpenter's, simulated) already costs no more
than a simple lower bound, that fleet is optimal and the solver is skipped.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

import numpy as np

from sizing.binpack.model import DEFAULT_WORK_LIMIT, BinType, ItemType, Problem, Solution
from sizing.errors import SizingInputError
from sizing.karpenter.simulation import CAPACITY_TYPE_PRIORITY, NodeOption, PodGroup, ProvisioningResult
from sizing.kube.resources import Resources


@dataclass(frozen=True)
class FleetGroup:
    """`count` nodes of one instance type holding the same pods (workload -> pods per node)."""

    instance_type: str
    capacity_type: str
    zone: str | None
    count: int
    price: float
    pods: Mapping[str, int]


@dataclass(frozen=True)
class OptimalFleet:
    """The solver's fleet: status "optimal" (proven) or "feasible" (best found within its work limit).

    cost and lower_bound_cost per hour in the price unit; lower_bound_nodes:
    fewest nodes any fleet needs; work: solver work spent (the same on any machine).
    """

    status: str
    cost: float
    node_count: int
    lower_bound_cost: float
    lower_bound_nodes: int
    groups: tuple[FleetGroup, ...]
    work: float

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(sorted({group.instance_type for group in self.groups}))


@dataclass(frozen=True)
class _Bin:
    option: NodeOption
    capacity_type: str
    zone: str | None
    price: float

    @property
    def name(self) -> str:
        return "|".join([self.option.name, self.capacity_type, self.zone or ""])


def _split_values(
    groups: Sequence[PodGroup], attribute: str, pool_values: Iterable[str] | None
) -> Sequence[str | None]:
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
    return group.capacity_types is None or bin_.capacity_type in group.capacity_types


def _cheapest_offering(
    option: NodeOption, capacity_types: Sequence[str], zones: frozenset[str] | None
) -> tuple[str, float] | None:
    """(capacity type, price) of the type's cheapest offering in `zones` (None: any), or None; of
    two equal prices spot, as Karpenter prefers it."""
    offers = [
        (
            price,
            CAPACITY_TYPE_PRIORITY.index(kind) if kind in CAPACITY_TYPE_PRIORITY else len(CAPACITY_TYPE_PRIORITY),
            kind,
        )
        for kind in capacity_types
        if (price := option.offered_price(kind, zones)) is not None
    ]
    if not offers:
        return None
    price, _, kind = min(offers)
    return kind, price


def _undominated(bin_types: list[BinType]) -> list[BinType]:
    """Drop bin types another one beats: at least as much room everywhere for no more cost.

    An optimal fleet never needs a dominated type (swap each such node for its
    dominator), and fewer types make the solver's work much smaller. Of two
    identical types the first is kept.
    """
    if len(bin_types) < 2:
        return bin_types
    dimensions = sorted({d for b in bin_types for d in b.capacity})
    room = np.array([[b.capacity.get(d, 0) for d in dimensions] for b in bin_types], dtype=np.int64)
    cost = np.array([b.cost for b in bin_types])
    order = np.arange(len(bin_types))
    # dominates[i, j]: type i makes type j unnecessary.
    at_least = (room[:, None, :] >= room[None, :, :]).all(axis=2) & (cost[:, None] <= cost[None, :])
    strictly = (room[:, None, :] > room[None, :, :]).any(axis=2) | (cost[:, None] < cost[None, :])
    dominates = at_least & (strictly | (order[:, None] < order[None, :]))
    np.fill_diagonal(dominates, False)
    # any() over an axis of a 2-D array is an array, never the scalar numpy's stubs allow.
    dominated: list[bool] = cast(np.ndarray, dominates.any(axis=0)).tolist()
    return [b for b, is_dominated in zip(bin_types, dominated, strict=True) if not is_dominated]


def build_problem(
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: frozenset[str] | None,
    capacity_types: Sequence[str],
    work_limit: int,
) -> tuple[Problem, dict[str, _Bin]]:
    """The solver's problem for these pods, and its bin names -> what they stand for."""
    groups = [g for g in groups if g.count > 0]
    usable_types = [kind for kind in capacity_types if kind != "reserved"] or ["on-demand"]
    zone_split = _split_values(groups, "zones", zones)
    kind_split = _split_values(groups, "capacity_types", usable_types)
    bins: list[_Bin] = []
    for option in options:
        room = option.room
        if room.cpu < 0 or room.memory < 0 or room.pods < 1:
            continue
        for kind in kind_split:
            for zone in zone_split:
                where = frozenset({zone}) if zone is not None else zones
                offer = _cheapest_offering(option, [kind] if kind else usable_types, where)
                if offer is not None:
                    bins.append(_Bin(option, offer[0], zone, offer[1]))
    # One extra dimension per distinct set of nodes some pods are confined to.
    restricted: dict[frozenset[str], str] = {}
    group_dimension: dict[int, str] = {}
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
    # Storage is a dimension only when a pod asks for it, so plans without it pose the same problem.
    storage = any(g.requests.ephemeral_storage > 0 for g in groups)
    for b in bins:
        room = b.option.room
        capacity = {"cpu": room.cpu, "memory": room.memory, "pods": room.pods}
        if storage:
            capacity["ephemeral-storage"] = room.ephemeral_storage
        for admitted, dimension in restricted.items():
            capacity[dimension] = room.pods if b.name in admitted else 0
        bin_types.append(BinType(b.name, MappingProxyType(capacity), b.price))
        by_name[b.name] = b
    bin_types = _undominated(bin_types)
    items = []
    for index, group in enumerate(groups):
        size = {"cpu": group.requests.cpu, "memory": group.requests.memory, "pods": group.requests.pods}
        if storage:
            size["ephemeral-storage"] = group.requests.ephemeral_storage
        if index in group_dimension:
            size[group_dimension[index]] = 1
        items.append(ItemType(f"{index}", MappingProxyType(size), group.count))
    return Problem(tuple(bin_types), tuple(items), work_limit=work_limit), by_name


def fleet_lower_bound(
    options: Sequence[NodeOption], demand: Resources, max_pods_per_node: int | None = None
) -> tuple[float, int]:
    """(cost per hour, nodes) that no fleet of these types holding `demand` goes below.

    demand: summed requests (cpu m, memory MiB, pods, ephemeral storage MiB). Nodes: per resource, the
    demand over the largest room, rounded up (and pods over the cap). Cost: those
    nodes at the cheapest price, or per resource the demand at the cheapest price
    per unit of room, whichever is higher. A type's price here is its cheapest
    offering (`NodeOption.lowest_price`), spot included, so the bound holds whatever
    capacity type and zone a node takes.
    """
    usable = [o for o in options if o.room.cpu >= 0 and o.room.memory >= 0 and o.room.pods > 0]
    if not usable:
        return math.inf, 0
    nodes = 0
    cost = 0.0
    for dimension in ("cpu", "memory", "pods", "ephemeral_storage"):
        need = getattr(demand, dimension)
        if need <= 0:
            continue
        rooms = [getattr(o.room, dimension) for o in usable]
        if max(rooms) <= 0:
            return math.inf, 0
        nodes = max(nodes, math.ceil(need / max(rooms)))
        cost = max(cost, need * min(o.lowest_price / r for o, r in zip(usable, rooms, strict=True) if r > 0))
    if max_pods_per_node:
        nodes = max(nodes, math.ceil(demand.pods / max_pods_per_node))
    return max(cost, nodes * min(o.lowest_price for o in usable)), nodes


# A fleet line: instance type, capacity type, and the pods on each such node.
_FleetKey = tuple[str, str, tuple[tuple[str, int], ...]]


def _fleet_from_simulation(
    result: ProvisioningResult, bound: tuple[float, int], status: str = "optimal", work: float = 0.0
) -> OptimalFleet:
    counts: dict[_FleetKey, int] = {}
    prices: dict[_FleetKey, float] = {}
    for node in result.new_nodes:
        key = (node.instance_type, node.capacity_type, tuple(sorted(node.pods.items())))
        counts[key] = counts.get(key, 0) + 1
        prices[key] = node.price
    groups = [
        FleetGroup(name, kind, None, count, prices[(name, kind, pods)], MappingProxyType(dict(pods)))
        for (name, kind, pods), count in counts.items()
    ]
    groups.sort(key=lambda g: (g.instance_type, -g.count))
    cost = sum(node.price for node in result.new_nodes)
    return OptimalFleet(status, cost, len(result.new_nodes), bound[0], bound[1], tuple(groups), work)


def solver_available() -> bool:
    """Whether the bin-packing solver can be imported."""
    return importlib.util.find_spec("sizing.binpack.solver") is not None


def optimal_fleet(
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: frozenset[str] | None = None,
    capacity_types: Sequence[str] = ("on-demand",),
    work_limit: int = DEFAULT_WORK_LIMIT,
    known: ProvisioningResult | None = None,
    solved: OptimalFleet | None = None,
) -> OptimalFleet:
    """The cheapest fleet the solver finds for `groups` within `work_limit` units of work.

    known: a fleet placing exactly these pods on new nodes; when its cost meets
    the lower bound it is returned as proven optimal without running the solver, and
    when the solver's fleet costs more, it is returned instead with the solver's
    bound (so the optimal fleet never costs more than a fleet already at hand).
    solved: `solved_fleet` of the same arguments, computed earlier (else it is computed here).
    """
    live = [g for g in groups if g.count > 0]
    if known is not None:
        demand = sum((g.requests.scaled(g.count) for g in live), Resources())
        bound = fleet_lower_bound(options, demand)
        if sum(node.price for node in known.new_nodes) <= bound[0] * (1 + 1e-9):
            return _fleet_from_simulation(known, bound)
    fleet = solved_fleet(options, groups, zones, capacity_types, work_limit) if solved is None else solved
    if known is not None and sum(n.price for n in known.new_nodes) < fleet.cost - 1e-9:
        bound = (fleet.lower_bound_cost, fleet.lower_bound_nodes)
        return _fleet_from_simulation(known, bound, "feasible", fleet.work)
    return fleet


def solved_fleet(
    options: Sequence[NodeOption],
    groups: Sequence[PodGroup],
    zones: frozenset[str] | None = None,
    capacity_types: Sequence[str] = ("on-demand",),
    work_limit: int = DEFAULT_WORK_LIMIT,
) -> OptimalFleet:
    """The solver's fleet for `groups` within `work_limit` units of work, on its own."""
    live = [g for g in groups if g.count > 0]
    from sizing.binpack.solver import solve

    problem, bins = build_problem(options, live, zones, capacity_types, work_limit)
    if not live:
        return OptimalFleet("optimal", 0.0, 0, 0.0, 0, (), 0.0)
    solution: Solution = solve(problem)
    if solution.status == "infeasible":
        raise SizingInputError(f"the pods fit no fleet of the NodePool's instance types: {solution.reason}")
    fleet_groups = []
    for bin_group in solution.bins:
        b = bins[bin_group.bin_type]
        pods: dict[str, int] = {}
        for item_name, count in bin_group.items.items():
            workload = live[int(item_name)].workload
            pods[workload] = pods.get(workload, 0) + count
        fleet_groups.append(
            FleetGroup(
                instance_type=b.option.name,
                capacity_type=b.capacity_type,
                zone=b.zone,
                count=bin_group.count,
                price=b.price,
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
        work=solution.work,
    )
