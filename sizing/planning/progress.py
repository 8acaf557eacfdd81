"""How a plan tells its phases as they end: the `Progress` protocol and its default, a line on
stderr once a plan has taken a few seconds (times in seconds)."""

from __future__ import annotations

import sys
import time
from typing import Protocol

PROGRESS_AFTER_SECONDS = 3.0


class Progress(Protocol):
    """Told the name of each phase of a plan as it ends (a benchmark times them)."""

    def step(self, done: str) -> None: ...


class StderrProgress:
    """One line on stderr per finished step, once a plan has taken more than a few seconds.

    Only the progress lines look at the clock: the plan itself never depends on it.
    """

    def __init__(self, pods: int):
        self.started = time.perf_counter()
        self.pods = pods

    def step(self, done: str) -> None:
        elapsed = time.perf_counter() - self.started
        if elapsed > PROGRESS_AFTER_SECONDS:
            print(f"sizing: {self.pods:,} pods: {done} after {elapsed:.0f} s", file=sys.stderr, flush=True)
