"""The optimal fleet: how pods and instance types become the solver's problem, and the answer back."""

import pytest

from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate
from sizing.kube.resources import Resources
from sizing.planning.fleet import build_problem, optimal_fleet, solver_available


def option(name, cpu, memory=8192, pods=20, price=1.0, overhead=Resources()):
    room = Resources(cpu, memory, pods)
    return NodeOption(name, room, room, price, daemon_overhead=overhead)


def test_bins_are_room_after_daemonsets_at_their_price():
    options = [option("a", 2000, overhead=Resources(200, 100, 2), price=0.5)]
    problem, bins = build_problem(options, [PodGroup("w", Resources(100, 50, 1), 4)], None, ("on-demand",), 300)
    (bin_type,) = problem.bin_types
    assert dict(bin_type.capacity) == {"cpu": 1800, "memory": 8092, "pods": 18}
    assert bin_type.cost == 0.5 and problem.work_limit == 300 and problem.time_limit_seconds is None
    (item,) = problem.items
    assert (dict(item.size), item.count) == ({"cpu": 100, "memory": 50, "pods": 1}, 4)
    assert bins[bin_type.name].option.name == "a"


def test_a_pod_confined_to_some_types_gets_a_dimension_only_those_offer():
    options = [option("a", 2000, price=0.5), option("b", 4000)]
    groups = [
        PodGroup("anywhere", Resources(100, 50, 1), 3),
        PodGroup("only-b", Resources(100, 50, 1), 2, allowed_types=frozenset({"b"})),
    ]
    problem, bins = build_problem(options, groups, None, ("on-demand",), 1.0)
    capacities = {bins[b.name].option.name: dict(b.capacity) for b in problem.bin_types}
    assert capacities["a"]["fits-0"] == 0 and capacities["b"]["fits-0"] == 20
    sizes = [dict(item.size) for item in problem.items]
    assert "fits-0" not in sizes[0] and sizes[1]["fits-0"] == 1


def test_nodes_are_split_by_zone_only_when_a_pod_requires_one():
    options = [option("a", 2000)]
    free = [PodGroup("w", Resources(100, 50, 1), 2)]
    problem, _ = build_problem(options, free, frozenset({"z1", "z2"}), ("on-demand",), 1.0)
    assert len(problem.bin_types) == 1
    pinned = free + [
        PodGroup("in-z1", Resources(100, 50, 1), 1, zones=frozenset({"z1"})),
        PodGroup("in-z2", Resources(100, 50, 1), 1, zones=frozenset({"z2"})),
    ]
    problem, bins = build_problem(options, pinned, frozenset({"z1", "z2"}), ("on-demand",), 1.0)
    assert sorted(bins[b.name].zone for b in problem.bin_types) == ["z1", "z2"]
    # With pods pinned to z2 only, a z2 node can do all a z1 node can: z1 is left out.
    only_z2 = free + [PodGroup("in-z2", Resources(100, 50, 1), 1, zones=frozenset({"z2"}))]
    problem, bins = build_problem(options, only_z2, frozenset({"z1", "z2"}), ("on-demand",), 1.0)
    assert [bins[b.name].zone for b in problem.bin_types] == ["z2"]


def test_types_without_room_for_the_daemonsets_are_left_out():
    options = [option("tiny", 100, overhead=Resources(200, 0, 1)), option("a", 2000)]
    problem, bins = build_problem(options, [PodGroup("w", Resources(100, 50, 1), 1)], None, ("on-demand",), 1.0)
    assert [bins[b.name].option.name for b in problem.bin_types] == ["a"]


needs_solver = pytest.mark.skipif(
    not solver_available(), reason="the bin-packing solver (sizing.binpack.solver) is not installed"
)


@needs_solver
def test_the_optimum_beats_karpenters_narrowing():
    # Three 800m pods: Karpenter launches one large ($4); the optimum is medium + small
    # ($3.1), cheaper than three smalls ($3.3).
    options = [option("small", 1000, price=1.1), option("medium", 2000, price=2), option("large", 4000, price=4)]
    groups = [PodGroup("web", Resources(800, 100, 1), 3)]
    optimal = optimal_fleet(options, groups, work_limit=2000)
    assert optimal.status == "optimal"
    assert optimal.cost == pytest.approx(3.1)
    assert optimal.lower_bound_cost <= optimal.cost + 1e-9
    assert sorted((g.instance_type, g.count) for g in optimal.groups) == [("medium", 1), ("small", 1)]
    assert sum(g.count * sum(g.pods.values()) for g in optimal.groups) == 3
    karpenter = simulate(Scenario(tuple(options), tuple(groups)))
    assert karpenter.cost >= optimal.cost


@needs_solver
def test_confined_pods_stay_on_their_types_in_the_optimum():
    options = [option("cheap", 4000, price=1), option("special", 4000, price=3)]
    groups = [
        PodGroup("free", Resources(1000, 100, 1), 2),
        PodGroup("picky", Resources(1000, 100, 1), 2, allowed_types=frozenset({"special"})),
    ]
    optimal = optimal_fleet(options, groups, work_limit=2000)
    # One special node holds the two picky pods and, for free, the two others: $3.
    assert optimal.cost == pytest.approx(3.0)
    for group in optimal.groups:
        if "picky" in group.pods:
            assert group.instance_type == "special"


def test_types_another_type_beats_on_room_and_price_are_left_out():
    # b has a's room at a higher price; c has more room; d is a's twin (the first is kept).
    options = [
        option("a", 2000, price=1.0),
        option("b", 2000, price=1.5),
        option("c", 4000, price=1.5),
        option("d", 2000, price=1.0),
    ]
    problem, bins = build_problem(options, [PodGroup("w", Resources(100, 50, 1), 5)], None, ("on-demand",), 1.0)
    assert sorted(bins[b.name].option.name for b in problem.bin_types) == ["a", "c"]


def test_a_type_that_only_confined_pods_may_use_is_kept_even_if_pricier():
    options = [option("a", 4000, price=1.0), option("b", 2000, price=1.5)]
    groups = [PodGroup("only-b", Resources(100, 50, 1), 1, allowed_types=frozenset({"b"}))]
    problem, bins = build_problem(options, groups, None, ("on-demand",), 1.0)
    assert sorted(bins[b.name].option.name for b in problem.bin_types) == ["a", "b"]


@pytest.mark.skipif(not solver_available(), reason="the bin-packing solver is not installed")
def test_the_optimal_fleet_never_costs_more_than_the_fleet_at_hand(monkeypatch):
    """A solver that stops early with a dearer fleet (here: one pod per node) gives way to the
    simulated fleet, which keeps the solver's lower bound and is marked feasible."""
    import sizing.binpack.solver as solver
    from sizing.binpack.model import BinGroup, LowerBound, Solution

    options = [option("a", 2000, price=1.0)]
    groups = [PodGroup("w", Resources(500, 100, 1), 4)]
    known = simulate(Scenario(tuple(options), tuple(groups)))
    assert len(known.new_nodes) == 1

    def one_pod_per_node(problem):
        (bin_type,) = problem.bin_types
        (item,) = problem.items
        return Solution("feasible", 4.0, 4, LowerBound(0.5, 1), (BinGroup(bin_type.name, 4, {item.name: 1}),), work=7.0)

    monkeypatch.setattr(solver, "solve", one_pod_per_node)
    # A lower bound below the known fleet's cost, so the solver runs.
    monkeypatch.setattr("sizing.planning.fleet.fleet_lower_bound", lambda *args: (0.5, 1))
    fleet = optimal_fleet(options, groups, known=known)
    assert (fleet.status, fleet.cost, fleet.node_count) == ("feasible", 1.0, 1)
    assert (fleet.lower_bound_cost, fleet.lower_bound_nodes, fleet.work) == (0.5, 1, 7.0)
