"""Independent tasks of the search, run side by side, with a result that does not depend on
how many run at once.

Each task gets a work budget of its own (`sizing.binpack.work.WorkClock.portion`) and
sees only what was known before the tasks started, so what it returns depends on its
budget alone. With several workers the tasks run on threads (the heavy parts, HiGHS's
integer programs and LPs, release Python's lock); with one worker they run one after the
other on the same budgets, and return the same results.

A task that proves the optimum makes the tasks after it (in the given order) pointless:
they are stopped early, and their results are dropped whether they ran or not, so a
stopped task never shows. The work charged is the most any counted task spent: tasks
meant to run side by side take the elapsed time of the longest, not the sum.

Under a wall-clock cap, side-by-side tasks share the time left; one after the other, each
gets an equal part of what is left when it starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from sizing.binpack import work

Result = TypeVar("Result")


def run_tasks(
    tasks: Sequence[Callable[[], Result]],
    units: float,
    seconds: float | None,
    workers: int,
    proves: Callable[[Result], bool],
) -> list[Result]:
    """The results of the counted tasks, in order: up to and including the first whose result
    `proves` the optimum, or all of them. Charges the current clock the most any of them spent.

    units: work budget of each task; seconds: the wall time they may take in all (under a cap).
    """
    parent = work.clock()
    if workers > 1 and len(tasks) > 1:
        clocks = [parent.portion(units, seconds) for _ in tasks]
        results: list[Result | None] = [None] * len(tasks)
        failures: list[BaseException] = []

        def run(k: int) -> None:
            try:
                with work.using(clocks[k]):
                    results[k] = tasks[k]()
                if proves(results[k]):  # type: ignore[arg-type]
                    for later in clocks[k + 1 :]:
                        later.stop()
            except BaseException as error:  # noqa: BLE001 - re-raised on the calling thread
                failures.append(error)
                for other in clocks:
                    other.stop()

        threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(1, len(tasks))]
        for thread in threads:
            thread.start()
        run(0)
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        counted: list[Result] = []
        spent = []
        for clock, result in zip(clocks, results, strict=True):
            assert result is not None  # every task ran to its end
            counted.append(result)
            spent.append(clock.spent - clock.origin)
            if proves(result):
                break
    else:
        counted, spent = [], []
        window_end = None if seconds is None else time.perf_counter() + seconds
        for k, task in enumerate(tasks):
            share = None if window_end is None else max(0.0, window_end - time.perf_counter()) / (len(tasks) - k)
            clock = parent.portion(units, share)
            with work.using(clock):
                result = task()
            counted.append(result)
            spent.append(clock.spent - clock.origin)
            if proves(result):
                break
    parent.charge(max(spent, default=0.0))
    return counted
