"""NodePool limits: the smallest under which every scenario places every pod, plus headroom."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.errors import SizingInputError
from sizing.karpenter.limits import parse_limits, smallest_limits, with_headroom
from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate
from sizing.kube.resources import Resources
from sizing.planning.scenarios import DISRUPTION, HPA_RAMP, PEAK, ROLLOUT, ScenarioRunner, ScenarioSetup, search_limits

PROJECT_DIR = Path(__file__).resolve().parents[2]


def option(name, cpu_capacity, memory_capacity=8192, pods=110, price=1.0):
    capacity = Resources(cpu_capacity, memory_capacity, pods)
    return NodeOption(name, capacity, capacity - Resources(100, 600, 0), price)


M5_LARGE = option("m5.large", 2000, 7577, 29, 0.096)


def setup_for(options, groups, surge=None, ramps=None):
    surge = surge if surge is not None else tuple(PodGroup(g.workload, g.requests, 0) for g in groups)
    ramps = ramps if ramps is not None else tuple(((0, g.count),) for g in groups)
    return ScenarioSetup(tuple(options), tuple(groups), tuple(surge), tuple(ramps), None, ("on-demand",))


def test_headroom_is_applied_to_the_minimum_and_rounded_up_to_whole_cores_and_gib():
    # 4 cores x 1.1 = 4.4 -> 5 cores; 15 GiB x 1.1 = 16.5 GiB -> 17 GiB.
    assert with_headroom(Resources(4000, 15 * 1024), 10) == (5000, 17 * 1024)
    assert with_headroom(Resources(4000, 15 * 1024), 0) == (4000, 15 * 1024)


def test_negative_headroom_is_refused():
    with pytest.raises(SizingInputError, match="headroomPercent"):
        with_headroom(Resources(1000, 1024), -5)


def test_the_search_returns_the_smallest_value_each_scenario_accepts_and_names_the_binder():
    # Scenario "a" needs 7 cores and 3 GiB, "b" 5 cores and 9 GiB.
    needs = {"a": (7, 3), "b": (5, 9)}
    limits = smallest_limits(
        lambda name, cpu, memory: cpu >= needs[name][0] * 1000 and memory >= needs[name][1] * 1024,
        ("a", "b"),
        Resources(1000, 1024),
        Resources(50_000, 50 * 1024),
        0,
    )
    assert (limits.minimum.cpu, limits.minimum.memory) == (7000, 9 * 1024)
    assert limits.binding == ("a", "b")
    assert limits.spec() == {"cpu": "7", "memory": "9Gi"}


def test_the_search_steps_up_from_the_fleet_and_probes_little_when_the_need_is_close():
    # The need is 3 cores above the lower bound, with a top 10,000 cores away: steps of 1, 2 find
    # a limit that holds, then a bisection the smallest. Far fewer probes than a bisection of the
    # whole range (about 14 per resource), and probes far above the need are slow ones.
    probed = []

    def places_all(name, cpu, memory):
        probed.append((cpu, memory))
        return cpu >= 13_000 and memory >= 4 * 1024

    limits = smallest_limits(places_all, ("peak",), Resources(10_000, 4096), Resources(10_010_000, 8192), 0)
    assert (limits.minimum.cpu, limits.minimum.memory) == (13_000, 4096)
    assert len(probed) <= 8
    assert max(cpu for cpu, _ in probed if cpu < 10_010_000) <= 16_000


def test_subtract_max_is_simulated_batch_by_batch_not_added_as_a_margin():
    # Ten one-slot pods; small (2000m, $1) and large (8000m, $4) both fit one pod. Unlimited, every
    # claim launches small: 20 cores. Under a 20-core limit subtractMax reserves 8 cores for each
    # claim while large still fits what is left, so one batch launches only 4 claims (8 + 8 + 2 + 2).
    # The pods left pending go with the next batch, once those 4 count at their real 8 cores:
    # 3 more claims (8 + 2 + 2 of the 12 left), then the last 3. No large-type margin is added.
    small = option("small", 2000, 4000, 1, 1.0)
    large = option("large", 8000, 4000, 1, 4.0)
    setup = setup_for((small, large), (PodGroup("web", Resources(1000, 100, 1), 10),))
    runner = ScenarioRunner(setup)
    peak = runner.run(PEAK, {"cpu": 20_000})
    assert peak.placed_all and peak.batches == 3 and peak.usage.cpu == 20_000
    assert not runner.run(PEAK, {"cpu": 19_000}).placed_all
    search = search_limits(setup, 0)
    limits, runs = search.limits, search.planned
    assert runs[PEAK].placed_all
    cpu = limits.minimum.cpu
    # One core less leaves pods pending in some scenario: the minimum is tight.
    below = {"cpu": cpu - 1000, "memory": limits.minimum.memory}
    assert not all(run.placed_all for run in runner.run_all(below).values())
    # The peak's 20 cores: a drift replacement at the limits is still created (it runs one node over).
    assert cpu == 20_000
    assert runner.run(DISRUPTION, {"cpu": cpu}).placed_all


@st.composite
def pools(draw):
    options = []
    for i in range(draw(st.integers(1, 4))):
        options.append(
            option(
                f"type-{i}",
                draw(st.sampled_from([1000, 2000, 4000, 16000])),
                draw(st.sampled_from([2048, 8192, 32768])),
                draw(st.integers(1, 30)),
                draw(st.sampled_from([0.1, 0.5, 1.0])),
            )
        )
    smallest = min(options, key=lambda o: o.room.cpu)
    groups = tuple(
        PodGroup(
            f"w{g}",
            Resources(draw(st.integers(1, smallest.room.cpu)), draw(st.integers(1, 1400)), 1),
            draw(st.integers(1, 40)),
        )
        for g in range(draw(st.integers(1, 3)))
    )
    surge = tuple(PodGroup(g.workload, g.requests, draw(st.integers(0, g.count))) for g in groups)
    ramps = tuple(((0, 1), (15, max(1, g.count // 2)), (30, g.count)) for g in groups)
    return tuple(options), groups, surge, ramps, draw(st.sampled_from([0, 10, 25]))


@settings(max_examples=30, deadline=None)
@given(pools())
def test_planned_limits_and_the_minimum_place_every_pod_in_every_scenario(pool):
    options, groups, surge, ramps, headroom = pool
    setup = setup_for(options, groups, surge, ramps)
    search = search_limits(setup, headroom)
    limits, runs = search.limits, search.planned
    assert all(run.placed_all for run in runs.values())
    assert all(run.decisions == search.unlimited[name].decisions for name, run in runs.items())
    assert limits.cpu_millicores % 1000 == 0 and limits.memory_mib % 1024 == 0
    assert limits.cpu_millicores >= limits.minimum.cpu and limits.memory_mib >= limits.minimum.memory
    runner = ScenarioRunner(setup)
    minimum = {"cpu": limits.minimum.cpu, "memory": limits.minimum.memory}
    assert all(run.placed_all for run in runner.run_all(minimum).values())
    # What the report says one step below: the binding scenario decides otherwise there, or nothing is shown.
    for name, found in search.below.values():
        assert found or runner.run(name, {}).decisions == search.unlimited[name].decisions


@settings(max_examples=40, deadline=None)
@given(pools(), st.integers(1, 40), st.integers(1, 64))
def test_batches_never_launch_past_the_limits_and_place_at_least_what_one_batch_does(pool, cores, gibs):
    # subtractMax reserves at least a claim's real capacity, and a retry counts every node already
    # launched, so no batch of the peak, the ramp or the rollout ends above a limit. Retrying never
    # places fewer pods than the first batch alone.
    options, groups, surge, ramps, _ = pool
    setup = setup_for(options, groups, surge, ramps)
    limits = {"cpu": cores * 1000, "memory": gibs * 1024}
    runs = ScenarioRunner(setup).run_all(limits)
    for name in (PEAK, HPA_RAMP, ROLLOUT):
        usage = runs[name].usage
        assert usage.cpu <= limits["cpu"] and usage.memory <= limits["memory"], name
    one_batch = simulate(Scenario(tuple(options), groups, limits=limits, capacity_types=("on-demand",)))
    assert runs[PEAK].result.placed_count >= one_batch.placed_count


def test_current_limits_parse_as_kubernetes_quantities():
    assert parse_limits({"cpu": 1000, "memory": "1000Gi", "nodes": "5"}) == {
        "cpu": 1_000_000,
        "memory": 1000 * 1024,
        "nodes": 5,
    }


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"gpu": 1}, "limit 'gpu' is not supported"),
        ({"memory": "1000GB"}, "nodePool.limits.memory"),
        ({"nodes": -1}, "nodePool.limits.nodes must be a non-negative integer"),
        ([1, 2], "must be a mapping"),
    ],
)
def test_bad_limits_are_refused(spec, message):
    with pytest.raises(SizingInputError, match=message):
        parse_limits(spec)
