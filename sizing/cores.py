"""How many cores this process may use: the default for work run side by side."""

from __future__ import annotations

import os


def available_cores(at_most: int) -> int:
    """The cores this process may run on (its CPU affinity where the platform has one), at
    least 1 and at most `at_most`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(at_most, cores))
