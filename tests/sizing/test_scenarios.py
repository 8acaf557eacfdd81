"""The scenarios that count against NodePool limits: HPA ramp, rollout surge, disruption replacement."""

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.simulation import NodeOption, PodGroup
from sizing.kube.resources import Resources
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.scenarios import (
    DISRUPTION,
    HPA_RAMP,
    PEAK,
    ROLLOUT,
    HpaScaleUp,
    ScalingPolicy,
    ScenarioRunner,
    ScenarioSetup,
    replica_steps,
)


def option(name, cpu, memory=8192, pods=110, price=1.0):
    capacity = Resources(cpu, memory, pods)
    return NodeOption(name, capacity, capacity, price)


def test_the_default_hpa_doubles_or_adds_four_pods_every_15_seconds():
    # max(100 %, 4 pods) per 15 s: 1 -> 5 -> 10 -> 20 -> 40 -> 50.
    assert replica_steps(1, 50, HpaScaleUp()) == [(0, 1), (15, 5), (30, 10), (45, 20), (60, 40), (75, 50)]


def test_select_policy_min_takes_the_slower_policy_and_a_window_delays_the_first_step():
    slow = HpaScaleUp(min_replicas=2, select_policy="Min", stabilization_window_seconds=40)
    # The first step comes at 45 s (the 40 s window, on the 15 s sync); Min of (+100 %, +4): +2, +4, +4.
    assert replica_steps(2, 12, slow) == [(0, 2), (45, 4), (60, 8), (75, 12)]


def test_a_policy_with_a_longer_period_counts_from_the_replicas_at_its_start():
    # Percent 100 per 60 s: within a minute the HPA may only double what it had a minute ago.
    scale_up = HpaScaleUp(policies=(ScalingPolicy("Percent", 100, 60),))
    assert replica_steps(4, 20, scale_up) == [(0, 4), (15, 8), (75, 16), (135, 20)]


def test_disabled_scale_up_stays_at_min_replicas():
    assert replica_steps(3, 30, HpaScaleUp(min_replicas=3, select_policy="Disabled")) == [(0, 3)]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"min_replicas": 0}, "minReplicas must be an integer >= 1, got 0"),
        ({"select_policy": "Fastest"}, "selectPolicy must be one of"),
        ({"policies": (ScalingPolicy("Cores", 1, 15),)}, "policy type must be one of"),
        ({"policies": (ScalingPolicy("Pods", 0, 15),)}, "policy value must be an integer >= 1, got 0"),
        ({"stabilization_window_seconds": 4000}, "stabilizationWindowSeconds must be from 0 to 3600"),
    ],
)
def test_bad_scale_up_behaviour_is_refused(fields, message):
    with pytest.raises(SizingInputError, match=message):
        HpaScaleUp(**fields)


def _one_workload_setup(options, requests, replicas, surge, ramp):
    group = PodGroup("web", requests, replicas)
    return ScenarioSetup(tuple(options), (group,), (PodGroup("web", requests, surge),), (tuple(ramp),),
                         None, ("on-demand",))


def test_in_flight_claims_take_pods_and_count_only_once_registered():
    # One type of 4 cores; pods of 1 core. Ramp 1 -> 5 -> 10 (15 s apart): the claims of 0 s and
    # 15 s are still in flight at 30 s (registration 60 s), so they count as zero and the 30 s
    # batch may open claims that together with them exceed a limit of 8 cores: the overshoot.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 10, 0,
                                [(0, 1), (15, 5), (30, 10)])
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 8000})
    assert ramp.placed_all
    assert ramp.batches == 3
    assert ramp.usage.cpu == 12_000  # three nodes of 4 cores: 4 cores over the 8-core limit
    assert ramp.usage.cpu > 8000
    peak = ScenarioRunner(setup).run(PEAK, {"cpu": 8000})
    assert peak.result.pending_count == 2  # one batch: subtractMax keeps it at 8 cores


def test_pods_pending_in_a_ramp_batch_are_retried_once_the_nodes_register():
    # A limit of 4 cores: the first claim counts once registered (60 s); pods left pending at
    # 15 s wait, and at the last retry (every node registered) they still cannot fit.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 8, 0, [(0, 4), (15, 8)])
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 4000})
    # At 15 s the first node (in flight) counts zero: a second claim opens; the overshoot places all.
    assert ramp.placed_all and ramp.usage.cpu == 8000
    tight = ScenarioRunner(_one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 8, 0,
                                               [(0, 4), (90, 8)])).run(HPA_RAMP, {"cpu": 4000})
    assert tight.result.pending_count == 4 and "exceed the NodePool limits" in tight.result.pending[0].reason


def test_the_rollout_surge_lands_on_the_peak_fleet_first_then_on_new_nodes():
    # 6 pods of 1 core on 4-core nodes: peak = 2 nodes (4 + 2 pods); 3 surge pods: 2 fill the
    # second node, 1 opens a third.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 6, 3, [(0, 6)])
    runs = ScenarioRunner(setup).run_all({})
    assert runs[PEAK].usage.pods == 2
    assert runs[ROLLOUT].usage.pods == 3 and runs[ROLLOUT].batches == 2
    assert runs[ROLLOUT].result.placed_count == 9


def test_a_drift_replacement_needs_room_for_one_more_node_of_the_largest_type_in_the_fleet():
    small, large = option("small", 2000, price=1.0), option("large", 8000, price=3.0)
    setup = _one_workload_setup([small, large], Resources(1500, 100, 1), 5, 0, [(0, 5)])
    runner = ScenarioRunner(setup)
    peak = runner.run(PEAK, {})
    largest = max(node.capacity.cpu for node in peak.result.nodes)
    usage = peak.usage.cpu
    fits = runner.run(DISRUPTION, {"cpu": usage + largest})
    assert fits.placed_all and fits.usage.cpu == usage + largest
    short = runner.run(DISRUPTION, {"cpu": usage + largest - 1000})
    assert not short.placed_all


def test_a_web_tier_on_a_wide_spot_pool_gets_limits_near_its_fleet_not_a_metal_margin():
    # 50 x 500m/1Gi with 25 % surge on c/m/r spot: the old rule added the largest allowed
    # type (384 vCPU) and planned 421 vCPU. Now no limit is larger than the largest scenario
    # fleet needs, plus 10 %.
    requirements = (
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    )
    plan = plan_capacity(PlanInput(
        workloads=(Workload("web", 500, 1024, replicas=50, max_surge="25%"),),
        node_pool=NodePoolSpec(requirements=requirements),
        solver_work_limit=None,
    ))
    largest = max(run.usage.cpu for run in plan.scenarios.values())
    assert all(run.placed_all for run in plan.scenarios.values())
    assert plan.limits.minimum.cpu <= largest + 1000
    assert plan.limits.cpu_millicores <= 2 * largest
    assert plan.limits.cpu_millicores < 100_000


def test_the_stack_min_replicas_starts_the_ramp():
    from sizing.planning.planner import _scale_up

    workload = Workload("web", 100, 64, replicas=10)
    assert _scale_up(workload, {}).min_replicas == 1
    assert _scale_up(workload, {"web": HpaScaleUp(min_replicas=4)}).min_replicas == 4
    with pytest.raises(SizingInputError, match="HPA scale-up given for 'api', which is not a workload"):
        plan_capacity(PlanInput(workloads=(workload,), hpa_scale_up={"api": HpaScaleUp()},
                                solver_work_limit=None))
