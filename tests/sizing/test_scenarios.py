"""The scenarios that count against NodePool limits: HPA ramp, rollout surge, disruption replacement."""

from collections import Counter
from dataclasses import replace

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.simulation import NodeOption, PodGroup, TopologyRule
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_up import HpaScaleUp, replica_steps
from sizing.kube.resources import Resources
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.scenarios import (
    DISRUPTION,
    HPA_RAMP,
    PEAK,
    ROLLOUT,
    ScenarioRunner,
    ScenarioSetup,
    run_disruption,
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
        ({"policies": (ScalingPolicy("Cores", 1, 15),)}, r"scaleUp.policies\[0\].type must be one of"),
        ({"policies": (ScalingPolicy("Pods", 0, 15),)}, r"scaleUp.policies\[0\].value must be an integer >= 1, got 0"),
        ({"stabilization_window_seconds": 4000}, "stabilizationWindowSeconds must be from 0 to 3600"),
        # YAML's `true` is no count of pods: both directions refuse it, with the policy's index.
        ({"policies": (ScalingPolicy("Pods", 4, 15), ScalingPolicy("Pods", True, 15))}, r"policies\[1\].value"),
        ({"stabilization_window_seconds": True}, "stabilizationWindowSeconds must be from 0 to 3600, got True"),
    ],
)
def test_bad_scale_up_behaviour_is_refused(fields, message):
    with pytest.raises(SizingInputError, match=message):
        HpaScaleUp(**fields)


def _one_workload_setup(options, requests, replicas, surge, ramp):
    group = PodGroup("web", requests, replicas)
    return ScenarioSetup(
        tuple(options), (group,), (PodGroup("web", requests, surge),), (tuple(ramp),), None, ("on-demand",)
    )


def test_in_flight_claims_take_pods_and_count_once_launched():
    # One type of 4 cores; pods of 1 core. Ramp 1 -> 5 -> 10 (15 s apart) under an 8-core limit.
    # 0 s: claim A (1 pod). 15 s: A, in flight, takes 3 more and counts 4 cores; claim B takes the
    # fifth. 30 s: B takes 3 more; A and B count 8 cores, so the last 2 pods stay pending.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 10, 0, [(0, 1), (15, 5), (30, 10)])
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 8000})
    assert ramp.usage.cpu == 8000 and ramp.result.pending_count == 2
    assert "exceed the NodePool limits" in ramp.result.pending[0].reason
    assert [node.pod_count for node in ramp.result.nodes] == [4, 4]
    assert ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 12_000}).placed_all


def test_claims_whose_capacity_is_not_known_yet_count_as_zero_the_overshoot():
    # If a NodeClaim's capacity came only 60 s after its creation, the claims of 0 s and 15 s
    # would still count as zero at 30 s, and the 30 s batch would open a claim past the limit.
    setup = replace(
        _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 10, 0, [(0, 1), (15, 5), (30, 10)]),
        launch_seconds=60,
    )
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 8000})
    assert ramp.placed_all
    assert ramp.usage.cpu == 12_000  # three nodes of 4 cores: 4 cores over the 8-core limit


def test_pods_left_pending_at_the_limits_are_retried_while_a_batch_launches_a_node():
    # 3 one-slot pods; small (2 cores, $1) and large (8 cores, $4) types, 10-core limit. One batch:
    # the first claim reserves 8 cores (large still fits the limit), the second 2, the third finds
    # none left. Both launch small; the next batch counts them at 4 cores and opens the third.
    small = option("small", 2000, pods=1, price=1.0)
    large = option("large", 8000, pods=1, price=4.0)
    setup = _one_workload_setup([small, large], Resources(1000, 100, 1), 3, 0, [(0, 3)])
    peak = ScenarioRunner(setup).run(PEAK, {"cpu": 10_000})
    assert peak.placed_all and peak.batches == 2
    assert [node.instance_type for node in peak.result.nodes] == ["small"] * 3
    assert [node.name for node in peak.result.nodes] == ["nodeclaim-1", "nodeclaim-2", "nodeclaim-3"]
    stuck = ScenarioRunner(setup).run(PEAK, {"cpu": 4000})
    assert stuck.result.pending_count == 1 and stuck.batches == 2
    assert "exceed the NodePool limits" in stuck.result.pending[0].reason


def test_the_rollout_surge_lands_on_the_peak_fleet_first_then_on_new_nodes():
    # 6 pods of 1 core on 4-core nodes: peak = 2 nodes (4 + 2 pods); 3 surge pods: 2 fill the
    # second node, 1 opens a third.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 6, 3, [(0, 6)])
    runs = ScenarioRunner(setup).run_all({})
    assert runs[PEAK].usage.pods == 2
    assert runs[ROLLOUT].usage.pods == 3 and runs[ROLLOUT].batches == 2
    assert runs[ROLLOUT].result.placed_count == 9


def test_a_drift_replacement_is_created_at_the_limits_and_refused_above_them():
    # kubernetes-sigs/karpenter v1.14 disruption: the replacement is scheduled with the drifted
    # node's capacity released, and Provisioner.Create refuses only when usage already exceeds a
    # limit. So limits equal to the peak fleet still replace its largest node, and the pool runs
    # one node over them until the old node goes.
    small, large = option("small", 2000, price=1.0), option("large", 8000, price=3.0)
    setup = _one_workload_setup([small, large], Resources(1500, 100, 1), 5, 0, [(0, 5)])
    runner = ScenarioRunner(setup)
    peak = runner.run(PEAK, {})
    usage = peak.usage.cpu
    largest = max(node.capacity.cpu for node in peak.result.nodes)
    at_limit = runner.run(DISRUPTION, {"cpu": usage})
    assert at_limit.placed_all and at_limit.usage.cpu == usage + largest
    assert at_limit.result.nodes[-1].name.startswith("replacement-of-")
    # A NodePool already over its limits (an earlier overshoot) gets the replacement refused.
    over = run_disruption(setup, {"cpu": usage - 1000}, peak)
    drifted = max(peak.result.nodes, key=lambda node: (node.capacity.cpu, node.capacity.memory, node.name))
    assert over.result.pending_count == drifted.pod_count > 0
    assert "over its cpu limit" in over.result.pending[0].reason


def test_a_web_tier_on_a_wide_spot_pool_gets_limits_near_its_fleet_not_a_metal_margin():
    # 50 x 500m/1Gi with 25 % surge on c/m/r spot: the old rule added the largest allowed
    # type (384 vCPU) and planned 421 vCPU. Now no limit is larger than the largest scenario
    # fleet needs, plus 10 %.
    requirements = (
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    )
    plan = plan_capacity(
        PlanInput(
            workloads=(Workload("web", 500, 1024, replicas=50, max_surge="25%"),),
            node_pool=NodePoolSpec(requirements=requirements),
            solver_work_limit=None,
        )
    )
    largest = max(run.usage.cpu for run in plan.scenarios.values())
    assert all(run.placed_all for run in plan.scenarios.values())
    assert plan.limits.minimum.cpu <= largest + 1000
    assert plan.limits.cpu_millicores <= 2 * largest
    assert plan.limits.cpu_millicores < 100_000


def test_the_stack_min_replicas_starts_the_ramp():
    from sizing.planning.scenario_setup import workload_scale_up

    workload = Workload("web", 100, 64, replicas=10)
    assert workload_scale_up(workload, {}).min_replicas == 1
    assert workload_scale_up(workload, {"web": HpaScaleUp(min_replicas=4)}).min_replicas == 4
    with pytest.raises(SizingInputError, match="HPA scale-up given for 'api', which is not a workload"):
        plan_capacity(PlanInput(workloads=(workload,), hpa_scale_up={"api": HpaScaleUp()}, solver_work_limit=None))


def _zone_setup(group, ramp, limits_free=True):
    return ScenarioSetup(
        (option("four", 4000),), (group,), (replace(group, count=0),), (tuple(ramp),), frozenset("abc"), ("on-demand",)
    )


def test_pods_bound_in_an_earlier_ramp_step_keep_required_hostname_anti_affinity():
    # 12 replicas, 1 -> 5 -> 10 -> 12, each step a batch on the nodes of the steps before: the
    # pods already bound keep the new ones off their nodes, so the ramp still needs 12 nodes.
    rule = TopologyRule("anti-affinity", "hostname", frozenset({"web"}))
    group = PodGroup("web", Resources(100, 100, 1), 12, topology=(rule,))
    ramp = ScenarioRunner(_zone_setup(group, [(0, 1), (15, 5), (30, 10), (45, 12)])).run(HPA_RAMP, {})
    assert ramp.placed_all and ramp.batches == 4
    assert [node.pod_count for node in ramp.result.nodes] == [1] * 12


def test_zone_spread_counts_the_pods_of_earlier_ramp_steps():
    # 3 replicas spread over 3 zones (maxSkew 1), 2 -> 3: the first step fills two zones, and the
    # third pod must go to the empty one, not to the first zone by name.
    rule = TopologyRule("spread", "zone", frozenset({"web"}), max_skew=1)
    group = PodGroup("web", Resources(1000, 100, 1), 3, topology=(rule,))
    ramp = ScenarioRunner(_zone_setup(group, [(0, 2), (15, 3)])).run(HPA_RAMP, {})
    per_zone = Counter()
    for node in ramp.result.nodes:
        per_zone[node.zones[0]] += node.pods.get("web", 0)
    assert per_zone == {"a": 1, "b": 1, "c": 1}


def test_a_workload_not_in_the_batch_still_keeps_its_anti_affinity_against_new_pods():
    # "db" (anti-affinity against "web" by hostname) is bound in the first step; "web" arrives in
    # the second and must not land on db's node, though db has no pod in that batch.
    anti = TopologyRule("anti-affinity", "hostname", frozenset({"web"}))
    db = PodGroup("db", Resources(100, 100, 1), 1, topology=(anti,))
    web = PodGroup("web", Resources(100, 100, 1), 2)
    setup = ScenarioSetup(
        (option("four", 4000),),
        (db, web),
        (replace(db, count=0), replace(web, count=0)),
        (((0, 1),), ((0, 0), (15, 2))),
        frozenset("abc"),
        ("on-demand",),
    )
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {})
    assert ramp.placed_all
    assert [dict(node.pods) for node in ramp.result.nodes] == [{"db": 1}, {"web": 2}]


def test_the_rollout_adds_its_surge_to_peak_pods_left_pending():
    # 10 pods of 1 core under a 4-core limit: the peak places 4; the rollout's 10 surge pods join
    # the 6 pending ones, and all 16 are counted as pending.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 10, 10, [(0, 10)])
    runs = ScenarioRunner(setup).run_all({"cpu": 4000})
    assert runs[PEAK].result.pending_count == 6
    assert runs[ROLLOUT].result.pending_count == 16


def test_a_setup_narrowed_to_some_types_launches_only_those_even_with_node_pool_models():
    # The recommendation plans limits for a NodePool restricted to its chosen types by narrowing
    # the setup's options; the NodePool model (taints, several pools...) must not bring the rest back.
    from sizing.karpenter.simulation import NodePoolModel

    small, large = option("small", 2000, price=1.0), option("large", 8000, price=1.5)
    setup = _one_workload_setup([small, large], Resources(1000, 100, 1), 8, 0, [(0, 8)])
    setup = replace(setup, node_pools=(NodePoolModel("default", (small, large)),))
    assert {n.instance_type for n in ScenarioRunner(setup).run(PEAK, {}).result.nodes} == {"large"}
    narrowed = replace(setup, options=(small,))
    assert {n.instance_type for n in ScenarioRunner(narrowed).run(PEAK, {}).result.nodes} == {"small"}


def test_checked_limits_are_the_largest_fleet_plus_headroom_when_every_scenario_places_under_them():
    from sizing.planning.scenarios import checked_limits

    # 6 pods of 1 core, 3 surge, on 4-core nodes: the rollout's 3 nodes (12 cores) are the most.
    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 6, 3, [(0, 6)])
    limits = checked_limits(setup, 10).limits
    assert limits.minimum.cpu == 12_000 and limits.binding[0] == ROLLOUT
    assert limits.cpu_millicores == 14_000  # 13.2 cores rounded up
    assert all(run.placed_all for run in ScenarioRunner(setup).run_all(limits.for_simulation()).values())


def test_checked_limits_fall_back_to_the_search_when_a_scenario_decides_otherwise(monkeypatch):
    import sizing.planning.scenarios as scenarios

    setup = _one_workload_setup([option("four", 4000)], Resources(1000, 100, 1), 6, 3, [(0, 6)])
    searched = scenarios.search_limits(setup, 10)
    monkeypatch.setattr(scenarios.LimitProbe, "keeps_decisions", lambda self, name, cpu, memory: False)
    monkeypatch.setattr(scenarios, "search_from", lambda probe, headroom: searched)
    assert scenarios.checked_limits(setup, 10) is searched


def test_retries_of_a_ramp_step_stop_at_the_next_step_which_takes_their_pods():
    # One-slot nodes of 1 core (two types) and 2 cores; an 11-core limit; 3 pods at 0 s, 8 more at
    # 15 s, 9 more at 30 s. Each NodeClaim reserves 2 cores (subtractMax), so the 15 s step retries
    # at 20 s and 25 s; the 30 s step takes what is still pending, with every earlier NodeClaim
    # launched and counted. No batch runs at the same moment as a step, so none opens a claim past
    # the limit (a retry at 30 s used to, beside the 30 s step that did not count it yet).
    one, two = option("one", 1000, pods=1, price=0.1), option("two", 2000, pods=1, price=0.1)
    setup = _one_workload_setup([one, two], Resources(1, 1, 1), 20, 0, [(0, 3), (15, 11), (30, 20)])
    ramp = ScenarioRunner(setup).run(HPA_RAMP, {"cpu": 11_000})
    assert ramp.usage.cpu == 11_000 and ramp.result.placed_count == 11
