"""The planner at its ceilings (`sizing.kube.workloads`): the slowest inputs it still accepts.

- `MAX_WORKLOADS` distinct workloads sharing `MAX_PEAK_PODS` pods at peak (no surge), each of its
  own shape, on the getting-started NodePool in three zones, the optimal fleet skipped: every
  workload is a group of its own in every scenario.
- One Deployment whose `MAX_NODE_PER_POD_PODS` pods at peak each need a node (required hostname
  anti-affinity, 25 % surge) on the m5 family: the many-batch case of `benchmarks.scale`.
- One Deployment of 2,500 pods with the surge, spread over 400 values of a custom label of the
  NodePool (`sizing.planning.ceilings.MAX_TOPOLOGY_POD_DOMAINS` pods times domains).

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
from sizing.kube.objects import read_objects
from sizing.kube.workloads import MAX_NODE_PER_POD_PODS, MAX_PEAK_PODS, MAX_WORKLOADS, Workload
from sizing.planning.ceilings import MAX_TOPOLOGY_POD_DOMAINS
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import PlanInput, plan_capacity

SPREAD_PODS = 2_500


def many_workloads(count: int, pods: int) -> PlanInput:
    per_workload = pods // count
    workloads = tuple(
        Workload(f"w{i}", 100 + (i % 50) * 10, 128 + (i // 50) * 8, replicas=per_workload, max_surge=0)
        for i in range(count)
    )
    return PlanInput(workloads=workloads, zones=ZONES, solver_work_limit=None)


def custom_label_spread(pods: int, values: int) -> PlanInput:
    """A Deployment of `pods` pods with its 25 % surge, spread over `values` values of a custom label."""
    listed = ", ".join(f"rack-{i}" for i in range(values))
    text = f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: general}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}}
        - {{key: example.com/rack, operator: In, values: [{listed}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {pods * 4 // 5}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      topologySpreadConstraints:
        - {{topologyKey: example.com/rack, maxSkew: 1, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {{matchLabels: {{app: web}}}}}}
      containers: [{{name: web, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]
"""
    return plan_input_from_objects(read_objects([("benchmark", text)]))


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
        (
            f"{SPREAD_PODS // scale:,} pods spread over {MAX_TOPOLOGY_POD_DOMAINS // SPREAD_PODS:,} custom label values",
            custom_label_spread(SPREAD_PODS // scale, MAX_TOPOLOGY_POD_DOMAINS // SPREAD_PODS),
        ),
    ]
    print("| input | pods with surge | plan s (wall) | plan s (CPU) | nodes | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for label, plan_input in cases:
        started, cpu_started = time.perf_counter(), time.process_time()
        plan = plan_capacity(plan_input)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| {label} | {plan.pods_with_surge:,} | {seconds:.1f} | {cpu_seconds:.1f} | {len(plan.fleet.nodes)} | "
            f"{peak_mib:.0f} |",
            flush=True,
        )
    return 0
