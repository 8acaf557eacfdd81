"""The planner at its ceilings (`sizing.kube.workloads`): the slowest inputs it still accepts.

- `MAX_WORKLOADS` distinct workloads sharing `MAX_PEAK_PODS` pods at peak (no surge), each of its
  own shape, on the getting-started NodePool in three zones, the optimal fleet skipped: every
  workload is a group of its own in every scenario.
- One Deployment whose `MAX_NODE_PER_POD_PODS` pods at peak each need a node (required hostname
  anti-affinity, 25 % surge) on the m5 family: the many-batch case of `benchmarks.scale`.

Run it by name only (`python -m benchmarks ceilings`; `--quick` plans a tenth of each): it takes
minutes. CPU seconds are the process's own (`time.process_time`), which a busy machine changes
less than the wall clock. Peak memory is the process's maximum resident set, so each row is the
peak so far.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence

from benchmarks.scale import ZONES, one_pod_per_node
from sizing.kube.workloads import MAX_NODE_PER_POD_PODS, MAX_PEAK_PODS, MAX_WORKLOADS, Workload
from sizing.planning.planner import PlanInput, plan_capacity


def many_workloads(count: int, pods: int) -> PlanInput:
    per_workload = pods // count
    workloads = tuple(
        Workload(f"w{i}", 100 + (i % 50) * 10, 128 + (i // 50) * 8, replicas=per_workload, max_surge=0)
        for i in range(count)
    )
    return PlanInput(workloads=workloads, zones=ZONES, solver_work_limit=None)


def run(options: Sequence[str]) -> int:
    scale = 10 if "--quick" in options else 1
    cases = [
        (
            f"{MAX_WORKLOADS // scale:,} workloads, {MAX_PEAK_PODS // scale:,} pods",
            many_workloads(MAX_WORKLOADS // scale, MAX_PEAK_PODS // scale),
        ),
        (
            f"{MAX_NODE_PER_POD_PODS // scale:,} pods at peak, one per node",
            one_pod_per_node(MAX_NODE_PER_POD_PODS * 4 // 5 // scale),
        ),
    ]
    print("| input | pods at peak | plan s (wall) | plan s (CPU) | nodes | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for label, plan_input in cases:
        started, cpu_started = time.perf_counter(), time.process_time()
        plan = plan_capacity(plan_input)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| {label} | {plan.peak_pods:,} | {seconds:.1f} | {cpu_seconds:.1f} | {len(plan.fleet.nodes)} | "
            f"{peak_mib:.0f} |",
            flush=True,
        )
    return 0
