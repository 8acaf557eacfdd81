"""The capacity plan of a stack: the planner's input built from the stack configuration.

The test app at peak (HPA maxReplicas plus its rollout surge), the extra workloads and
DaemonSets of `capacity`, and the NodePool's requirements become a workload description
(the format of `python -m sizing plan FILE`), so a stack and a description file are planned
and validated the same way.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sizing.errors import SizingInputError
from sizing.planning.description import plan_input_from_document
from sizing.planning.planner import CapacityPlan, PlanInput, plan_capacity
from sizing.planning.report import plan_data
from sizing.planning.scenarios import HpaScaleUp
from stackconfig.errors import StackConfigError
from stackconfig.load import load_stack_file
from stackconfig.nodepool_presets import NODEPOOL_PRESETS
from stackconfig.system_pods import system_pods
from stackconfig.vpc_capacity import check_fleet_fits, check_pods_fit, fleet_demand, quota_warnings

NODEPOOL_LABEL = "karpenter.sh/nodepool"
ZONE_KEY = "topology.kubernetes.io/zone"


def capacity_description(config: Any, zones: Sequence[str] = ()) -> dict:
    """The workload description of a stack: the test app at peak (unless `deployTestApp` is false)
    and `capacity.workloads`. zones: the zones the NodePool may use (empty when they are not known
    offline, which changes nothing unless a pod asks for a zone)."""
    app, pool, capacity = config.app, config.node_pool, config.capacity
    requirements = pool.requirements if pool.requirements is not None else NODEPOOL_PRESETS[pool.preset]
    requirement_objects = [requirement.to_dict() for requirement in requirements]
    node_pool_zones = list(pool.zones) if pool.zones is not None else list(zones)
    if node_pool_zones:
        requirement_objects.append({"key": ZONE_KEY, "operator": "In", "values": node_pool_zones})
    node_pool: dict = {"name": pool.name, "requirements": requirement_objects}
    if pool.limits is not None:
        node_pool["limits"] = {
            key: value for key, value in (("cpu", pool.limits.cpu), ("memory", pool.limits.memory)) if value
        }
    test_app = {
        "name": app.name,
        "requests": {"cpu": app.cpu_request, "memory": app.memory_request},
        "maxReplicas": app.hpa.max_replicas,
        "maxSurge": f"{app.max_surge_percent}%",
        "nodeSelector": {NODEPOOL_LABEL: pool.name},
    }
    deployed_app = [test_app] if config.deploy_test_app else []
    return {
        "region": config.region,
        "zones": node_pool_zones,
        "nodePool": node_pool,
        "workloads": [*deployed_app, *(_as_written(entry) for entry in capacity.workloads)],
        "daemonSets": [_as_written(entry) for entry in capacity.daemon_sets],
        "headroomPercent": capacity.headroom_percent,
        "maxPodsPerNode": capacity.max_pods_per_node,
        "priceOverrides": dict(capacity.price_overrides),
        "solverWorkLimit": capacity.solver_work_limit,
    }


def _as_written(entry: BaseModel) -> dict:
    """A validated entry back as the description's YAML has it (camelCase, only what was given)."""
    return entry.model_dump(by_alias=True, exclude_unset=True)


def plan_for(config: Any, zones: Sequence[str] = ()) -> CapacityPlan:
    """The capacity plan of a validated stack configuration; bad capacity input raises
    StackConfigError naming it, and so do explicit limits below the peak unless acknowledged,
    and a peak whose pods and nodes the VPC's private subnets cannot hold."""
    description_json = json.dumps(capacity_description(config, zones), sort_keys=True)
    plan_input = _plan_input(description_json, *_app_ramp(config))
    zone_count = config.network.availability_zones
    try:
        # Cheap, before planning: a peak of millions of pods is refused without simulating it.
        check_pods_fit(config, zone_count, sum(workload.peak_pods for workload in plan_input.workloads))
        plan = _plan(description_json, *_app_ramp(config))
        check_fleet_fits(config, zone_count, fleet_demand(peak_nodes(config, plan)))
    except ValueError as error:
        if isinstance(error, StackConfigError):
            raise
        raise StackConfigError([str(error)]) from None
    check = plan.current_limits
    if check is not None and not check.sufficient and not config.node_pool.acknowledge_limits_below_peak:
        pending = ", ".join(
            f"{run.result.pending_count} in the {name} scenario"
            for name, run in check.runs.items()
            if not run.placed_all
        )
        raise StackConfigError(
            [
                f"`nodePool.limits` {dict(check.limits)} leave pods pending ({pending}); the plan needs "
                f"{plan.node_pool_limits}. Raise the limits, remove them to use the planned ones, or set "
                "nodePool.acknowledgeLimitsBelowPeak: true"
            ]
        )
    return plan


def peak_nodes(config: Any, plan: CapacityPlan) -> list[tuple[str, int]]:
    """(instance type, pods on the VPC network) of every node at peak: the system node group at
    maxSize with the system pods spread over it, then the planned fleet with its pods and the
    configured DaemonSets (the EKS DaemonSets use the host's network and take no address)."""
    group = config.node_group
    system_pod_count = sum(pod.replicas for pod in system_pods(config.addons))
    per_system_node = math.ceil(system_pod_count / group.max_size)
    daemon_pods = len(config.capacity.daemon_sets)
    return [(group.instance_types[0], per_system_node + daemon_pods)] * group.max_size + [
        (node.instance_type, sum(node.pods.values()) + daemon_pods) for node in plan.fleet.nodes
    ]


def capacity_warnings(config: Any, plan: CapacityPlan) -> list[str]:
    """What the plan cannot check but a reviewer should know: vCPUs above the default quotas."""
    group = config.node_group
    system_capacity = "spot" if group.capacity_type == "SPOT" else "on-demand"
    nodes = [(group.instance_types[0], system_capacity)] * group.desired_size
    nodes += [(node.instance_type, node.capacity_type) for node in plan.fleet.nodes]
    return quota_warnings(nodes, config.region)


def node_pool_limits(config: Any, plan: CapacityPlan) -> dict[str, str]:
    """`spec.limits` of the NodePool: the planned ones, with any configured override applied."""
    limits = dict(plan.node_pool_limits)
    override = config.node_pool.limits
    if override is not None:
        limits.update({key: value for key, value in (("cpu", override.cpu), ("memory", override.memory)) if value})
    return limits


# Costs per hour in the stack output: sums of catalog prices carry binary noise (4.0680000000000005);
# four decimals keep every catalog price (such as 0.0116) exact. The gap's percent keeps two.
COST_DECIMALS = 4
PERCENT_DECIMALS = 2


def _rounded(value: float | None, decimals: int = COST_DECIMALS) -> float | None:
    return None if value is None else round(value, decimals)


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
            "costPerHour": _rounded(fleet["cost"]),
            "podsPending": fleet["podsPending"],
        },
        "limits": data["limits"]["spec"],
        "limitsSetBy": data["limits"]["bindingScenario"],
        "scenarios": {
            name: {"nodes": run["nodeCount"], "capacity": run["capacity"], "podsPending": run["podsPending"]}
            for name, run in data["scenarios"].items()
        },
        "optimal": None
        if optimal is None
        else {
            "status": optimal["status"],
            "nodes": optimal["nodeCount"],
            "costPerHour": _rounded(optimal["cost"]),
            "lowerBound": {**optimal["lowerBound"], "cost": _rounded(optimal["lowerBound"]["cost"])},
        },
        "gap": None
        if data["gap"] is None
        else {
            **data["gap"],
            "cost": _rounded(data["gap"]["cost"]),
            "percent": _rounded(data["gap"]["percent"], PERCENT_DECIMALS),
        },
        "recommendation": data["recommendation"]["summary"],
        "notes": data["notes"],
    }


def plan_input_for_stack(stack: str, project_dir: Path) -> PlanInput:
    """The planner's input for `Pulumi.<stack>.yaml` (for `python -m sizing plan --stack`)."""
    path = Path(project_dir) / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        stacks = sorted(found.name[len("Pulumi.") : -len(".yaml")] for found in Path(project_dir).glob("Pulumi.*.yaml"))
        raise StackConfigError(
            [
                f"no stack file {path.name} in {Path(project_dir).resolve()}; "
                f"stacks there: {', '.join(stacks) if stacks else 'none (use --project-dir)'}"
            ]
        )
    config = load_stack_file(path)
    plan_input = _plan_input(json.dumps(capacity_description(config), sort_keys=True), *_app_ramp(config))
    # The stack refuses a peak whose pods its VPC cannot address; so does its plan, before simulating it.
    try:
        check_pods_fit(config, config.network.availability_zones, sum(w.peak_pods for w in plan_input.workloads))
    except ValueError as error:
        raise StackConfigError([str(error)]) from None
    return plan_input


def _app_ramp(config: Any) -> tuple[str | None, int]:
    """The test app's name and HPA minReplicas, for the HPA ramp scenario (no name: no test app)."""
    return (config.app.name if config.deploy_test_app else None), config.app.hpa.min_replicas


def _plan_input(description_json: str, app_name: str | None, app_min_replicas: int) -> PlanInput:
    """The description's input, with the test app's HPA minReplicas for the HPA ramp scenario."""
    try:
        plan_input = plan_input_from_document(json.loads(description_json))
        if app_name is None:
            return plan_input
        return replace(plan_input, hpa_scale_up={app_name: HpaScaleUp(min_replicas=app_min_replicas)})
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None


@functools.lru_cache(maxsize=32)
def _plan(description_json: str, app_name: str | None, app_min_replicas: int) -> CapacityPlan:
    # Planning is deterministic; a stack evaluated again (tests, make plan) reuses its plan.
    plan_input = _plan_input(description_json, app_name, app_min_replicas)
    try:
        return plan_capacity(plan_input)
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None
