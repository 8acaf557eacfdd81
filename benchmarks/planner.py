"""Capacity planner benchmarks: simulation throughput and a whole `plan` run.

1. Simulation throughput on Karpenter's own benchmark shape: pods of 30
   shapes (cpu {100, 250, 500, 1000, 1500} m x memory {100, 256, 512, 1024,
   2048, 4096} MiB, uniform, seed 42) over 400 made-up instance types as in
   Karpenter's `fake.InstanceTypes(400)` (type i: i+1 vCPU, 2(i+1) GiB,
   10(i+1) pods, price 0.1 per vCPU + 0.1 per GiB, kube-reserved 100m/10Mi).
   Target: 20,000 pods in at most 1 s.
2. The same pods over the bundled catalog filtered by the getting-started
   NodePool (c, m, r; generation > 2; amd64; on-demand), with Karpenter's
   allocatable and the default DaemonSets; then over m5.large alone, where
   every NodeClaim holds few pods and there are thousands of them; then with
   offerings that differ by zone and spot priced per zone (every third type
   offered in two of three zones only, a third of the pod shapes pinned to
   one zone), which makes NodeClaims keep only the types offered where they go.
3. `python -m sizing plan FILE` end to end (a new process, imports included)
   for a description like the dev stack's. Target: under 2 s. Then, for
   information, a three-workload description on the getting-started NodePool,
   where the solver runs (time limit 5 s).

Options: --quick runs fewer repetitions.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import numpy as np

from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate
from sizing.kube.resources import Resources

PROJECT_DIR = Path(__file__).resolve().parents[1]
CPU_SHAPES = (100, 250, 500, 1000, 1500)
MEMORY_SHAPES = (100, 256, 512, 1024, 2048, 4096)
POD_COUNTS = (1000, 5000, 20000)
SEED = 42
THROUGHPUT_TARGET = 20000  # pods per second
PLAN_TARGET_SECONDS = 2.0
DEV_DESCRIPTION = """\
region: ap-northeast-1
priceOverrides: {m5.large: 0.124}
nodePool:
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
    - {key: topology.kubernetes.io/zone, operator: In, values: [ap-northeast-1a, ap-northeast-1c]}
workloads:
  - name: test-app
    requests: {cpu: 100m, memory: 64Mi}
    maxReplicas: 10
    maxSurge: 100%
"""
BROAD_DESCRIPTION = """\
region: us-east-1
maxPodsPerNode: 30
workloads:
  - {name: api, requests: {cpu: 250m, memory: 512Mi}, maxReplicas: 40, maxSurge: 100%}
  - {name: web, requests: {cpu: 500m, memory: 1Gi}, maxReplicas: 20, maxSurge: 25%}
  - {name: worker, requests: {cpu: 1500m, memory: 3Gi}, maxReplicas: 10, maxSurge: 1}
"""


def fake_instance_types(count: int) -> tuple[NodeOption, ...]:
    """Karpenter's fake.InstanceTypes(count) as NodeOptions (cpu m, memory MiB, USD/hour)."""
    options = []
    for index in range(count):
        vcpu = index + 1
        capacity = Resources(vcpu * 1000, 2 * vcpu * 1024, 10 * vcpu)
        price = 0.1 * vcpu + 0.1 * 2 * vcpu
        options.append(NodeOption(f"fake-it-{index}", capacity, capacity - Resources(100, 10, 0), price))
    return tuple(options)


def benchmark_pods(count: int, seed: int = SEED) -> tuple[PodGroup, ...]:
    """`count` pods of the 30 benchmark shapes drawn uniformly, grouped by shape."""
    rng = np.random.default_rng(seed)
    cpu = rng.integers(0, len(CPU_SHAPES), count)
    memory = rng.integers(0, len(MEMORY_SHAPES), count)
    counts = np.bincount(cpu * len(MEMORY_SHAPES) + memory, minlength=len(CPU_SHAPES) * len(MEMORY_SHAPES))
    groups = []
    for shape, pods in enumerate(counts):
        c, m = CPU_SHAPES[shape // len(MEMORY_SHAPES)], MEMORY_SHAPES[shape % len(MEMORY_SHAPES)]
        groups.append(PodGroup(f"shape-{c}m-{m}Mi", Resources(c, m, 1), int(pods)))
    return tuple(groups)


T = TypeVar("T")


def _best_of(repeats: int, action: Callable[[], T]) -> tuple[float, T]:
    """The fastest of `repeats` runs (at least one) and the last result."""
    start = time.perf_counter()
    result = action()
    best = time.perf_counter() - start
    for _ in range(repeats - 1):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def _catalog_options() -> tuple[NodeOption, ...]:
    from sizing.kube.workloads import Workload
    from sizing.planning.planner import NodePoolSpec, PlanInput, node_options

    probe = PlanInput(workloads=(Workload("probe", 100, 100, 1),), node_pool=NodePoolSpec())
    return node_options(probe)


OFFERING_ZONES = ("zone-a", "zone-b", "zone-c")


def with_zonal_offerings(options: Sequence[NodeOption]) -> tuple[NodeOption, ...]:
    """The options with offerings per zone: every third type only in the first two zones, spot at
    30 / 40 / 50 % of on-demand in zone a / b / c."""
    zonal = []
    for index, option in enumerate(options):
        zones = OFFERING_ZONES if index % 3 else OFFERING_ZONES[:2]
        offerings = {
            "on-demand": {zone: option.price for zone in zones},
            "spot": {zone: option.price * (0.3 + 0.1 * OFFERING_ZONES.index(zone)) for zone in zones},
        }
        zonal.append(replace(option, offerings=offerings))
    return tuple(zonal)


def zone_pinned(groups: Sequence[PodGroup]) -> tuple[PodGroup, ...]:
    """Every third pod shape pinned to one zone, in turn."""
    return tuple(
        replace(group, zones=frozenset({OFFERING_ZONES[index // 3 % 3]})) if index % 3 == 0 else group
        for index, group in enumerate(groups)
    )


def simulation_rows(options: Sequence[NodeOption], repeats: int, zonal: bool = False) -> list[str]:
    rows = []
    for count in POD_COUNTS:
        if zonal:
            scenario = Scenario(
                tuple(options),
                zone_pinned(benchmark_pods(count)),
                zones=frozenset(OFFERING_ZONES),
                capacity_types=("spot", "on-demand"),
            )
        else:
            scenario = Scenario(tuple(options), benchmark_pods(count))
        seconds, result = _best_of(repeats, functools.partial(simulate, scenario))
        rows.append(
            f"| {count:,} | {len(options)} | {seconds * 1000:.1f} ms | {count / seconds:,.0f} | "
            f"{len(result.nodes)} | {result.cost:.2f} |"
        )
    return rows


def plan_runs(description_text: str, repeats: int, *extra: str) -> tuple[list[float], str]:
    """Wall-clock seconds of `python -m sizing plan FILE` in a new process, per run, and the last output."""
    times = []
    output = ""
    with tempfile.TemporaryDirectory() as directory:
        description = Path(directory) / "plan.yaml"
        description.write_text(description_text, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(PROJECT_DIR))
        for _ in range(repeats):
            start = time.perf_counter()
            completed = subprocess.run(
                [sys.executable, "-m", "sizing", "plan", str(description), *extra],
                cwd=PROJECT_DIR,
                env=env,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - start)
            if completed.returncode != 0:
                raise RuntimeError(f"python -m sizing plan failed: {completed.stderr.strip()}")
            output = completed.stdout
    return times, output


def run(options: Sequence[str]) -> int:
    repeats = 1 if "--quick" in options else 5
    header = [
        f"| pods | instance types | time (best of {repeats}) | pods/s | nodes | cost |",
        "|---|---|---|---|---|---|",
    ]
    status = 0
    print("Simulation, fake.InstanceTypes(400):")
    fake_rows = simulation_rows(fake_instance_types(400), repeats)
    print("\n".join(header + fake_rows))
    seconds, _ = _best_of(repeats, lambda: simulate(Scenario(fake_instance_types(400), benchmark_pods(20000))))
    throughput = 20000 / seconds
    verdict = "meets" if throughput >= THROUGHPUT_TARGET else "MISSES"
    print(f"20,000 pods: {throughput:,.0f} pods/s, {verdict} the target of {THROUGHPUT_TARGET:,} pods/s")
    status |= throughput < THROUGHPUT_TARGET
    print()
    catalog_options = _catalog_options()
    print("Simulation, bundled catalog, getting-started NodePool (c/m/r, generation > 2, amd64):")
    print("\n".join(header + simulation_rows(catalog_options, repeats)))
    print()
    print("Simulation, bundled catalog, m5.large only (many small NodeClaims, the slow case):")
    m5_large = [option for option in catalog_options if option.name == "m5.large"]
    print("\n".join(header + simulation_rows(m5_large, repeats)))
    print()
    print("Simulation, getting-started NodePool with offerings by zone, spot per zone, a third of the pods pinned:")
    print("\n".join(header + simulation_rows(with_zonal_offerings(catalog_options), repeats, zonal=True)))
    print()
    times, _ = plan_runs(DEV_DESCRIPTION, max(repeats // 2, 1) + 1)
    worst = max(times)
    verdict = "meets" if worst < PLAN_TARGET_SECONDS else "MISSES"
    print(
        f"python -m sizing plan (dev-like description), wall clock: median {statistics.median(times):.2f} s, "
        f"worst {worst:.2f} s over {len(times)} runs; {verdict} the target of {PLAN_TARGET_SECONDS:.0f} s"
    )
    status |= worst >= PLAN_TARGET_SECONDS
    times, output = plan_runs(BROAD_DESCRIPTION, 1, "--json")
    plan = json.loads(output)
    optimal = plan["optimal"]
    print(
        f"python -m sizing plan (three workloads, {len(plan['instanceTypes'])} types): {times[0]:.2f} s; "
        f"Karpenter: {plan['fleet']['nodeCount']} node(s), {plan['fleet']['cost']:.3f} USD/h, optimal fleet "
        f"({optimal['status']}): {optimal['nodeCount']} node(s), {optimal['cost']:.3f} USD/h, lower bound "
        f"{optimal['lowerBound']['cost']:.3f}; recommendation: {plan['recommendation']['summary']}"
    )
    return int(status)
