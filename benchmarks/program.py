"""How long one evaluation of the Pulumi program under mocks takes, per stack."""

from __future__ import annotations

import statistics
import time

from offline import run_program
from offline.program import PROJECT_DIR
from stackplan import capacity

ROUNDS = 5


def run(options: list[str]) -> int:
    stacks = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in PROJECT_DIR.glob("Pulumi.*.yaml"))
    started = time.perf_counter()
    run_program(stacks[0])
    print(f"first evaluation, including imports: {time.perf_counter() - started:.2f} s")
    for stack in stacks:
        seconds = []
        for _ in range(ROUNDS):
            # Each evaluation plans the capacity again, as a real `pulumi up` does.
            capacity._plan.cache_clear()
            started = time.perf_counter()
            recording = run_program(stack)
            seconds.append(time.perf_counter() - started)
        print(
            f"stack {stack}: {len(recording.resources)} resources, one evaluation "
            f"median {statistics.median(seconds):.2f} s, min {min(seconds):.2f} s, max {max(seconds):.2f} s "
            f"over {ROUNDS} runs (target: under 5 s)"
        )
    return 0
