"""NodePool limits: derived from the simulated fleet's capacity, rounded, and checked by simulation."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.errors import SizingInputError
from sizing.karpenter.limits import derive_limits, parse_limits, settle_limits
from sizing.kube.resources import Resources
from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate


def option(name, cpu_capacity, memory_capacity=8192, pods=110, price=1.0):
    capacity = Resources(cpu_capacity, memory_capacity, pods)
    return NodeOption(name, capacity, capacity - Resources(100, 600, 0), price)


M5_LARGE = option("m5.large", 2000, 7577, 29, 0.096)


def test_limits_are_fleet_capacity_plus_headroom_plus_the_largest_type_rounded_up():
    # Fleet: 2 x m5.large = 4000m / 15154Mi of capacity. + 10 %: 4400m / 16670Mi (rounded up).
    # + one m5.large: 6400m / 24247Mi. Rounded up to whole cores and GiB: 7 cores, 24 GiB.
    limits = derive_limits(Resources(4000, 15154), [M5_LARGE], 10)
    assert limits.spec() == {"cpu": "7", "memory": "24Gi"}
    assert (limits.cpu_millicores, limits.memory_mib) == (7000, 24 * 1024)
    assert limits.margin_types == ("m5.large", "m5.large")


def test_whole_figures_are_not_rounded_further():
    limits = derive_limits(Resources(6000, 3 * 1024), [option("t", 2000, 1024)], 0)
    assert limits.spec() == {"cpu": "8", "memory": "4Gi"}


def test_the_margin_takes_the_largest_capacity_per_resource():
    options = [option("cpu-heavy", 8000, 4096), option("memory-heavy", 2000, 65536)]
    limits = derive_limits(Resources(2000, 4096), options, 0)
    assert (limits.margin.cpu, limits.margin.memory) == (8000, 65536)
    assert limits.margin_types == ("cpu-heavy", "memory-heavy")


def test_negative_headroom_is_refused():
    with pytest.raises(SizingInputError, match="headroomPercent"):
        derive_limits(Resources(1000, 1024), [M5_LARGE], -5)


def test_limits_are_raised_until_subtract_max_no_longer_strands_pods():
    # Ten one-slot pods; small (2000m, $1) and large (8000m, $4) both fit one pod.
    # Unlimited, every pod opens a claim that could be small or large and launches small:
    # 20000m. First limits: 20000 x 1.1 + 8000 = 30000m. Under them each claim reserves
    # 8000m while 8000m are left (3 claims), then 2000m (3 claims): 4 pods stay pending.
    # Each round adds the largest type: 38000, 46000, 54000, 62000m; at 62000m the claims
    # reserve 7 x 8000 + 3 x 2000 = 62000m and all ten pods are placed.
    small = option("small", 2000, 4000, 1, 1.0)
    large = option("large", 8000, 4000, 1, 4.0)
    pods = (PodGroup("web", Resources(1000, 100, 1), 10),)

    def simulate_under(limits):
        return simulate(Scenario((small, large), pods, limits))

    limits, fleet = settle_limits(simulate_under, (small, large), 10)
    assert limits.spec()["cpu"] == "62"
    assert limits.memory_mib % 1024 == 0  # still whole GiB after adding the 4000Mi margins
    assert limits.raised_for_fleet
    assert fleet.pending == ()
    assert [node.instance_type for node in fleet.nodes] == ["small"] * 10
    assert limits.fleet_capacity.cpu == 20000


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
    return tuple(options), groups, draw(st.sampled_from([0, 10, 25]))


@settings(max_examples=40, deadline=None)
@given(pools())
def test_settled_limits_place_every_pod_and_cover_the_fleets_capacity(pool):
    options, groups, headroom = pool

    def simulate_under(limits):
        return simulate(Scenario(options, groups, limits))

    limits, fleet = settle_limits(simulate_under, options, headroom)
    assert fleet.pending == ()
    usage = fleet.limit_usage()
    largest_cpu = max(o.capacity.cpu for o in options)
    largest_memory = max(o.capacity.memory for o in options)
    assert limits.cpu_millicores >= usage["cpu"] + largest_cpu
    assert limits.memory_mib >= usage["memory"] + largest_memory
    assert limits.cpu_millicores % 1000 == 0 and limits.memory_mib % 1024 == 0
    assert simulate_under(limits.for_simulation()).pending == ()


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
