"""Whole plans at scale: `plan_capacity` for 1,000, 20,000 and 100,000 pods, with peak memory.

Workloads: pods of Karpenter's 30 benchmark shapes (see `benchmarks.planner`), one workload per
shape, HPA from minReplicas 1 with the default scale-up, 25 % surge, on the getting-started NodePool
(c, m, r; generation > 2; amd64; on-demand) of the bundled catalog in us-east-1's first three zones.
Every workload spreads its pods over the zones (topologySpreadConstraints on
topology.kubernetes.io/zone, maxSkew 1, DoNotSchedule), so every pod is placed as a constrained
one. Peak memory is the process's maximum resident set (`resource.getrusage`), which only grows,
so each row is the peak so far.

A second table plans one Deployment whose pods need a node each (required hostname pod
anti-affinity) on a NodePool of the m5 family (2 to 96 vCPU): the case where subtractMax makes
Karpenter launch the fleet over many batches, which every scenario then simulates one by one.

Options: --quick runs 1,000 and 20,000 pods (and 100 replicas) only; --unconstrained drops the zone
spread; --workers N sets the planner's processes (default: the cores it may use, at most 2, as
`python -m sizing plan` does).
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Sequence

from benchmarks.planner import benchmark_pods
from sizing.kube.scheduling import LabelSelector, PodAffinityTerm, PodScheduling, TopologySpread
from sizing.kube.workloads import MAX_PEAK_PODS, Workload
from sizing.planning.planner import CapacityPlan, NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.side_by_side import available_workers

POD_COUNTS = (1000, 20000, 100000)
ANTI_AFFINITY_REPLICAS = (100, 1000)
M5_FAMILY = ({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},)
TARGETS = {20000: 10.0, 100000: 60.0}
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
ZONE_KEY = "topology.kubernetes.io/zone"


def _zone_spread(name: str) -> PodScheduling:
    labels = {"app": name}
    spread = TopologySpread(ZONE_KEY, 1, "DoNotSchedule", LabelSelector(labels))
    return PodScheduling(labels=labels, topology_spread=(spread,))


def workloads(count: int, spread: bool = True) -> tuple[Workload, ...]:
    """About `count` pods at peak with their surge, of the 30 benchmark shapes; never more than the
    planner's ceiling (the draw is repeated with fewer replicas when the surge's rounding passes it)."""
    replicas = int(count / 1.25)
    while True:
        found = tuple(
            Workload(
                group.workload,
                group.requests.cpu,
                group.requests.memory,
                replicas=group.count,
                max_surge="25%",
                scheduling=_zone_spread(group.workload) if spread else PodScheduling(),
            )
            for group in benchmark_pods(replicas)
            if group.count > 0
        )
        excess = sum(w.peak_pods for w in found) - MAX_PEAK_PODS
        if excess <= 0:
            return found
        replicas -= excess


def one_pod_per_node(replicas: int) -> PlanInput:
    labels = {"app": "web"}
    anti = PodAffinityTerm("kubernetes.io/hostname", LabelSelector(labels), anti=True)
    web = Workload(
        "web",
        500,
        512,
        replicas=replicas,
        max_surge="25%",
        scheduling=PodScheduling(labels=labels, pod_affinity=(anti,)),
    )
    return PlanInput(workloads=(web,), node_pool=NodePoolSpec(requirements=M5_FAMILY), zones=ZONES)


def _timed(plan_input: PlanInput, workers: int) -> tuple[CapacityPlan, float, float]:
    started = time.perf_counter()
    plan = plan_capacity(plan_input, workers=workers)
    seconds = time.perf_counter() - started
    # The largest of this process and of the children it forked to simulate side by side.
    peak = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    )
    return plan, seconds, peak / 1024


def run(options: Sequence[str]) -> int:
    counts = POD_COUNTS[:2] if "--quick" in options else POD_COUNTS
    spread = "--unconstrained" not in options
    constraint = "zone spread, maxSkew 1" if spread else "none"
    workers = int(options[options.index("--workers") + 1]) if "--workers" in options else available_workers()
    print(f"{workers} worker{'s' if workers != 1 else ''}")
    print()
    print("| pods at peak | workloads | constraints | plan s | limit probes | limits | binding | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    status = 0
    for count in counts:
        plan_input = PlanInput(workloads=workloads(count, spread), zones=ZONES)
        plan, seconds, peak_mib = _timed(plan_input, workers)
        limits = plan.limits
        print(
            f"| {plan.pods_with_surge:,} | {len(plan_input.workloads)} | {constraint} | {seconds:.1f} | {limits.probes} | "
            f"{limits.spec()['cpu']} cpu, {limits.spec()['memory']} | {limits.binding[0]} | {peak_mib:.0f} |",
            flush=True,
        )
        target = TARGETS.get(count)
        if target is not None and seconds > target:
            print(f"  {count:,} pods: {seconds:.1f} s, over the target of {target:.0f} s", file=sys.stderr)
            status = 1
    print()
    print(
        "| replicas (one node each) | pods at peak | plan s | batches: peak, hpa-ramp, rollout | limits | peak RSS MiB |"
    )
    print("|---|---|---|---|---|---|")
    for replicas in ANTI_AFFINITY_REPLICAS[:1] if "--quick" in options else ANTI_AFFINITY_REPLICAS:
        plan, seconds, peak_mib = _timed(one_pod_per_node(replicas), workers)
        batches = ", ".join(str(plan.scenarios[name].batches) for name in ("peak", "hpa-ramp", "rollout"))
        spec = plan.limits.spec()
        print(
            f"| {replicas:,} | {plan.pods_with_surge:,} | {seconds:.1f} | {batches} | {spec['cpu']} cpu, {spec['memory']} | "
            f"{peak_mib:.0f} |",
            flush=True,
        )
    return status
