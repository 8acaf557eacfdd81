"""Whole plans on real cluster shapes: pods sized as in public production traces, per phase.

Shapes: the cpu and memory requests of two of Alibaba's public cluster traces
(`benchmarks/data/alibaba_pod_shapes.json`, see `benchmarks/data/README.md`): "openb", 103 distinct
shapes from 1 to 120 cores and up to 720 GiB; "dlrm", 36 shapes of 4 to 192 cores and up to 1,000
GiB. Each shape is one Deployment (HPA from 1, default scale-up, 25 % surge), its replicas the
shape's share of the pods at peak, rounded by largest remainder. Three cases:

- openb on a wide NodePool (every amd64 type of the bundled catalog, on-demand: several hundred);
- openb's shapes scaled by 1/16 on m5.large alone, those that still fit one beside the DaemonSets
  (at most 1600m and 6500Mi): many distinct small pods on a single type, so a plan needs
  thousands of nodes;
- dlrm on the wide NodePool.

Every node also runs two DaemonSets of its own (a log shipper and a metrics agent). Each row is one
plan in a fresh process, so its peak memory is its own; the columns after "plan s" split it into
the planner's phases.

Options: --quick plans 1,000 and 20,000 pods only; --case NAME (openb-wide, openb-small-m5,
dlrm-wide) one case; --pods N one size; --workers N the planner's processes (default: the cores
available, at most 2; the plans are the same with any number).

--fleet-quality instead plans each case (20,000 pods, or --pods N) twice, with the default solver
budget and with LONG_WORK_LIMIT units, and reports how far the default's optimal fleet is from the
best lower bound either run proves: the default's own bound is often the aggregate LP's, which is
weak where pods are large, so its gap overstates how far the fleet is from the optimum.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sizing.kube.workloads import DEFAULT_DAEMON_SETS, MAX_PEAK_PODS, DaemonSet, Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.side_by_side import available_workers

SHAPES = Path(__file__).resolve().parent / "data" / "alibaba_pod_shapes.json"
POD_COUNTS = (1000, 20000, 100000)
TARGETS = {20000: 10.0, 100000: 60.0}
MEMORY_TARGET_MIB = 1024
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
SMALL_DIVISOR = 16
# The largest scaled shape kept for m5.large (1805m and 6911Mi of room after the EKS DaemonSets,
# less this benchmark's two).
SMALL_LIMIT = (1600, 6500)
WIDE = (
    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
)
M5_LARGE = (
    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
)
DAEMON_SETS = DEFAULT_DAEMON_SETS + (
    DaemonSet("log-shipper", cpu_millicores=100, memory_mib=128),
    DaemonSet("metrics-agent", cpu_millicores=50, memory_mib=64),
)
CASES = ("openb-wide", "openb-small-m5", "dlrm-wide")
LONG_WORK_LIMIT = 40_000
SURGE = 1.25


def _shapes(trace: str, divisor: int = 1) -> list[tuple[int, int, int]]:
    """(cpu m, memory MiB, weight) of the trace's shapes, divided by `divisor` and merged."""
    merged: dict[tuple[int, int], int] = {}
    for cpu, memory, count in json.loads(SHAPES.read_text())[trace]["shapes"]:
        key = (max(1, cpu // divisor), max(1, memory // divisor))
        merged[key] = merged.get(key, 0) + count
    return [(cpu, memory, count) for (cpu, memory), count in sorted(merged.items())]


def _replicas(weights: Sequence[int], total: int) -> list[int]:
    """`total` split in proportion to `weights`, by largest remainder (ties by position)."""
    whole = sum(weights)
    exact = [total * weight / whole for weight in weights]
    counts = [int(value) for value in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def case_input(case: str, pods: int) -> PlanInput:
    """The plan input of `case` with about `pods` pods at peak, the rollout surge included."""
    trace = case.split("-")[0]
    shapes = _shapes(trace, SMALL_DIVISOR if case == "openb-small-m5" else 1)
    if case == "openb-small-m5":
        shapes = [
            (cpu, memory, n) for cpu, memory, n in shapes if (cpu, memory) <= SMALL_LIMIT and memory <= SMALL_LIMIT[1]
        ]
    replicas = round(pods / SURGE)
    while True:
        counts = _replicas([weight for _, _, weight in shapes], replicas)
        workloads = tuple(
            Workload(f"{trace}-{cpu}m-{memory}Mi", cpu, memory, replicas=count, max_surge="25%")
            for (cpu, memory, _), count in zip(shapes, counts, strict=True)
            if count > 0
        )
        # The surge of each shape rounds up: fewer replicas until the planner's ceiling holds.
        excess = sum(w.peak_pods for w in workloads) - MAX_PEAK_PODS
        if excess <= 0:
            break
        replicas -= excess
    requirements = M5_LARGE if case == "openb-small-m5" else WIDE
    return PlanInput(
        workloads=workloads,
        node_pool=NodePoolSpec(requirements=requirements),
        zones=ZONES,
        daemon_sets=DAEMON_SETS,
    )


class _Phases:
    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def step(self, done: str) -> None:
        now = time.perf_counter()
        self.seconds[done] = now - self.last
        self.last = now


def measure(case: str, pods: int, workers: int) -> dict[str, object]:
    """One plan of `case`: its seconds in all and per phase, peak memory, and what it planned."""
    plan_input = case_input(case, pods)
    phases = _Phases()
    started = time.perf_counter()
    plan = plan_capacity(plan_input, phases, workers=workers)
    return {
        "case": case,
        "pods": plan.pods_with_surge,
        "shapes": len(plan_input.workloads),
        "types": len(plan.instance_types),
        "seconds": time.perf_counter() - started,
        "phases": phases.seconds,
        # The largest of this process and of the children it forked to simulate side by side.
        "peakMib": max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        )
        / 1024,
        "nodes": len(plan.fleet.nodes),
        "limits": plan.limits.spec(),
        "probes": plan.limits.probes,
        "fleet": None
        if plan.optimal is None
        else {
            "status": plan.optimal.status,
            "cost": plan.optimal.cost,
            "bound": plan.optimal.lower_bound_cost,
            "work": plan.optimal.work,
        },
    }


PHASES = ("instance types and pods", "limits and scenarios", "optimal fleet", "recommendation")


def _fleet_gap(fleet: dict[str, object] | None) -> str:
    """The optimal fleet's cost over its lower bound, and its status."""
    if fleet is None:
        return "no solver"
    cost, bound = float(str(fleet["cost"])), float(str(fleet["bound"]))
    gap = cost / bound - 1 if bound > 0 else 0.0
    return f"{100 * gap:.2f} % ({fleet['status']})"


def fleet_quality(cases: Sequence[str], pods: int, workers: int) -> int:
    """The default budget's optimal fleet against the bound of a LONG_WORK_LIMIT run (see the
    module docstring), one row per case."""
    print(
        f"| case | pods | default cost/h | default bound | over it | default s | "
        f"{LONG_WORK_LIMIT:,} units cost/h | its bound | s | default over the best bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        plan_input = case_input(case, pods)
        found = []
        for limit in (plan_input.solver_work_limit, LONG_WORK_LIMIT):
            started = time.perf_counter()
            plan = plan_capacity(replace(plan_input, solver_work_limit=limit), workers=workers)
            if plan.optimal is None:
                raise RuntimeError(f"{case}: the plan has no optimal fleet")
            found.append((plan.optimal, time.perf_counter() - started))
        (default, default_seconds), (long, long_seconds) = found
        best_bound = max(default.lower_bound_cost, long.lower_bound_cost)
        print(
            f"| {case} | {plan.pods_with_surge:,} | {default.cost:.3f} | {default.lower_bound_cost:.3f} | "
            f"{100 * (default.cost / default.lower_bound_cost - 1):.2f} % | {default_seconds:.1f} | "
            f"{long.cost:.3f} | {long.lower_bound_cost:.3f} | {long_seconds:.1f} | "
            f"{100 * (default.cost / best_bound - 1):.2f} % |",
            flush=True,
        )
    return 0


def run(options: Sequence[str]) -> int:
    cases = [options[options.index("--case") + 1]] if "--case" in options else list(CASES)
    if "--pods" in options:
        counts: Sequence[int] = [int(options[options.index("--pods") + 1])]
    else:
        counts = POD_COUNTS[:2] if "--quick" in options else POD_COUNTS
    workers = int(options[options.index("--workers") + 1]) if "--workers" in options else available_workers()
    if "--fleet-quality" in options:
        return fleet_quality(cases, counts[0] if "--pods" in options else 20000, workers)
    print(
        "| case | pods | shapes | types | plan s | inputs s | limits and scenarios s | optimal fleet s | "
        "recommendation s | rest s | nodes | limits | peak RSS MiB | optimal fleet over its bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    status = 0
    for case in cases:
        for count in counts:
            # A process per plan: its peak memory is its own.
            found = subprocess.run(
                [sys.executable, "-m", "benchmarks.trace_shapes", "--one", case, str(count), str(workers)],
                capture_output=True,
                text=True,
                check=True,
            )
            # HiGHS may write a line of its own to stdout first: the row is the last line.
            row = json.loads(found.stdout.splitlines()[-1])
            phases = row["phases"]
            named = [phases.get(name, 0.0) for name in PHASES]
            rest = row["seconds"] - sum(named)
            limits = row["limits"]
            print(
                f"| {case} | {row['pods']:,} | {row['shapes']} | {row['types']} | {row['seconds']:.1f} | "
                + " | ".join(f"{value:.1f}" for value in named)
                + f" | {rest:.1f} | {row['nodes']:,} | {limits['cpu']} cpu, {limits['memory']} | "
                f"{row['peakMib']:.0f} | {_fleet_gap(row['fleet'])} |",
                flush=True,
            )
            target = TARGETS.get(count)
            if target is not None and row["seconds"] > target:
                print(
                    f"  {case}, {count:,} pods: {row['seconds']:.1f} s, over the target of {target:.0f} s",
                    file=sys.stderr,
                )
                status = 1
            if row["peakMib"] > MEMORY_TARGET_MIB:
                print(
                    f"  {case}, {count:,} pods: {row['peakMib']:.0f} MiB, over {MEMORY_TARGET_MIB} MiB", file=sys.stderr
                )
                status = 1
    return status


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        json.dump(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])), sys.stdout)
    else:
        sys.exit(run(sys.argv[1:]))
