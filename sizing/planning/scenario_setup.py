"""The scenarios' setup of a resolved input: the pods at peak and in surge, each HPA's ramp
(`workload_scale_up`) and the NodePools as the simulation takes them.

Units: pods as a count, ramp steps in seconds from the load's arrival.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.simulation import NodeOption, NodePoolModel
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_up import HpaScaleUp, replica_steps
from sizing.kube.workloads import Workload
from sizing.planning.plan_types import PlanInput
from sizing.planning.resolution import PlanContext
from sizing.planning.scenarios import ScenarioSetup


def node_pools(context: PlanContext, options: Sequence[NodeOption]) -> tuple[NodePoolModel, ...]:
    """The NodePools as the simulation takes them, or () for one plain NodePool (the flat fields do)."""
    plain = (
        not context.other_pools
        and not context.min_values
        and context.pool_name == "default"
        and not context.pool_labels
    )
    if plain:
        return ()
    primary = NodePoolModel(
        context.pool_name,
        tuple(options),
        dict(context.pool_limits),
        context.zones,
        context.capacity_types,
        context.pool_weight,
        context.min_values,
        context.labels,
        context.pool_labels,
    )
    return (primary,) + context.other_pools


def workload_scale_up(workload: Workload, given: Mapping[str, HpaScaleUp]) -> HpaScaleUp:
    """How the workload's HPA grows: given by the caller, else its own minReplicas and
    `behavior.scaleUp` (Kubernetes' defaults for what it leaves out)."""
    if workload.name in given:
        return given[workload.name]
    where = f"workload {workload.name!r}: HPA"
    fields: dict[str, Any] = {}
    if workload.min_replicas is not None:
        fields["min_replicas"] = workload.min_replicas
    if workload.scale_up_policies:
        policies = []
        for index, entry in enumerate(workload.scale_up_policies):
            unknown = sorted(set(entry) - {"type", "value", "periodSeconds"})
            if unknown:
                raise SizingInputError(
                    f"{where} behavior.scaleUp.policies[{index}] has {unknown[0]!r}; "
                    "a policy has type, value and periodSeconds"
                )
            missing = [key for key in ("type", "value", "periodSeconds") if key not in entry]
            if missing:
                raise SizingInputError(f"{where} behavior.scaleUp.policies[{index}] lacks {missing[0]}")
            policies.append(ScalingPolicy(entry["type"], entry["value"], entry["periodSeconds"]))
        fields["policies"] = tuple(policies)
    if workload.scale_up_select_policy is not None:
        fields["select_policy"] = workload.scale_up_select_policy
    if workload.scale_up_stabilization_seconds is not None:
        fields["stabilization_window_seconds"] = workload.scale_up_stabilization_seconds
    try:
        return HpaScaleUp(**fields)
    except SizingInputError as error:
        raise SizingInputError(f"{where} {error}") from None


def scenario_setup(plan_input: PlanInput, context: PlanContext, options: Sequence[NodeOption]) -> ScenarioSetup:
    unknown = sorted(set(plan_input.hpa_scale_up) - {w.name for w in plan_input.workloads})
    if unknown:
        raise SizingInputError(f"HPA scale-up given for {unknown[0]!r}, which is not a workload")
    by_name = {w.name: w for w in plan_input.workloads}
    peak, surge, ramps = [], [], []
    for group in context.groups:
        workload = by_name[group.workload]
        peak.append(replace(group, count=workload.replicas))
        surge.append(replace(group, count=workload.surge))
        if workload.autoscaled or workload.name in plan_input.hpa_scale_up:
            scale_up = workload_scale_up(workload, plan_input.hpa_scale_up)
            ramps.append(tuple(replica_steps(scale_up.min_replicas, workload.replicas, scale_up)))
        else:
            ramps.append(((0, workload.replicas),))
    return ScenarioSetup(
        options=tuple(options),
        peak_groups=tuple(peak),
        surge_groups=tuple(surge),
        ramps=tuple(ramps),
        zones=context.zones,
        capacity_types=context.capacity_types,
        running=context.running,
        node_pools=node_pools(context, options),
        pool_limits=MappingProxyType(dict(context.pool_limits)),
    )
