"""The way down planned: HPA scale-in from the peak fleet, then Karpenter's emptiness and consolidation."""

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.simulation.disruption import (
    EMPTINESS,
    WHEN_EMPTY,
    WHEN_EMPTY_OR_UNDERUTILIZED,
    DisruptionPolicy,
)
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_down import HpaScaleDown
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.way_down import WAY_DOWN, WayDownSettings

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge", "m5.2xlarge"]},)
WINDOW_60 = HpaScaleDown((ScalingPolicy("Percent", 100, 15),), stabilization_window_seconds=60)


def _plan(workloads, settings, pool=None, **kwargs):
    kwargs.setdefault("solver_work_limit", None)
    pool = pool or NodePoolSpec(requirements=M5)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=pool, way_down=settings, **kwargs))


def _web(replicas=12, min_replicas=1, cpu=900):
    return Workload("web", cpu, 1024, replicas=replicas, max_surge=0, min_replicas=min_replicas)


def test_when_empty_removes_the_nodes_the_scale_in_empties_after_consolidate_after():
    """The reference stack's demo: load stops, the HPA goes to minReplicas, empty nodes go 30 s later."""
    settings = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY, 30, ())}, scale_down={"web": WINDOW_60}
    )
    plan = _plan([_web()], settings)
    way = plan.way_down.planned
    assert way.targets == {"web": 1}
    assert [step.time for step in way.result.pod_steps] == [60]
    assert all(step.method == EMPTINESS for step in way.result.steps)
    # Emptied at 60 s, consolidatable at 90 s, the command validated 15 s later.
    assert way.result.steps[0].time == 90 + 15
    assert len(way.result.nodes) == 1 and plan.way_down.pods_at_rest == {"web": 1}
    assert way.cost < way.start_cost and not way.changes


def test_when_empty_keeps_a_half_full_fleet_that_consolidation_shrinks():
    half = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY, 0, ())}, scale_down={"web": WINDOW_60}, level_percent=50
    )
    packed = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY_OR_UNDERUTILIZED, 0, ())},
        scale_down={"web": WINDOW_60},
        level_percent=50,
    )
    workloads = [_web(replicas=24)]
    loose = _plan(workloads, half).way_down.planned
    tight = _plan(workloads, packed).way_down.planned
    assert sum(n.pod_count for n in loose.result.nodes) == sum(n.pod_count for n in tight.result.nodes) == 12
    assert tight.cost < loose.cost


def test_the_victims_empty_whole_nodes_first():
    """The ReplicaSet deletes pods from the nodes holding most of them first, so a scale-in to half
    leaves whole nodes empty rather than every node half full."""
    settings = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY, 0, ())}, scale_down={"web": WINDOW_60}, level_percent=50
    )
    plan = _plan([_web(replicas=24)], settings)
    assert plan.way_down.planned.result.steps, "a node left empty by the scale-in goes"


WIDE = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.8xlarge"]},)


def _one_big_node(limits=None):
    """32 pods of 900m fill one m5.8xlarge at peak; at minReplicas one pod is left on it, and
    consolidation replaces it with an m5.large, launched while the m5.8xlarge still runs."""
    settings = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY_OR_UNDERUTILIZED, 0, ())}, scale_down={"web": WINDOW_60}
    )
    pool = NodePoolSpec(requirements=WIDE, limits=limits or {})
    return _plan([_web(replicas=32)], settings, pool=pool, headroom_percent=0)


def test_planned_limits_are_raised_for_a_replacement():
    plan = _one_big_node()
    way = plan.way_down
    assert [n.option.name for n in plan.way_down.unlimited.result.nodes] == ["m5.large"]
    # The peak alone needs the m5.8xlarge's 32 cores; the replacement needs an m5.large's 2 more.
    assert way.raised["cpu"] == 34000 and plan.limits.binding[0] == WAY_DOWN
    assert plan.limits.cpu_millicores == 34000
    assert not way.planned.changes
    assert way.planned.result.steps[-1].replacement.instance_type == "m5.large"


def test_current_limits_that_keep_the_dearer_node_are_reported():
    plan = _one_big_node(limits={"cpu": "32", "memory": "256Gi"})
    current = plan.way_down.current
    assert current.changes and "instead of" in current.changes[0]
    assert [n.option.name for n in current.result.nodes] == ["m5.8xlarge"]
    assert "limits" in current.result.stays[current.result.nodes[0].name]


def test_unknown_names_are_refused():
    with pytest.raises(SizingInputError, match="way_down.scale_down names 'api'"):
        _plan([_web()], WayDownSettings(scale_down={"api": WINDOW_60}))
    with pytest.raises(SizingInputError, match="way_down.policies names NodePool 'spot'"):
        _plan([_web()], WayDownSettings(policies={"spot": DisruptionPolicy()}))
    with pytest.raises(SizingInputError, match="level_percent"):
        WayDownSettings(level_percent=150)


def test_way_down_name_is_a_binding_name():
    assert WAY_DOWN == "way-down"


def test_the_report_tells_the_way_down_in_json_and_text():
    from sizing.planning.report_data import plan_data
    from sizing.planning.report_text import render_text

    plan = _one_big_node(limits={"cpu": "32", "memory": "256Gi"})
    data = plan_data(plan)
    found = data["wayDown"]
    assert found["targets"] == {"web": 1} and found["limitsRaised"]["cpu"] == 34000
    kinds = [event["kind"] for event in found["planned"]["timeline"]]
    assert kinds == ["scale-in", "single-node consolidation"]
    assert found["planned"]["timeline"][-1]["launched"]["instanceType"] == "m5.large"
    assert found["current"]["keepsDecisions"] is False
    text = render_text(data)
    assert "The way down (load drops at 0 s; HPAs to web 1)" in text
    assert "single-node consolidation removes nodeclaim-1 for one on-demand m5.large" in text
    assert "Under the NodePool's current limits the way down decides otherwise" in text
    # The limits stand where the way down put them, not where the rollout would.
    assert "set by the way-down scenario" in text and "one core less and the rollout" not in text
    assert render_text(plan_data(plan)) == text


def test_a_plan_without_a_way_down_reports_none():
    from sizing.planning.report_data import plan_data
    from sizing.planning.report_text import render_text

    plan = _plan([_web()], None)
    data = plan_data(plan)
    assert data["wayDown"] is None and "The way down" not in render_text(data)


def test_the_way_down_is_the_same_bytes_every_time():
    import json

    from sizing.planning.report_data import plan_data

    settings = WayDownSettings(
        policies={"default": DisruptionPolicy(WHEN_EMPTY_OR_UNDERUTILIZED, 0, ())},
        scale_down={"web": WINDOW_60},
        level_percent=50,
    )
    first = json.dumps(plan_data(_plan([_web(replicas=24)], settings))["wayDown"], sort_keys=True)
    again = json.dumps(plan_data(_plan([_web(replicas=24)], settings))["wayDown"], sort_keys=True)
    assert first == again and '"single-node consolidation"' in first
