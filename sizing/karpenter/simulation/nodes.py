"""Node choice: which candidate types a NodeClaim keeps, how many more pods it holds, what it launches.

A NodeClaim keeps every candidate type whose room holds its pods (cpu, memory, pod slots, ephemeral
storage). With `minValues` on a key, it must keep at least that many distinct values of the key among those types,
so the pods it may still take are limited by the minValues-th best value, not the best type.
At launch it takes the cheapest remaining offering (ties by name), spot first when allowed (see `launch`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from sizing.karpenter.simulation.model import CAPACITY_TYPE_PRIORITY, PlacedNode
from sizing.karpenter.simulation.state import DIMENSIONS, NO_ROOM, Candidates, Claim, TypeTable, Vector
from sizing.kube.resources import Resources

# Up to this many candidate types a claim keeps them in a tuple and loops in Python.
SMALL_CANDIDATE_SET = 16


def pods_that_fit(free: np.ndarray, requests: Vector) -> np.ndarray:
    """Per row of `free` (cpu, memory, pods, storage), how many pods of `requests` fit (may be < 0)."""
    dims = [d for d in range(DIMENSIONS) if requests[d] > 0]
    counts = free[:, dims[0]] // requests[dims[0]]
    for d in dims[1:]:
        counts = np.minimum(counts, free[:, d] // requests[d])
    if len(dims) < DIMENSIONS:
        # A dimension the pod does not use still has to be non-negative for the type to fit.
        fits = (free >= 0).all(axis=1)
        counts = np.where(fits, counts, -1)
    return counts


def most_pods(table: TypeTable, pool: int, candidates: Candidates, used: Sequence[int], requests: Vector) -> int:
    """The most pods of `requests` the claim holds on top of `used` while keeping minValues (0 if none)."""
    rules = table.min_values[pool]
    if isinstance(candidates, tuple) and not rules:
        # Few candidates: plain Python beats numpy's per-call overhead.
        best = 0
        for t in candidates:
            row = table.room_rows[t]
            fit = None
            for d in range(DIMENSIONS):
                free = row[d] - used[d]
                if free < 0:
                    fit = -1
                    break
                if requests[d] > 0:
                    count = free // requests[d]
                    if fit is None or count < fit:
                        fit = count
            if fit is not None and fit > best:
                best = fit
        return best
    rows = np.asarray(candidates, dtype=np.int64)
    if not len(rows):
        return 0
    fits = pods_that_fit(table.room[rows] - np.array(used, dtype=np.int64), requests)
    best = int(fits.max())
    for minimum, column in rules:
        ids = column[rows]
        known = ids >= 0
        if not known.any():
            return 0
        per_value = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
        np.maximum.at(per_value, ids[known], fits[known])
        ranked = np.sort(per_value)[::-1]
        best = min(best, int(ranked[minimum - 1]) if len(ranked) >= minimum else -1)
    return max(best, 0)


def keeps_min_values(table: TypeTable, pool: int, candidates: Candidates) -> bool:
    rows = np.asarray(candidates, dtype=np.int64)
    for minimum, column in table.min_values[pool]:
        ids = column[rows]
        if len(np.unique(ids[ids >= 0])) < minimum:
            return False
    return True


def set_candidates(table: TypeTable, claim: Claim, candidates: Candidates) -> None:
    """Keep the candidates that hold the claim's pods, and the largest room left per resource."""
    used = claim.requests
    if isinstance(candidates, np.ndarray) and len(candidates) > SMALL_CANDIDATE_SET:
        free = table.room[candidates] - np.array(used, dtype=np.int64)
        fits = (free >= 0).all(axis=1)
        claim.candidates = candidates[fits]
        if fits.any():
            cpu, memory, pods, storage = (int(x) for x in free[fits].max(axis=0))
            claim.headroom = (cpu, memory, pods, storage)
        else:
            claim.headroom = NO_ROOM
        if len(claim.candidates) > SMALL_CANDIDATE_SET:
            return
        candidates = claim.candidates
    kept: list[int] = []
    headroom = [-1, -1, -1, -1]
    for t in (int(t) for t in candidates):
        row = table.room_rows[t]
        left = (row[0] - used[0], row[1] - used[1], row[2] - used[2], row[3] - used[3])
        if left[0] >= 0 and left[1] >= 0 and left[2] >= 0 and left[3] >= 0:
            kept.append(t)
            for d in range(DIMENSIONS):
                if left[d] > headroom[d]:
                    headroom[d] = left[d]
    claim.candidates = tuple(kept)
    claim.headroom = (headroom[0], headroom[1], headroom[2], headroom[3])


def launch(
    table: TypeTable, claim: Claim, pods: Mapping[str, int], pool_name: str, labels: Mapping[str, str] | None = None
) -> PlacedNode:
    """The node a NodeClaim becomes: its cheapest remaining offering, of the preferred capacity type,
    carrying `labels` (its custom labels).

    As aws/karpenter-provider-aws v1.14 `pkg/providers/instance/instance.go` launches: the
    capacity type is spot when the claim allows spot and some candidate has a spot offering in
    its zones (`getCapacityType`), else on-demand; with both allowed, spot offerings dearer than
    the cheapest on-demand offering are dropped first (`filter.go`, `SpotOfferingFilter`, not
    applied under minValues), so spot is launched only where it is not dearer. The type is the
    one with the cheapest offering of that capacity type in the claim's zones (ties by name).
    """
    options = table.options
    zones = claim.zones
    kinds = [kind for kind in CAPACITY_TYPE_PRIORITY if kind in claim.capacity_types and kind != "reserved"]
    if not table.priced_by_offering:
        # Every type costs the same in every zone and capacity type: the cheapest type, spot first.
        capacity_type = kinds[0] if kinds else "on-demand"
        if isinstance(claim.candidates, np.ndarray) and len(claim.candidates):
            cheapest = int(claim.candidates[int(np.argmin(table.price_rank[claim.candidates]))])
        else:
            cheapest = min((int(t) for t in claim.candidates), key=lambda t: (options[t].price, table.names[t]))
        return _placed(table, claim, pods, pool_name, cheapest, capacity_type, options[cheapest].price, zones, labels)
    candidates = [int(t) for t in claim.candidates]
    ceiling = math.inf
    if "spot" in kinds and "on-demand" in kinds and not table.min_values[claim.pool]:
        on_demand = [options[t].offered_price("on-demand", zones) for t in candidates]
        ceiling = min((price for price in on_demand if price is not None), default=math.inf)

    def price(t: int, kind: str) -> float | None:
        found = options[t].offered_price(kind, zones)
        return None if found is None or (kind == "spot" and found > ceiling) else found

    capacity_type = next((kind for kind in kinds if any(price(t, kind) is not None for t in candidates)), "on-demand")

    def cost(t: int) -> float:
        found = price(t, capacity_type)
        # The masks keep only offered types; a claim built without them is priced as before offerings.
        return found if found is not None else options[t].price_for(capacity_type)

    offered = [t for t in candidates if price(t, capacity_type) is not None] or candidates
    best = min(offered, key=lambda t: (cost(t), table.names[t]))
    launch_zones = options[best].offered_zones(capacity_type, zones)
    return _placed(table, claim, pods, pool_name, best, capacity_type, cost(best), launch_zones, labels)


def _placed(
    table: TypeTable,
    claim: Claim,
    pods: Mapping[str, int],
    pool_name: str,
    row: int,
    capacity_type: str,
    price: float,
    zones: frozenset[str] | None,
    labels: Mapping[str, str] | None,
) -> PlacedNode:
    option = table.options[row]
    return PlacedNode(
        name=f"nodeclaim-{claim.index + 1}",
        instance_type=option.name,
        capacity_type=capacity_type,
        price=price,
        capacity=option.capacity,
        allocatable=option.allocatable,
        reserved=option.daemon_overhead,
        pod_requests=Resources(*claim.requests),
        pods=pods,
        zones=tuple(sorted(zones if zones is not None else ())),
        options=len(claim.candidates),
        node_pool=pool_name,
        labels=dict(labels or {}),
    )
