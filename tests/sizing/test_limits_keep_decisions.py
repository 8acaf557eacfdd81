"""Planned limits never change what Karpenter decides.

Over random workloads that mix required and preferred topology spread, pod affinity and
anti-affinity, several NodePools with weights and workloads that cannot fully schedule, every
scenario simulated under the planned limits must place the same pods of each workload, on the
same NodePools, with the same soft constraints relaxed, and leave the same pods pending, as the
same scenario without limits. Only the instance types may differ.
"""

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.kube.scheduling import (
    HOSTNAME_KEY,
    ZONE_KEY,
    LabelExpression,
    LabelSelector,
    PodAffinityTerm,
    PodScheduling,
    TopologySpread,
)
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.resolution import resolve
from sizing.planning.scenario_setup import scenario_setup
from sizing.planning.scenarios import ScenarioRunner

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
FAMILIES = {"a": ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge"), "b": ("c5.large", "c5.xlarge", "c5.2xlarge")}
NODEPOOL_KEY = "karpenter.sh/nodepool"


def _pool(name, weight, zones):
    return NodePoolSpec(
        requirements=(
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(FAMILIES[name])},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)},
        ),
        name=name,
        weight=weight,
    )


@st.composite
def _constraints(draw, name):
    own = LabelSelector({"app": name})
    spreads, terms, preferred_pool = [], [], ()
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["spread", "anti", "affinity"]))
        key = draw(st.sampled_from([HOSTNAME_KEY, ZONE_KEY]))
        if kind == "spread":
            spreads.append(
                TopologySpread(
                    key,
                    draw(st.integers(1, 2)),
                    draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                    own,
                    draw(st.sampled_from([None, 2, 4])) if key == ZONE_KEY else None,
                )
            )
        else:
            weight = draw(st.sampled_from([None, 50]))  # None: required; a weight: preferred
            terms.append(PodAffinityTerm(key, own, anti=kind == "anti", weight=weight))
    if draw(st.booleans()):
        preferred_pool = ((100, (LabelExpression(NODEPOOL_KEY, "In", (draw(st.sampled_from(["a", "b"])),)),)),)
    return PodScheduling(
        labels={"app": name},
        topology_spread=tuple(spreads),
        pod_affinity=tuple(terms),
        preferred_node_terms=preferred_pool,
    )


@st.composite
def _inputs(draw):
    zones = ZONES[: draw(st.integers(2, 3))]
    names = draw(st.lists(st.sampled_from(["api", "web", "worker"]), min_size=1, max_size=3, unique=True))
    workloads = tuple(
        Workload(
            name,
            draw(st.sampled_from([250, 500, 1000, 1500])),
            draw(st.sampled_from([256, 1024, 3072])),
            replicas=draw(st.integers(1, 7)),
            max_surge=draw(st.integers(0, 2)),
            scheduling=draw(_constraints(name)),
        )
        for name in names
    )
    pools = [_pool("a", draw(st.integers(0, 50)), zones)]
    if draw(st.booleans()):
        pools.append(_pool("b", draw(st.integers(0, 50)), zones))
    pools.sort(key=lambda pool: -pool.weight)
    return PlanInput(
        workloads=workloads,
        node_pool=pools[0],
        other_node_pools=tuple(pools[1:]),
        zones=zones,
        solver_work_limit=None,
    )


def _decided(run):
    """Per workload: pods per NodePool, pods pending, and pods placed per set of relaxed constraints,
    read from the fleet's nodes and the simulation's placements."""
    on_pool = Counter()
    for node in run.result.nodes:
        for workload, count in node.pods.items():
            on_pool[(workload, node.node_pool)] += count
    pending = Counter()
    for group in run.result.pending:
        pending[group.workload] += group.count
    relaxed = {w: Counter({steps: n for (_, steps), n in p.items()}) for w, p in run.result.placements.items()}
    return on_pool, pending, relaxed


def _check(plan_input):
    plan = plan_capacity(plan_input)
    context = resolve(plan_input)
    runner = ScenarioRunner(scenario_setup(plan_input, context, context.options))
    unlimited = runner.run_all({})
    planned = runner.run_all(plan.limits.for_simulation())
    for name, run in planned.items():
        if name == "disruption":
            # The replacement node repeats its pods: compare what the peak decided and that it was created.
            assert not run.result.pending or unlimited[name].result.pending, name
            continue
        assert _decided(run) == _decided(unlimited[name]), (name, plan.limits.spec())
    return plan, unlimited


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_inputs())
def test_planned_limits_keep_every_scenario_decisions(plan_input):
    _check(plan_input)


def _zone_anti_affinity(replicas):
    own = LabelSelector({"app": "web"})
    return Workload(
        "web",
        500,
        512,
        replicas=replicas,
        max_surge=0,
        scheduling=PodScheduling(labels={"app": "web"}, pod_affinity=(PodAffinityTerm(ZONE_KEY, own, anti=True),)),
    )


def test_pods_that_never_schedule_do_not_collapse_the_limits():
    """5 replicas, one per zone, 3 zones: 3 run and 2 stay pending without limits; the limits run the 3."""
    plan, unlimited = _check(
        PlanInput(workloads=(_zone_anti_affinity(5),), node_pool=_pool("a", 0, ZONES), zones=ZONES)
    )
    assert unlimited["peak"].result.pending_count == 2
    assert plan.fleet.placed_count == 3 and plan.fleet.pending_count == 2
    assert len(plan.scenarios["peak"].result.new_nodes) == 3
    # The three nodes fit under the limits: at least 3 × m5.large of capacity.
    assert plan.limits.cpu_millicores >= 3 * 2000
    reasons = {group.reason for group in plan.fleet.pending}
    assert reasons == {
        "pod anti-affinity on topology.kubernetes.io/zone: the 3 zones (us-east-1a, us-east-1b, us-east-1c) "
        "of NodePool 'a' each already hold a pod it selects"
    }


def test_min_domains_beyond_the_zones_leaves_the_same_pods_pending():
    own = LabelSelector({"app": "web"})
    spread = TopologySpread(ZONE_KEY, 1, "DoNotSchedule", own, 4)
    web = Workload(
        "web",
        500,
        512,
        replicas=6,
        max_surge=0,
        scheduling=PodScheduling(labels={"app": "web"}, topology_spread=(spread,)),
    )
    plan, unlimited = _check(PlanInput(workloads=(web,), node_pool=_pool("a", 0, ZONES), zones=ZONES))
    assert unlimited["peak"].result.pending_count == 3
    assert plan.scenarios["peak"].result.placed_count == 3
    assert "minDomains 4" in plan.fleet.pending[0].reason


def test_a_preferred_hostname_anti_affinity_is_kept_under_the_limits():
    """On a wide NodePool each new NodeClaim reserves its largest candidate (subtractMax), so the
    six claims that keep the preference apart need limits far above the six small nodes."""
    own = LabelSelector({"app": "web"})
    web = Workload(
        "web",
        500,
        512,
        replicas=6,
        max_surge=0,
        scheduling=PodScheduling(
            labels={"app": "web"}, pod_affinity=(PodAffinityTerm(HOSTNAME_KEY, own, anti=True, weight=100),)
        ),
    )
    plan, _ = _check(PlanInput(workloads=(web,), node_pool=_pool("a", 0, ZONES), zones=ZONES))
    assert len(plan.fleet.nodes) == 6 and not plan.fleet.relaxed
    assert plan.limits.cpu_millicores > 6 * 2000


def test_a_preference_for_one_node_pool_is_kept_under_its_limits():
    """Pods that prefer NodePool b (lighter) land there; tight limits on the planned NodePool a must
    not send them elsewhere, nor bring pods that prefer a over to b."""
    prefer_a = ((100, (LabelExpression(NODEPOOL_KEY, "In", ("a",)),)),)
    api = Workload("api", 1000, 1024, replicas=6, max_surge=2, scheduling=PodScheduling(preferred_node_terms=prefer_a))
    plan, unlimited = _check(
        PlanInput(
            workloads=(api,),
            node_pool=_pool("a", 50, ZONES),
            other_node_pools=(_pool("b", 10, ZONES),),
            zones=ZONES,
        )
    )
    assert {node.node_pool for node in plan.fleet.nodes} == {"a"}
    assert {node.node_pool for node in unlimited["rollout"].result.nodes} == {"a"}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_inputs(), st.integers(0, 2000))
def test_limits_at_a_scenarios_demand_run_it_exactly_as_without_limits(plan_input, extra):
    """The scenario runner takes a scenario's run without limits, limits put in, for its run
    under limits at or above that run's `limit_demand`; it must be exactly what simulating the
    scenario under them gives (batches, ramp, rollout, drift; nodes, pods, what is left)."""
    context = resolve(plan_input)
    setup = scenario_setup(plan_input, context, context.options)
    runner = ScenarioRunner(setup)
    for name, unlimited in runner.run_all({}).items():
        demand = unlimited.result.limit_demand
        limits = {"cpu": demand["cpu"] + extra, "memory": demand["memory"]}
        taken = runner.run(name, limits)
        assert taken.result.remaining.keys() == {"cpu", "memory"}, name
        simulated = ScenarioRunner(setup).run(name, limits)
        assert taken == simulated, name
        assert (taken.result.nodes, taken.result.pending) == (unlimited.result.nodes, unlimited.result.pending)
