"""The scheduler's state during one batch: the instance-type table of every NodePool, what is left
of each NodePool's limits, the in-flight NodeClaims and the topology counts.

Every (NodePool, instance type) pair is a row of one table, so a NodeClaim's candidate types are
row numbers whichever NodePool it comes from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from sizing.errors import SizingInputError
from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.simulation.model import ANY_ZONE, LIMIT_KEYS, NodeOption, NodePoolModel, RunningNode

# Resource vectors of the simulation: (cpu millicores, memory MiB, pod slots, ephemeral storage MiB).
DIMENSIONS = 4
Vector = tuple[int, int, int, int]
NOTHING: Vector = (0, 0, 0, 0)
NO_ROOM: Vector = (-1, -1, -1, -1)
Candidates = tuple[int, ...] | np.ndarray
# Per topology key, the domains the next pod may go to.
Valid = Mapping[str, frozenset[str]]


def weight_order(pools: Sequence[NodePoolModel]) -> list[int]:
    """Indices of `pools` in the order Karpenter tries them: weight descending, then name descending."""
    return sorted(range(len(pools)), key=lambda i: (-pools[i].weight, _descending(pools[i].name)))


def _descending(name: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in name) + (1,)


class TypeTable:
    """Room (allocatable - DaemonSet overhead) and capacity of every row, with per-pool slices."""

    def __init__(self, pools: Sequence[NodePoolModel]):
        self.pools = list(pools)
        self.options = [option for pool in pools for option in pool.node_options]
        self.pool_of_row = np.array(
            [index for index, pool in enumerate(pools) for _ in pool.node_options], dtype=np.int64
        )
        self.names = [option.name for option in self.options]
        self.room = np.array([o.room.vector for o in self.options], dtype=np.int64).reshape(-1, DIMENSIONS)
        self.room_rows = [tuple(row) for row in self.room.tolist()]
        self.capacity = np.array(
            [[o.capacity.cpu, o.capacity.memory, o.capacity.pods, 1] for o in self.options], dtype=np.int64
        ).reshape(-1, 4)
        self.pool_rows = [np.flatnonzero(self.pool_of_row == index) for index in range(len(pools))]
        self.min_values: list[list[tuple[int, np.ndarray]]] = [self._min_values(i, p) for i, p in enumerate(pools)]
        self._masks: dict[frozenset[str], np.ndarray] = {}
        self._port_masks: dict[frozenset[tuple[str, int]], np.ndarray | None] = {}
        # Only when some row is not offered in every zone and capacity type of its pool do zones
        # and capacity types narrow a NodeClaim's types; otherwise the masks below are never needed.
        self.partial = any(
            not _offered_everywhere(self.options[row], pool)
            for index, pool in enumerate(pools)
            for row in self.pool_rows[index]
        )
        # Whether a type's price depends on the capacity type or zone; if not, launch takes the cheapest type.
        self.priced_by_offering = any(o.offerings is not None or o.spot_price is not None for o in self.options)
        # Each row's place among all rows by (price, name): the cheapest of a claim's candidates is
        # the one with the lowest place, found in one pass over thousands of claims' candidates.
        by_price = sorted(range(len(self.options)), key=lambda row: (self.options[row].price, self.names[row]))
        self.price_rank = np.empty(len(self.options), dtype=np.int64)
        self.price_rank[by_price] = np.arange(len(self.options), dtype=np.int64)
        self._offer_masks: dict[tuple[frozenset[str] | None, frozenset[str]], np.ndarray | None] = {}
        # The label keys any type carries (the instance-type labels topology may count by).
        self.label_keys = frozenset(key for option in self.options for key in option.labels)

    def _min_values(self, index: int, pool: NodePoolModel) -> list[tuple[int, np.ndarray]]:
        """(minValues, value id per row, -1 outside the pool) for each key the pool sets minValues on."""
        rules = []
        for key, minimum in sorted(pool.min_values.items()):
            ids: dict[str, int] = {}
            column = np.full(len(self.options), -1, dtype=np.int64)
            for row in self.pool_rows[index]:
                labels = pool.type_labels.get(self.names[row])
                if labels is None:
                    raise SizingInputError(f"NodePool {pool.name!r}: no labels for {self.names[row]} (minValues)")
                if key in labels:
                    column[row] = ids.setdefault(labels[key], len(ids))
            rules.append((minimum, column))
        return rules

    def port_mask(self, ports: frozenset[tuple[str, int]]) -> np.ndarray | None:
        """Rows whose DaemonSets bind none of `ports` (None: every row), as Karpenter skips the
        instance types whose daemon overhead group conflicts with the pod's host ports."""
        if not ports:
            return None
        if ports not in self._port_masks:
            free = np.array([not (option.daemon_ports & ports) for option in self.options], dtype=bool)
            self._port_masks[ports] = None if free.all() else free
        return self._port_masks[ports]

    def offer_mask(self, zones: frozenset[str] | None, kinds: frozenset[str]) -> np.ndarray | None:
        """Rows with an offering of one of `kinds` in one of `zones` (None: any zone); None when every row has."""
        key = (zones, kinds)
        if key not in self._offer_masks:
            offered = np.array(
                [any(option.offered_price(kind, zones) is not None for kind in kinds) for option in self.options],
                dtype=bool,
            )
            self._offer_masks[key] = None if offered.all() else offered
        return self._offer_masks[key]

    def mask(self, allowed: frozenset[str] | None) -> np.ndarray | None:
        if allowed is None:
            return None
        if allowed not in self._masks:
            self._masks[allowed] = np.array([name in allowed for name in self.names], dtype=bool)
        return self._masks[allowed]


class TypeTables:
    """The type tables of the last few sets of NodePools, for simulations that share them.

    A table depends on the NodePools' types, labels, zones, capacity types, weights and minValues,
    never on their limits, and a simulation only adds memoised masks to it; so simulations that
    differ in limits, pods or running nodes (a limit search's probes, a scenario's batches) can
    share one. NodePools are compared by value, which is quick when they hold the same objects.
    """

    KEPT = 4

    def __init__(self) -> None:
        self._tables: list[tuple[tuple[NodePoolModel, ...], TypeTable]] = []

    def for_pools(self, pools: Sequence[NodePoolModel]) -> TypeTable:
        key = tuple(replace(pool, limits={}) for pool in pools)
        for known, table in self._tables:
            if known == key:
                return table
        table = TypeTable(key)
        self._tables = [(key, table), *self._tables[: self.KEPT - 1]]
        return table


def _offered_everywhere(option: NodeOption, pool: NodePoolModel) -> bool:
    """Whether the type has an offering of every capacity type of the pool in every zone a claim may take."""
    if option.offerings is None:
        return True
    for kind in pool.capacity_types:
        if kind == "reserved":
            continue
        by_zone = option.offerings.get(kind, {})
        if ANY_ZONE in by_zone:
            continue
        if pool.zones is None or not pool.zones <= set(by_zone):
            return False
    return True


def apply_mask(candidates: Candidates, mask: np.ndarray | None) -> Candidates:
    """The candidates whose row the mask keeps."""
    if mask is None:
        return candidates
    if isinstance(candidates, tuple):
        return tuple(t for t in candidates if mask[t])
    kept: np.ndarray = candidates[mask[candidates]]
    return kept


class Claim:
    """An in-flight NodeClaim: its pods' requests, its candidate rows, zones and what it holds."""

    __slots__ = (
        "index",
        "pool",
        "pod_count",
        "requests",
        "candidates",
        "headroom",
        "zones",
        "capacity_types",
        "placed",
        "workloads",
        "ports",
        "run_stamp",
        "room_in_run",
        "touched_stamp",
        "labels",
    )

    def __init__(self, index: int, pool: int, zones: frozenset[str] | None, capacity_types: frozenset[str]):
        self.index = index
        self.pool = pool
        self.pod_count = 0
        self.requests = [0, 0, 0, 0]
        self.candidates: Candidates = ()
        self.headroom = NO_ROOM
        self.zones = zones
        self.capacity_types = capacity_types
        self.placed: dict[int, int] = {}
        self.workloads: dict[str, int] = defaultdict(int)
        self.ports: set[tuple[str, int]] = set()
        self.run_stamp: object = -1
        self.room_in_run = 0
        self.touched_stamp: object = -1
        # What its pods and NodePool ask of the node's other labels, one requirement per key.
        self.labels: dict[str, LabelRequirement] = {}

    @property
    def zone(self) -> str | None:
        """The zone the claim is committed to, if only one is left."""
        if self.zones is not None and len(self.zones) == 1:
            return next(iter(self.zones))
        return None


class LimitsLeft:
    """What is left of each NodePool's limits, and what subtractMax took for new NodeClaims.

    demand: per NodePool and key of LIMIT_KEYS, the smallest limit under which every limit check
    of the batch so far passes (counted usage + reservations + the largest candidate, at each
    NodeClaim considered). Limits at or above it on every key filter nothing, so the batch makes
    exactly the same choices under them as without limits.
    """

    def __init__(self, pools: Sequence[NodePoolModel], running: Sequence[RunningNode], primary: str):
        self.columns = []
        self.keys = []
        self.remaining = []
        self.reserved = []
        self.used = [np.zeros(len(LIMIT_KEYS), dtype=np.int64) for _ in pools]
        self.demand = [np.zeros(len(LIMIT_KEYS), dtype=np.int64) for _ in pools]
        for pool in pools:
            columns = [LIMIT_KEYS.index(key) for key in LIMIT_KEYS if key in pool.limits]
            self.columns.append(columns)
            self.keys.append([LIMIT_KEYS[c] for c in columns])
            self.remaining.append(np.array([pool.limits[LIMIT_KEYS[c]] for c in columns], dtype=np.int64))
            self.reserved.append(np.zeros(len(LIMIT_KEYS), dtype=np.int64))
        names = [pool.name for pool in pools]
        # Summed in Python first: thousands of running nodes, one array per NodePool.
        totals = [[0] * len(LIMIT_KEYS) for _ in pools]
        for node in running:
            if not (node.in_node_pool and node.capacity_reported):
                continue
            name = node.node_pool or primary
            if name not in names:
                continue
            total = totals[names.index(name)]
            capacity = node.option.capacity
            total[0] += capacity.cpu
            total[1] += capacity.memory
            total[2] += capacity.pods
            total[3] += 1
        for index, total in enumerate(totals):
            usage = np.array(total, dtype=np.int64)
            self.used[index] += usage
            if self.columns[index]:
                self.remaining[index] -= usage[self.columns[index]]

    def consider(self, pool: int, largest: np.ndarray) -> None:
        """A NodeClaim of `pool` whose largest candidate has capacity `largest` is about to be checked."""
        np.maximum(self.demand[pool], self.used[pool] + self.reserved[pool] + largest, out=self.demand[pool])

    def describe(self, pool: int) -> str:
        return ", ".join(
            f"{key} {int(value)}" for key, value in zip(self.keys[pool], self.remaining[pool], strict=False)
        )


Counts = dict[str, dict[str, int]]


class TopologyCounts:
    """Pods per topology key (zone, capacity type, a label), workload and domain: `spread` counts
    pods on nodes committed to one domain (as Karpenter records spread), `anti` counts them in
    every domain their node may still take."""

    def __init__(self) -> None:
        self.spread: dict[str, Counts] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
        self.anti: dict[str, Counts] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))

    def record(self, workload: str, key: str, domains: frozenset[str] | None, count: int) -> None:
        if not domains or count <= 0:
            return
        if len(domains) == 1:
            self.spread[key][workload][next(iter(domains))] += count
        anti = self.anti[key][workload]
        for domain in domains:
            anti[domain] += count

    def in_domain(self, workloads: frozenset[str], key: str, domain: str, table: str) -> int:
        counts = (self.spread if table == "spread" else self.anti).get(key)
        if counts is None:
            return 0
        return sum(counts[w][domain] for w in workloads if w in counts)
