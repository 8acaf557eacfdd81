"""The way down at scale, for the plans of `benchmarks.scale` at 1,000, 20,000 and 100,000 pods
(30 benchmark shapes, zone spread, getting-started NodePool).

The way down is the reference setup's: every HPA scales in to minReplicas 1 under Kubernetes'
default scale-down (300 s window, then 100 % per 15 s) and the NodePool consolidates `WhenEmpty`
after 30 s with the default budget (10 % of the nodes), then again `WhenEmptyOrUnderutilized`,
each of whose commands takes a scheduling simulation per candidate tried, as Karpenter's do. Per row: the whole plan without the way down and with it (`PlanInput.way_down`, which also
checks the planned limits against it), and one way down alone from the planned peak fleet under
the planned limits.

Options: --quick runs 1,000 and 20,000 pods only; --pods N runs one of the counts; --workers N as
for `benchmarks.scale`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from benchmarks.scale import POD_COUNTS, ZONES, workloads
from sizing.karpenter.simulation.disruption import WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED, DisruptionPolicy
from sizing.planning.planner import PlanInput, plan_capacity
from sizing.planning.resolution import resolve
from sizing.planning.scenario_setup import scenario_setup
from sizing.planning.scenarios import PEAK
from sizing.planning.side_by_side import available_workers
from sizing.planning.way_down import WayDownSettings, run_way_down


def run(options: Sequence[str]) -> int:
    counts: tuple[int, ...] = POD_COUNTS[:2] if "--quick" in options else POD_COUNTS
    if "--pods" in options:
        counts = (int(options[options.index("--pods") + 1]),)
    workers = int(options[options.index("--workers") + 1]) if "--workers" in options else available_workers()
    print(f"{workers} worker{'s' if workers != 1 else ''}")
    print()
    print(
        "| pods at peak | policy | plan s | plan s with the way down | one way down s | commands | "
        "nodes: peak → at rest | USD/hour: peak → at rest | s to rest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for count in counts:
        base = PlanInput(workloads=workloads(count), zones=ZONES)
        started = time.perf_counter()
        plan = plan_capacity(base, workers=workers)
        without = time.perf_counter() - started
        context = resolve(base)
        setup = scenario_setup(base, context, context.options)
        peak = plan.scenarios[PEAK].result
        minimum = {w.name: 1 for w in base.workloads}
        for policy in (WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED):
            settings = WayDownSettings(policies={"default": DisruptionPolicy(policy, 30)})
            started = time.perf_counter()
            plan_capacity(replace(base, way_down=settings), workers=workers)
            with_it = time.perf_counter() - started
            started = time.perf_counter()
            way = run_way_down(setup, peak, settings, minimum, plan.limits.for_simulation())
            alone = time.perf_counter() - started
            print(
                f"| {plan.pods_with_surge:,} | {policy} | {without:.1f} | {with_it:.1f} | {alone:.1f} | "
                f"{len(way.result.steps)} | {way.start_nodes} → {len(way.result.nodes)} | "
                f"{way.start_cost:.2f} → {way.cost:.2f} | {way.result.end} |",
                flush=True,
            )
    return 0
