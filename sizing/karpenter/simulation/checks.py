"""Checks of a scenario before it is simulated: NodePools, their limits, and pod groups."""

from __future__ import annotations

from sizing.errors import SizingInputError
from sizing.karpenter.simulation.model import LIMIT_KEYS, Scenario


def check_scenario(scenario: Scenario) -> None:
    """Refuse a scenario the simulation cannot run, naming the NodePool, key or pod group at fault."""
    pools = scenario.pools
    names = [pool.name for pool in pools]
    if len(set(names)) != len(names):
        raise SizingInputError(f"scenario NodePools must have distinct names, got {names}")
    for pool in pools:
        if not pool.node_options:
            raise SizingInputError(
                f"NodePool {pool.name!r} has no instance type; the NodePool needs at least one instance type"
            )
        types = [option.name for option in pool.node_options]
        if len(set(types)) != len(types):
            raise SizingInputError(f"NodePool {pool.name!r} lists an instance type twice: {types}")
        for key, value in pool.limits.items():
            if key not in LIMIT_KEYS:
                raise SizingInputError(f"limits key {key!r} is not supported; allowed keys are {list(LIMIT_KEYS)}")
            if isinstance(value, bool) or not isinstance(value, int):
                raise SizingInputError(f"limits[{key!r}] must be an integer, got {value!r}")
    for group in scenario.pod_groups:
        if group.count < 0 or min(group.requests.vector) < 0 or group.requests.pods < 1:
            raise SizingInputError(
                f"pod group {group.workload!r}: count must be >= 0 and requests non-negative with "
                f"at least one pod slot, got count {group.count} and {group.requests}"
            )
