"""The capacity plan of a stack: the planner's input read from the Kubernetes objects the stack
deploys (`stackobjects.planned`), as `python -m sizing plan` reads manifest files, with the
planning settings of `capacity`. A stack and its deployed manifests are planned the same way.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import read_catalog
from sizing.karpenter.pricing import SpotDiscount, check_catalog_region
from sizing.kube.objects import read_objects
from sizing.kube.safe_yaml import YamlInputError, read_file_bytes
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import CapacityPlan, PlanInput, plan_capacity
from sizing.planning.report import plan_data
from stackconfig.aws_provider import parse_aws_settings
from stackconfig.errors import StackConfigError
from stackconfig.load import parse_stack_config, read_stack_file, stack_file
from stackconfig.system_pods import system_pods
from stackobjects.planned import planned_objects
from stackplan.vpc_capacity import check_fleet_fits, check_pods_fit, fleet_demand, quota_warnings

OBJECTS_SOURCE = "the stack's Kubernetes objects"
CATALOG_KEY = "capacity.catalog"
DISCOUNT_KEY = "capacity.spotDiscountPercent"


def catalog_source(config: Any, project_dir: Path = Path(".")) -> dict[str, str] | None:
    """The stack's catalog file (`capacity.catalog`, relative to the project directory) with a
    digest of its content, so that a changed file is planned anew; None without one."""
    given = config.capacity.catalog
    if given is None:
        return None
    path = Path(given) if Path(given).is_absolute() else Path(project_dir) / given
    try:
        # Read as every input file is (a regular file of bounded size): a FIFO never blocks the program.
        digest = hashlib.sha256(read_file_bytes(path, repr(given))).hexdigest()
    except YamlInputError as error:
        raise StackConfigError(
            [
                f"`{CATALOG_KEY}`: {error}; give the path of a catalog file "
                f"(python -m sizing catalog refresh --region {config.region} writes one), relative to the "
                "project directory"
            ]
        ) from None
    return {"path": str(path), "sha256": digest}


def plan_source(config: Any, zones: Sequence[str] = (), project_dir: Path = Path(".")) -> tuple[str, str]:
    """What a stack is planned from, as text (the cache key of its plan): the YAML of its objects
    (`planned_objects`) and the JSON of the settings objects do not carry (region, zones and
    the `capacity` options, with the catalog file's digest). zones: as for `planned_objects`;
    project_dir: where a relative `capacity.catalog` is read from."""
    objects_yaml = yaml.safe_dump_all(planned_objects(config, zones), sort_keys=True)
    capacity = config.capacity
    settings = {
        "region": config.region,
        "zones": list(config.node_pool.zones) if config.node_pool.zones is not None else list(zones),
        "headroomPercent": capacity.headroom_percent,
        "maxPodsPerNode": capacity.max_pods_per_node,
        "priceOverrides": dict(capacity.price_overrides),
        "solverWorkLimit": capacity.solver_work_limit,
        "catalog": catalog_source(config, project_dir),
        "spotDiscountPercent": capacity.spot_discount_percent,
    }
    return objects_yaml, json.dumps(settings, sort_keys=True)


def plan_for(config: Any, zones: Sequence[str] = ()) -> CapacityPlan:
    """The capacity plan of a validated stack configuration; bad capacity input raises
    StackConfigError naming it, and so do explicit limits below the peak unless acknowledged,
    and a peak whose pods and nodes the VPC's private subnets cannot hold."""
    source = plan_source(config, zones)
    plan_input = _plan_input(*source)
    zone_count = config.network.availability_zones
    try:
        # Cheap, before planning: a peak of millions of pods is refused without simulating it.
        check_pods_fit(config, zone_count, sum(workload.peak_pods for workload in plan_input.workloads))
        plan = _plan(*source)
        check_fleet_fits(config, zone_count, fleet_demand(peak_nodes(config, plan), plan.input.catalog))
    except ValueError as error:
        if isinstance(error, StackConfigError):
            raise
        raise StackConfigError([str(error)]) from None
    check = plan.current_limits
    if check is not None and not check.sufficient and not config.node_pool.acknowledge_limits_below_peak:
        changed = "; ".join(
            f"{name}: {', '.join(change.describe() for change in found)}"
            for name, found in check.changes.items()
            if found
        )
        raise StackConfigError(
            [
                f"`nodePool.limits` {dict(check.limits)} change what Karpenter decides ({changed}); the plan needs "
                f"{plan.node_pool_limits}. Raise the limits, remove them to use the planned ones, or set "
                "nodePool.acknowledgeLimitsBelowPeak: true"
            ]
        )
    return plan


def peak_nodes(config: Any, plan: CapacityPlan) -> list[tuple[str, int]]:
    """(instance type, pods on the VPC network) of every node at peak: the system node group at
    maxSize with the system pods spread over it, then the planned fleet with its pods and the
    configured DaemonSets (the EKS DaemonSets use the host's network and take no address).

    The system nodes' taint keeps a `capacity.daemonSets` entry off them unless its DaemonSet
    tolerates it; the entries say nothing of tolerations, so they are counted there too, an upper
    bound of the addresses. The planned fleet is Karpenter's alone: no workload without the
    toleration lands on the system nodes, so the plan leaves them out."""
    group = config.node_group
    system_pod_count = sum(pod.replicas for pod in system_pods(config.addons, config.monitoring))
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
    return quota_warnings(nodes, config.region, plan.input.catalog)


def node_pool_limits(config: Any, plan: CapacityPlan) -> dict[str, str]:
    """`spec.limits` of the NodePool: the planned ones, with any configured override applied."""
    limits = dict(plan.node_pool_limits)
    override = config.node_pool.limits
    if override is not None:
        limits.update(override.given())
    return limits


# Costs per hour in the stack output: sums of catalog prices carry binary noise (4.0680000000000005);
# four decimals keep every catalog price (such as 0.0116) exact. The gap's percent keeps two.
COST_DECIMALS = 4
PERCENT_DECIMALS = 2


def _rounded(value: float | None, decimals: int = COST_DECIMALS) -> float | None:
    return None if value is None else round(value, decimals)


def plan_summary(plan: CapacityPlan) -> dict:
    """The plan as a stack output: fleet, cost per hour, limits, lower bound, gap, recommendation,
    where its prices come from (catalog, on-demand sources, how spot is priced, offerings) and warnings.
    `python -m sizing plan --stack <stack>` prints the whole plan."""
    data = plan_data(plan)
    fleet, optimal, prices = data["fleet"], data["optimal"], data["prices"]
    by_type: dict[str, int] = {}
    for node in fleet["nodes"]:
        by_type[node["instanceType"]] = by_type.get(node["instanceType"], 0) + 1
    return {
        "priceUnit": data["priceUnit"],
        "pods": data["pods"],
        "fleet": {
            "nodes": fleet["nodeCount"],
            "instanceTypes": dict(sorted(by_type.items())),
            "costPerHour": _rounded(fleet["cost"]),
            "podsPending": fleet["podsPending"],
        },
        "limits": data["limits"]["spec"],
        "limitsSetBy": data["limits"]["bindingScenario"],
        "scenarios": {
            name: {
                "pods": run["pods"],
                "nodes": run["nodeCount"],
                "capacity": run["capacity"],
                "podsPending": run["podsPending"],
            }
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
        "prices": {
            "catalog": prices["catalog"]["path"] or "bundled",
            "onDemand": sorted(set(prices["onDemand"]["sources"].values())),
            "spot": prices["spot"]["tag"] if prices["spot"]["used"] else None,
            "offeringsChecked": prices["offerings"]["checked"] if prices["offerings"] else False,
        },
        "warnings": data["warnings"],
        "notes": data["notes"],
    }


def plan_input_for_stack(stack: str, project_dir: Path) -> PlanInput:
    """The planner's input for `Pulumi.<stack>.yaml` (for `python -m sizing plan --stack`), after
    the checks the stack program runs before it registers anything: every `eks-autoscaling:*`
    key, every `aws:*` key, and the VPC's room for the peak's pods."""
    raw = read_stack_file(stack_file(stack, Path(project_dir)))
    config = parse_stack_config(raw)
    parse_aws_settings(raw)
    plan_input = _plan_input(*plan_source(config, project_dir=Path(project_dir)))
    # The stack refuses a peak whose pods its VPC cannot address; so does its plan, before simulating it.
    try:
        check_pods_fit(config, config.network.availability_zones, sum(w.peak_pods for w in plan_input.workloads))
    except ValueError as error:
        raise StackConfigError([str(error)]) from None
    return plan_input


def _plan_input(objects_yaml: str, settings_json: str) -> PlanInput:
    settings = json.loads(settings_json)
    try:
        # The stack's own objects that place no pods (its Namespace, Service, Ingress, disruption
        # budget) are not listed as not planned: nobody handed them in, and the stack builds them.
        objects = replace(read_objects([(OBJECTS_SOURCE, objects_yaml)]), not_planned=())
        plan_input = plan_input_from_objects(
            objects,
            zones=settings["zones"],
            region=settings["region"],
            zones_key="nodePool.zones",
            region_key="aws:region",
        )
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None
    discount = settings["spotDiscountPercent"]
    plan_input = replace(
        plan_input,
        headroom_percent=settings["headroomPercent"],
        max_pods_per_node=settings["maxPodsPerNode"],
        price_overrides=settings["priceOverrides"],
        solver_work_limit=settings["solverWorkLimit"],
        spot_discount=None if discount is None else SpotDiscount(discount, DISCOUNT_KEY),
    )
    if settings["catalog"] is None:
        return plan_input
    try:
        catalog = read_catalog(Path(settings["catalog"]["path"]))
        check_catalog_region(catalog.info, settings["region"], f"`{CATALOG_KEY}`", "aws:region")
    except SizingInputError as error:
        raise StackConfigError([f"`{CATALOG_KEY}`: {error}" if CATALOG_KEY not in str(error) else str(error)]) from None
    return replace(plan_input, catalog=catalog.instance_types, catalog_info=catalog.info)


@functools.lru_cache(maxsize=32)
def _plan(objects_yaml: str, settings_json: str) -> CapacityPlan:
    # Planning is deterministic; a stack evaluated again (tests, make plan) reuses its plan.
    plan_input = _plan_input(objects_yaml, settings_json)
    try:
        plan = plan_capacity(plan_input)
    except SizingInputError as error:
        raise StackConfigError([f"capacity: {error}"]) from None
    if plan.never_running:
        # The command line plans the rest and lists such workloads; the stack's workloads are its
        # own configuration, and one that can never run is an error in it.
        raise StackConfigError([f"capacity: {item.reason}" for item in plan.never_running])
    return plan
