"""NodePool `spec.limits` derived from the fleet Karpenter would launch at peak.

Karpenter compares limits with the *capacity* of the NodePool's nodes (vCPU x
1000 m, memory after the VM-overhead estimate), not with allocatable. The
limits are

    fleet capacity x (1 + headroom %) + the largest allowed type's capacity

rounded up to whole cores and whole GiB. The largest type is the margin for
subtractMax (a new NodeClaim reserves its largest candidate) and for the one
NodeClaim that may overshoot when the cluster state lags.

Limits change the fleet: a NodeClaim opened when little is left only considers
small types. So the limits are checked by simulating the peak under them, and
raised until every pod is placed and they still cover the fleet they produce.
Limits at least as large as the reported usage plus what subtractMax reserves
in an unlimited run never filter anything, so the search always ends.

cpu in millicores, memory in MiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, Tuple

from sizing.errors import SizingInputError
from sizing.kube.quantities import cpu_millicores, format_cpu, format_memory, memory_mib
from sizing.kube.resources import Resources
from sizing.karpenter.simulation import NodeOption, ProvisioningResult

MILLICORES_PER_CORE = 1000
MIB_PER_GIB = 1024
LIMIT_SEARCH_ROUNDS = 20
SUPPORTED_LIMIT_KEYS = ("cpu", "memory", "pods", "nodes")


@dataclass(frozen=True)
class NodePoolLimits:
    """Limits for `spec.limits` and how they were derived.

    cpu_millicores is a whole number of cores and memory_mib a whole number of
    GiB; fleet_capacity: capacity of the simulated fleet that counts against
    the limits; margin: the largest capacity among the allowed types (per
    resource), from types margin_types (cpu, memory); raised_for_fleet: True
    when the simulation under the first figures needed higher ones.
    """

    cpu_millicores: int
    memory_mib: int
    fleet_capacity: Resources
    margin: Resources
    margin_types: Tuple[str, str]
    headroom_percent: float
    raised_for_fleet: bool = False

    def spec(self) -> dict[str, str]:
        """The NodePool `spec.limits` mapping, e.g. {"cpu": "24", "memory": "96Gi"}."""
        return {"cpu": format_cpu(self.cpu_millicores), "memory": format_memory(self.memory_mib)}

    def for_simulation(self) -> Mapping[str, int]:
        """The limits as the simulation takes them (cpu m, memory MiB)."""
        return {"cpu": self.cpu_millicores, "memory": self.memory_mib}


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step)) * step


def largest_capacity(options: Sequence[NodeOption]) -> Tuple[Resources, Tuple[str, str]]:
    """Per resource, the largest capacity among `options`, and which types have it (cpu, memory)."""
    if not options:
        raise SizingInputError("no instance type to take the limits margin from")
    by_cpu = max(options, key=lambda o: (o.capacity.cpu, o.name))
    by_memory = max(options, key=lambda o: (o.capacity.memory, o.name))
    return Resources(by_cpu.capacity.cpu, by_memory.capacity.memory, 0), (by_cpu.name, by_memory.name)


def derive_limits(
    fleet_capacity: Resources, options: Sequence[NodeOption], headroom_percent: float
) -> NodePoolLimits:
    """Limits for a fleet of this capacity (cpu m, memory MiB) with these allowed types."""
    if isinstance(headroom_percent, bool) or not isinstance(headroom_percent, (int, float)) or headroom_percent < 0:
        raise SizingInputError(f"headroomPercent must be a number >= 0, got {headroom_percent!r}")
    margin, margin_types = largest_capacity(options)
    factor = 1 + headroom_percent / 100
    cpu = _round_up(math.ceil(fleet_capacity.cpu * factor) + margin.cpu, MILLICORES_PER_CORE)
    memory = _round_up(math.ceil(fleet_capacity.memory * factor) + margin.memory, MIB_PER_GIB)
    return NodePoolLimits(cpu, memory, fleet_capacity, margin, margin_types, float(headroom_percent))


def _usage(result: ProvisioningResult) -> Resources:
    usage = result.limit_usage()
    return Resources(usage["cpu"], usage["memory"], 0)


def _covers(limits: NodePoolLimits, needed: NodePoolLimits) -> bool:
    return limits.cpu_millicores >= needed.cpu_millicores and limits.memory_mib >= needed.memory_mib


def settle_limits(
    simulate_under: Callable[[Mapping[str, int]], ProvisioningResult],
    options: Sequence[NodeOption],
    headroom_percent: float,
    reported_usage: Resources = Resources(),
) -> Tuple[NodePoolLimits, ProvisioningResult]:
    """Limits under which the simulated peak places every pod, and the fleet under them.

    simulate_under(limits) simulates the peak with those limits ({} for none);
    reported_usage: capacity of the NodePool's running nodes that Karpenter
    already counts (cpu m, memory MiB).
    """
    unlimited = simulate_under({})
    first = derive_limits(_usage(unlimited), options, headroom_percent)
    limits = first
    for _ in range(LIMIT_SEARCH_ROUNDS):
        result = simulate_under(limits.for_simulation())
        needed = derive_limits(_usage(result), options, headroom_percent)
        if not result.pending and _covers(limits, needed):
            return _marked(limits, result, limits is not first), result
        margin = limits.margin if result.pending else Resources()
        limits = NodePoolLimits(
            _round_up(max(limits.cpu_millicores, needed.cpu_millicores) + margin.cpu, MILLICORES_PER_CORE),
            _round_up(max(limits.memory_mib, needed.memory_mib) + margin.memory, MIB_PER_GIB),
            needed.fleet_capacity,
            limits.margin,
            limits.margin_types,
            limits.headroom_percent,
        )
    # Enough for everything an unlimited run reserves: no type is ever filtered out.
    safe = NodePoolLimits(
        max(limits.cpu_millicores, _round_up(reported_usage.cpu + unlimited.reserved["cpu"], MILLICORES_PER_CORE)),
        max(limits.memory_mib, _round_up(reported_usage.memory + unlimited.reserved["memory"], MIB_PER_GIB)),
        first.fleet_capacity,
        first.margin,
        first.margin_types,
        first.headroom_percent,
    )
    result = simulate_under(safe.for_simulation())
    return _marked(safe, result, True), result


def _marked(limits: NodePoolLimits, result: ProvisioningResult, raised: bool) -> NodePoolLimits:
    return NodePoolLimits(
        limits.cpu_millicores,
        limits.memory_mib,
        _usage(result),
        limits.margin,
        limits.margin_types,
        limits.headroom_percent,
        raised,
    )


def parse_limits(spec: Mapping[str, Any], where: str = "nodePool.limits") -> Mapping[str, int]:
    """A NodePool `spec.limits` mapping as integers: cpu m, memory MiB, pods and nodes as counts."""
    if not isinstance(spec, Mapping):
        raise SizingInputError(f"{where} must be a mapping such as {{cpu: 1000, memory: 1000Gi}}, got {spec!r}")
    parsed = {}
    for key, value in spec.items():
        if key == "cpu":
            parsed[key] = cpu_millicores(value, f"{where}.cpu")
        elif key == "memory":
            parsed[key] = memory_mib(value, f"{where}.memory")
        elif key in ("pods", "nodes"):
            if isinstance(value, str) and value.isdigit():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SizingInputError(f"{where}.{key} must be a non-negative integer, got {value!r}")
            parsed[key] = value
        else:
            raise SizingInputError(
                f"{where}: limit {key!r} is not supported; allowed keys are {list(SUPPORTED_LIMIT_KEYS)}"
            )
    return parsed
