"""Planned limits never change a decision of the way down.

Over random workloads, NodePools (narrow or wide instance types), consolidation policies,
consolidateAfter, disruption budgets and load levels, the way down from the planned peak fleet
under the planned limits must carry out the same commands (time, method, nodes removed, type
launched) as the same way down without limits. A replacement launches while the nodes it replaces
still run, so limits that only hold the peak keep the dearer node: a search that ignores the way
down fails this (see the last test).
"""

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.karpenter.simulation.disruption import (
    WHEN_EMPTY,
    WHEN_EMPTY_OR_UNDERUTILIZED,
    Budget,
    DisruptionPolicy,
)
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_down import HpaScaleDown
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.resolution import resolve
from sizing.planning.scenario_setup import scenario_setup
from sizing.planning.scenarios import PEAK, ScenarioRunner
from sizing.planning.way_down import WayDownSettings, run_way_down

TYPES = {
    "narrow": ("m5.large", "m5.xlarge"),
    "wide": ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.8xlarge"),
}
FAST = HpaScaleDown((ScalingPolicy("Percent", 100, 15),), stabilization_window_seconds=0)


def _pool(kind):
    return NodePoolSpec(
        requirements=({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(TYPES[kind])},)
    )


@st.composite
def _inputs(draw):
    names = draw(st.lists(st.sampled_from(["api", "web", "worker"]), min_size=1, max_size=3, unique=True))
    workloads = tuple(
        Workload(
            name,
            draw(st.sampled_from([250, 500, 900, 1500])),
            draw(st.sampled_from([256, 1024, 3072])),
            replicas=draw(st.integers(2, 24)),
            max_surge=0,
            min_replicas=draw(st.integers(1, 2)),
        )
        for name in names
    )
    budget = draw(st.sampled_from([(), (Budget("1"),), (Budget("50%"),), (Budget("100%"),)]))
    policy = DisruptionPolicy(
        draw(st.sampled_from([WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED])),
        draw(st.sampled_from([0, 30])),
        budget or (Budget("10%"),),
    )
    way_down = WayDownSettings(
        policies={"default": policy},
        scale_down=dict.fromkeys(names, FAST),
        level_percent=draw(st.sampled_from([None, 25.0, 50.0])),
    )
    return PlanInput(
        workloads=workloads,
        node_pool=_pool(draw(st.sampled_from(["narrow", "wide"]))),
        headroom_percent=draw(st.sampled_from([0, 10])),
        solver_work_limit=None,
        way_down=way_down,
    )


def _min_replicas(plan_input):
    return {w.name: w.min_replicas for w in plan_input.workloads}


def _kept(plan_input, limits):
    """Whether the way down from the peak under `limits` decides as without them."""
    context = resolve(plan_input)
    setup = scenario_setup(plan_input, context, context.options)
    peak = ScenarioRunner(setup).run(PEAK, limits).result
    minimum = _min_replicas(plan_input)
    under = run_way_down(setup, peak, plan_input.way_down, minimum, limits)
    free = run_way_down(setup, peak, plan_input.way_down, minimum, {})
    return under.result.decisions == free.result.decisions


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_inputs())
def test_planned_limits_keep_the_way_down(plan_input):
    plan = plan_capacity(plan_input)
    assert not plan.way_down.planned.changes
    assert _kept(plan_input, plan.limits.for_simulation()), plan.limits.spec()


def test_a_search_that_ignores_the_way_down_fails_the_check():
    """One pod left on an m5.8xlarge: the peak's limits (32 cores, no headroom) refuse the m5.large
    that would replace it; the limits planned with the way down hold it."""
    plan_input = PlanInput(
        workloads=(Workload("web", 900, 1024, replicas=32, max_surge=0, min_replicas=1),),
        node_pool=_pool("wide"),
        headroom_percent=0,
        solver_work_limit=None,
        way_down=WayDownSettings(
            policies={"default": DisruptionPolicy(WHEN_EMPTY_OR_UNDERUTILIZED, 0)}, scale_down={"web": FAST}
        ),
    )
    ignoring = plan_capacity(replace(plan_input, way_down=None))
    assert not _kept(plan_input, ignoring.limits.for_simulation())
    assert _kept(plan_input, plan_capacity(plan_input).limits.for_simulation())
