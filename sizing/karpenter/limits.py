"""NodePool `spec.limits`: the smallest under which every scenario holds, plus headroom.

A scenario holds under some limits when Karpenter decides there what it decides without them
(the caller's predicate; the planner's is `sizing.planning.decisions`: the same pods placed, on
the same NodePools, with the same soft constraints kept).

Karpenter compares limits with the *capacity* of the NodePool's nodes (vCPU x
1000 m, memory after the VM-overhead estimate), not with allocatable, and limits
change the fleet: a new NodeClaim only considers types whose capacity fits in what
is left, and then subtracts the largest capacity among its candidates
(`subtractMax`), so a tight limit pushes later claims to small types or leaves pods
pending, and a pod Karpenter cannot place under its soft constraints has them relaxed. Whether
limits suffice is therefore found by simulating under them.

`smallest_limits` searches whole cores, then whole GiB (above 200, to within 0.5 %):
per scenario, from the capacity the scenario uses without limits, steps that double
until the need is bracketed, then a bisection, between the lowest value still possible
and one no scenario can exceed (the scenario's capacity plus everything subtractMax
reserved in an unlimited run, under which nothing is filtered, so that every scenario holds
there). The scenario that raised the value last is the one that binds. Then

    limits = the smallest limits x (1 + headroom %), rounded up to whole cores and GiB.

cpu in millicores, memory in MiB.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingInputError
from sizing.kube.quantities import cpu_millicores, format_cpu, format_memory, memory_mib
from sizing.kube.resources import Resources

MILLICORES_PER_CORE = 1000
MIB_PER_GIB = 1024
SUPPORTED_LIMIT_KEYS = ("cpu", "memory", "pods", "nodes")


@dataclass(frozen=True)
class NodePoolLimits:
    """Limits for `spec.limits` and how they were found.

    cpu_millicores / memory_mib: the limits (whole cores, whole GiB); minimum: the
    smallest whole-core and whole-GiB limits under which every scenario holds; binding:
    the scenario that sets the minimum (cpu, memory); probes: scenario simulations the
    search ran; below: per dimension (cpu, memory), the limits (cpu m, memory MiB) one step
    under the minimum in that dimension as the search probed them (the other dimension at
    the value it was searched with), or None where the search probed nothing there.
    """

    cpu_millicores: int
    memory_mib: int
    minimum: Resources
    headroom_percent: float
    binding: tuple[str, str]
    probes: int = 0
    below: tuple[tuple[int, int] | None, tuple[int, int] | None] = (None, None)

    def spec(self) -> dict[str, str]:
        """The NodePool `spec.limits` mapping, e.g. {"cpu": "24", "memory": "96Gi"}."""
        return {"cpu": format_cpu(self.cpu_millicores), "memory": format_memory(self.memory_mib)}

    def for_simulation(self) -> Mapping[str, int]:
        """The limits as the simulation takes them (cpu m, memory MiB)."""
        return {"cpu": self.cpu_millicores, "memory": self.memory_mib}


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step)) * step


def check_headroom(headroom_percent: Any) -> float:
    if isinstance(headroom_percent, bool) or not isinstance(headroom_percent, (int, float)) or headroom_percent < 0:
        raise SizingInputError(f"headroomPercent must be a number >= 0, got {headroom_percent!r}")
    return float(headroom_percent)


def with_headroom(minimum: Resources, headroom_percent: float) -> tuple[int, int]:
    """(cpu m, memory MiB): the minimum plus headroom, rounded up to whole cores and GiB."""
    factor = 1 + check_headroom(headroom_percent) / 100
    # Rounded to 1e-6 first so that 4 cores x 1.1 stays 4400m, not 4400.000000000001.
    cpu = _round_up(round(minimum.cpu * factor, 6), MILLICORES_PER_CORE)
    memory = _round_up(round(minimum.memory * factor, 6), MIB_PER_GIB)
    return cpu, memory


Holds = Callable[[str, int, int], bool]


# Above 200 cores or GiB the search stops within this fraction of the value: the headroom
# (10 % by default) is far larger, and each probe is a whole multi-batch simulation.
RESOLUTION = 0.005


def _resolution(value: int) -> int:
    return max(1, int(value * RESOLUTION))


def _smallest_passing(probe: Callable[[int], bool], failing: int, high: int, guess: int) -> int:
    """The smallest value above `failing` (which fails) and up to `high` (which passes) that passes,
    to within `_resolution`.

    The search starts at `guess` (the scenario's own need without limits, usually close) and
    moves away from it in doubling steps until the answer is bracketed, then bisects: few
    probes when the guess is good, never more than about twice a plain bisection's.
    """
    guess = min(max(guess, failing + 1), high)
    step = _resolution(guess)
    if probe(guess):
        low, top = failing, guess
        while top - step > low:
            if not probe(top - step):
                low = top - step
                break
            top, step = top - step, step * 2
    else:
        low, top = guess, min(guess + step, high)
        while not probe(top):
            low, step = top, step * 2
            top = min(low + step, high)
    while top - low > _resolution(top):
        middle = (low + top) // 2
        if probe(middle):
            top = middle
        else:
            low = middle
    return top


def _raise_until_all_hold(
    names: Sequence[str],
    value: int,
    high: int,
    probe: Callable[[str, int], bool],
    guesses: Mapping[str, int] | None = None,
    floor: str = "",
) -> tuple[int, str]:
    """The smallest value (in steps) from `value` up to `high` under which every scenario holds, and
    the scenario that raised it last (`floor`, the scenario `value` comes from, when none had to).

    For each scenario that fails at the current value, `_smallest_passing` finds the smallest
    value that holds, starting from the scenario's guess. A pass repeats until no scenario raises
    the value (the search assumes more room never hurts, which the repeat double-checks).
    """
    binder = floor or names[0]
    guesses = guesses or {}
    while True:
        raised = False
        for name in names:
            if probe(name, value):
                continue
            if not probe(name, high):
                continue  # no value up to `high` helps; the final check below takes over
            value = _smallest_passing(functools.partial(probe, name), value, high, guesses.get(name, value + 1))
            binder, raised = name, True
        if not raised:
            return value, binder


def smallest_limits(
    holds: Holds,
    names: Sequence[str],
    lower: Resources,
    upper: Resources,
    headroom_percent: float,
    guesses: Mapping[str, Resources] | None = None,
    floor: str = "",
) -> NodePoolLimits:
    """The smallest whole-core / whole-GiB limits under which every named scenario holds (above 200
    cores or GiB, to within 0.5 %), plus headroom.

    holds(name, cpu m, memory MiB): whether scenario `name` holds under those limits; lower /
    upper (cpu m, memory MiB): no limits below `lower` can do, and every scenario holds under
    `upper` and any limits above it; guesses: per scenario, where to start looking (its capacity
    without limits); floor: the scenario whose need `lower` is (it binds when no other raises it).
    """
    check_headroom(headroom_percent)
    cache: dict[tuple[str, int, int], bool] = {}

    def probe_at(name: str, cores: int, gibs: int) -> bool:
        key = (name, cores, gibs)
        if key not in cache:
            cache[key] = holds(name, cores * MILLICORES_PER_CORE, gibs * MIB_PER_GIB)
        return cache[key]

    top_cores = max(1, math.ceil(upper.cpu / MILLICORES_PER_CORE))
    top_gibs = max(1, math.ceil(upper.memory / MIB_PER_GIB))
    low_cores = min(top_cores, max(1, lower.cpu // MILLICORES_PER_CORE))
    low_gibs = min(top_gibs, max(1, lower.memory // MIB_PER_GIB))
    guessed = guesses or {}
    core_guesses = {name: math.ceil(need.cpu / MILLICORES_PER_CORE) for name, need in guessed.items()}
    gib_guesses = {name: math.ceil(need.memory / MIB_PER_GIB) for name, need in guessed.items()}
    cores, cpu_binder = _raise_until_all_hold(
        names, low_cores, top_cores, lambda name, value: probe_at(name, value, top_gibs), core_guesses, floor
    )
    gibs, memory_binder = _raise_until_all_hold(
        names, low_gibs, top_gibs, lambda name, value: probe_at(name, cores, value), gib_guesses, floor
    )
    minimum = Resources(cores * MILLICORES_PER_CORE, gibs * MIB_PER_GIB, 0)
    searched_gibs = top_gibs
    cpu, memory = with_headroom(minimum, headroom_percent)
    # More room is not always better (a larger limit can change the fleet a scenario starts
    # from), so the limits with headroom are simulated too, and raised if any scenario fails.
    final_cores, final_gibs = max(cpu // MILLICORES_PER_CORE, cores), max(memory // MIB_PER_GIB, gibs)

    def with_gibs(gibs: int) -> Callable[[str, int], bool]:
        return lambda name, value: probe_at(name, value, gibs)

    def with_cores(cores: int) -> Callable[[str, int], bool]:
        return lambda name, value: probe_at(name, cores, value)

    while not all(probe_at(name, final_cores, final_gibs) for name in names):
        top_cores, top_gibs = max(top_cores, final_cores), max(top_gibs, final_gibs)
        raised_cores, _ = _raise_until_all_hold(names, final_cores, top_cores, with_gibs(final_gibs))
        raised_gibs, _ = _raise_until_all_hold(names, final_gibs, top_gibs, with_cores(raised_cores))
        if (raised_cores, raised_gibs) == (final_cores, final_gibs):
            # No single resource helps from here: every scenario holds at `upper` and above.
            final_cores, final_gibs = top_cores, top_gibs
            break
        final_cores, final_gibs = raised_cores, raised_gibs
    cpu_below = cores - _resolution(cores)
    gib_below = gibs - _resolution(gibs)
    return NodePoolLimits(
        final_cores * MILLICORES_PER_CORE,
        final_gibs * MIB_PER_GIB,
        minimum,
        float(headroom_percent),
        (cpu_binder, memory_binder),
        len(cache),
        (
            (cpu_below * MILLICORES_PER_CORE, searched_gibs * MIB_PER_GIB) if cpu_below >= 1 else None,
            (cores * MILLICORES_PER_CORE, gib_below * MIB_PER_GIB) if gib_below >= 1 else None,
        ),
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
        elif key == "ephemeral-storage":
            # Every node of a NodePool has its EC2NodeClass's root volume: storage counts nodes.
            raise SizingInputError(
                f"{where}: limit 'ephemeral-storage' is not planned: each node of the NodePool counts its "
                "EC2NodeClass's root volume, so the limit is a node count times that volume; give it as a "
                f"'nodes' limit instead (allowed keys are {list(SUPPORTED_LIMIT_KEYS)})"
            )
        else:
            raise SizingInputError(
                f"{where}: limit {key!r} is not supported; allowed keys are {list(SUPPORTED_LIMIT_KEYS)}"
            )
    return parsed
