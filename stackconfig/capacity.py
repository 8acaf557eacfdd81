"""The capacity plan of a stack: the planner's input built from the stack configuration.

The test app at peak (HPA maxReplicas plus its rollout surge), the extra workloads and
DaemonSets of `capacity`, and the NodePool's requirements become a workload description
(the format of `python -m sizing plan FILE`), so a stack and a description file are planned
and validated the same way.
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

from sizing.planning.description import plan_input_from_document
from sizing.errors import SizingInputError
from sizing.planning.planner import CapacityPlan, PlanInput, plan_capacity
from sizing.planning.scenarios import HpaScaleUp
from stackconfig.errors import StackConfigError
from stackconfig.load import load_stack_file
from stackconfig.nodepool_presets import NODEPOOL_PRESETS
from sizing.planning.report import plan_data

NODEPOOL_LABEL = "karpenter.sh/nodepool"
ZONE_KEY = "topology.kubernetes.io/zone"


def capacity_description(config: Any, zones: Sequence[str] = ()) -> dict:
    """The workload description of a stack. zones: the zones the NodePool may use (empty when
    they are not known offline, which changes nothing unless a pod asks for a zone)."""
    app, pool, capacity = config.app, config.node_pool, config.capacity
    requirements = pool.requirements if pool.requirements is not None else NODEPOOL_PRESETS[pool.preset]
    requirement_objects = [requirement.to_dict() for requirement in requirements]
    node_pool_zones = list(pool.zones) if pool.zones is not None else list(zones)
    if node_pool_zones:
        requirement_objects.append({"key": ZONE_KEY, "operator": "In", "values": node_pool_zones})
    node_pool: dict = {"name": pool.name, "requirements": requirement_objects}
    if pool.limits is not None:
        node_pool["limits"] = {key: value for key, value in (("cpu", pool.limits.cpu), ("memory", pool.limits.memory)) if value}
    test_app = {
        "name": app.name,
        "requests": {"cpu": app.cpu_request, "memory": app.memory_request},
        "maxReplicas": app.hpa.max_replicas,
        "maxSurge": f"{app.max_surge_percent}%",
        "nodeSelector": {NODEPOOL_LABEL: pool.name},
    }
    return {
        "region": config.region,
        "zones": node_pool_zones,
        "nodePool": node_pool,
        "workloads": [test_app, *capacity.workloads],
        "daemonSets": list(capacity.daemon_sets),
        "headroomPercent": capacity.headroom_percent,
        "maxPodsPerNode": capacity.max_pods_per_node,
        "priceOverrides": dict(capacity.price_overrides),
        "solverWorkLimit": capacity.solver_work_limit,
    }


def plan_for(config: Any, zones: Sequence[str] = ()) -> CapacityPlan:
    """The capacity plan of a validated stack configuration; bad capacity input raises
    StackConfigError naming it, and so do explicit limits below the peak unless acknowledged."""
    description = capacity_description(config, zones)
    plan = _plan(json.dumps(description, sort_keys=True), config.app.name, config.app.hpa.min_replicas)
    check = plan.current_limits
    if check is not None and not check.sufficient and not config.node_pool.acknowledge_limits_below_peak:
        pending = len(check.result.pending)
        raise StackConfigError(
            [
                f"`nodePool.limits` {dict(check.limits)} leave {pending} pod(s) pending at peak; the plan needs "
                f"{plan.node_pool_limits}. Raise the limits, remove them to use the planned ones, or set "
                "nodePool.acknowledgeLimitsBelowPeak: true"
            ]
        )
    return plan


def node_pool_limits(config: Any, plan: CapacityPlan) -> dict[str, str]:
    """`spec.limits` of the NodePool: the planned ones, with any configured override applied."""
    limits = dict(plan.node_pool_limits)
    override = config.node_pool.limits
    if override is not None:
        limits.update({key: value for key, value in (("cpu", override.cpu), ("memory", override.memory)) if value})
    return limits


def plan_summary(plan: CapacityPlan) -> dict:
    """The plan as a stack output: fleet, cost per hour, limits, lower bound, gap, recommendation.
    `python -m sizing plan --stack <stack>` prints the whole plan."""
    data = plan_data(plan)
    fleet, optimal = data["fleet"], data["optimal"]
    by_type: dict[str, int] = {}
    for node in fleet["nodes"]:
        by_type[node["instanceType"]] = by_type.get(node["instanceType"], 0) + 1
    return {
        "priceUnit": data["priceUnit"],
        "peakPods": data["peakPods"],
        "fleet": {
            "nodes": fleet["nodeCount"],
            "instanceTypes": dict(sorted(by_type.items())),
            "costPerHour": fleet["cost"],
            "podsPending": fleet["podsPending"],
        },
        "limits": data["limits"]["spec"],
        "limitsSetBy": data["limits"]["bindingScenario"],
        "scenarios": {
            name: {"nodes": run["nodeCount"], "capacity": run["capacity"], "podsPending": run["podsPending"]}
            for name, run in data["scenarios"].items()
        },
        "optimal": None if optimal is None else {
            "status": optimal["status"],
            "nodes": optimal["nodeCount"],
            "costPerHour": optimal["cost"],
            "lowerBound": optimal["lowerBound"],
        },
        "gap": data["gap"],
        "recommendation": data["recommendation"]["summary"],
        "notes": data["notes"],
    }


def plan_input_for_stack(stack: str, project_dir: Path) -> PlanInput:
    """The planner's input for `Pulumi.<stack>.yaml` (for `python -m sizing plan --stack`)."""
    config = load_stack_file(Path(project_dir) / f"Pulumi.{stack}.yaml")
    description = json.dumps(capacity_description(config), sort_keys=True)
    return _plan_input(description, config.app.name, config.app.hpa.min_replicas)


def _plan_input(description_json: str, app_name: str, app_min_replicas: int) -> PlanInput:
    """The description's input, with the test app's HPA minReplicas for the HPA ramp scenario."""
    try:
        plan_input = plan_input_from_document(json.loads(description_json))
        return replace(plan_input, hpa_scale_up={app_name: HpaScaleUp(min_replicas=app_min_replicas)})
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None


@functools.lru_cache(maxsize=32)
def _plan(description_json: str, app_name: str, app_min_replicas: int) -> CapacityPlan:
    # Planning is deterministic; a stack evaluated again (tests, make plan) reuses its plan.
    plan_input = _plan_input(description_json, app_name, app_min_replicas)
    try:
        return plan_capacity(plan_input)
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None
