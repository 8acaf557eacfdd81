"""The bin-packing solver: packings, bounds, statuses and corner cases."""

import csv
import math

import numpy as np
import pytest

from sizing.binpack.bounds import aggregate_bound, bin_count_bound, martello_toth_l2
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import build_instance
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.solver import solve
from sizing.binpack.vbp import parse_vbp
from sizing.errors import SizingInputError

M5_LARGE = BinType("m5.large", {"cpu": 1930, "memory": 6903, "pods": 29}, 0.096)


def problem(bin_types, items, seconds=5.0):
    return Problem(tuple(bin_types), tuple(items), seconds)


def test_one_bin_type_small_pods_fill_one_node(solution_checker):
    p = problem([M5_LARGE], [ItemType("web", {"cpu": 100, "memory": 128, "pods": 1}, 10)])
    solution = solve(p)
    solution_checker(p, solution)
    assert (solution.status, solution.bin_count) == ("optimal", 1)
    assert solution.cost == pytest.approx(0.096)
    assert [(g.bin_type, g.count, dict(g.items)) for g in solution.bins] == [("m5.large", 1, {"web": 10})]


def test_pod_slots_bind_before_cpu_and_memory(solution_checker):
    p = problem([M5_LARGE], [ItemType("tiny", {"cpu": 10, "memory": 10, "pods": 1}, 30)])
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.bin_count == 2
    assert solution.lower_bound.bins == 2
    assert solution.status == "optimal"


def test_the_cheaper_mix_of_bin_types_wins(solution_checker):
    small = BinType("small", {"cpu": 4}, 1.0)
    large = BinType("large", {"cpu": 10}, 2.2)
    p = problem([small, large], [ItemType("a", {"cpu": 5}, 2), ItemType("b", {"cpu": 4}, 1)])
    solution = solve(p)
    solution_checker(p, solution)
    # One large bin holds the two 5s (cost 2.2), a small one the 4 (1.0).
    assert solution.cost == pytest.approx(3.2)
    assert solution.status == "optimal"


def test_equal_cost_prefers_fewer_bins(solution_checker):
    half = BinType("half", {"cpu": 5}, 1.0)
    whole = BinType("whole", {"cpu": 10}, 2.0)
    p = problem([half, whole], [ItemType("a", {"cpu": 5}, 2)])
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.cost == pytest.approx(2.0)
    assert solution.bin_count == 1


def test_max_count_is_respected(solution_checker):
    cheap = BinType("cheap", {"cpu": 10}, 1.0, max_count=2)
    dear = BinType("dear", {"cpu": 10}, 3.0)
    p = problem([cheap, dear], [ItemType("a", {"cpu": 10}, 5)])
    solution = solve(p)
    solution_checker(p, solution)
    assert {g.bin_type: g.count for g in solution.bins} == {"cheap": 2, "dear": 3}
    assert solution.cost == pytest.approx(11.0)
    assert solution.status == "optimal"


def test_max_counts_too_small_are_infeasible_with_a_reason():
    p = problem([BinType("only", {"cpu": 10}, 1.0, max_count=2)], [ItemType("a", {"cpu": 6}, 3)])
    solution = solve(p)
    assert solution.status == "infeasible"
    assert "max counts" in solution.reason and "'a'" in solution.reason
    assert solution.bins == ()


def test_an_item_too_large_for_every_bin_type_names_item_and_dimension():
    small = BinType("small", {"cpu": 3860, "memory": 8000}, 1.0)
    large = BinType("large", {"cpu": 7910, "memory": 16000}, 2.0)
    p = problem([small, large], [ItemType("web", {"cpu": 9000, "memory": 100}, 1)])
    solution = solve(p)
    assert solution.status == "infeasible"
    assert solution.reason == "item 'web' needs 9000 cpu but the largest bin type offers 7910"


def test_an_item_fitting_each_dimension_somewhere_but_no_type_overall():
    wide = BinType("wide", {"cpu": 10, "memory": 1}, 1.0)
    tall = BinType("tall", {"cpu": 1, "memory": 10}, 1.0)
    solution = solve(problem([wide, tall], [ItemType("square", {"cpu": 5, "memory": 5}, 1)]))
    assert solution.status == "infeasible"
    assert "'square'" in solution.reason and "'wide'" in solution.reason and "'tall'" in solution.reason


def test_a_dimension_a_bin_type_leaves_out_is_unlimited(solution_checker):
    p = problem(
        [BinType("cpu-only", {"cpu": 10}, 1.0)],
        [ItemType("fat", {"cpu": 5, "memory": 10**9}, 2)],
    )
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.bin_count == 1


def test_items_with_the_same_size_are_split_back_by_name(solution_checker):
    p = problem(
        [BinType("b", {"cpu": 4}, 1.0)],
        [ItemType("x", {"cpu": 1}, 3), ItemType("y", {"cpu": 1}, 3), ItemType("z", {"cpu": 2}, 1)],
    )
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.bin_count == 2 and solution.status == "optimal"


def test_no_items_means_no_bins():
    solution = solve(problem([M5_LARGE], [ItemType("idle", {"cpu": 100}, 0)]))
    assert (solution.status, solution.cost, solution.bin_count, solution.bins) == ("optimal", 0.0, 0, ())


def test_zero_capacity_keeps_sized_items_off_a_bin_type(solution_checker):
    # The library accepts capacity 0 (the planner uses it to keep pods off some nodes).
    p = problem(
        [BinType("no-gpu", {"cpu": 10, "gpu": 0}, 1.0), BinType("gpu", {"cpu": 10, "gpu": 1}, 5.0)],
        [ItemType("train", {"cpu": 1, "gpu": 1}, 1), ItemType("serve", {"cpu": 10}, 1)],
    )
    solution = solve(p)
    solution_checker(p, solution)
    assert {g.bin_type for g in solution.bins} == {"no-gpu", "gpu"}
    assert solution.cost == pytest.approx(6.0)


@pytest.mark.parametrize(
    "bin_types, items, message",
    [
        ([], [ItemType("a", {"cpu": 1}, 1)], "at least one bin type"),
        ([BinType("b", {"cpu": 1}, 0.0)], [], "cost must be a positive number"),
        ([BinType("b", {"cpu": -1}, 1.0)], [], "capacity 'cpu' must be between 0"),
        ([BinType("b", {"cpu": 1}, 1.0)], [ItemType("a", {"cpu": -2}, 1)], "size 'cpu' must be between 0"),
        ([BinType("b", {"cpu": 1}, 1.0)], [ItemType("a", {"cpu": 1}, -1)], "count must be an integer"),
        ([BinType("b", {"cpu": 1}, 1.0), BinType("b", {"cpu": 2}, 1.0)], [], "appears more than once"),
        ([BinType("b", {"cpu": 1}, 1.0, max_count=-1)], [], "max count must be"),
    ],
)
def test_malformed_problems_raise_input_errors(bin_types, items, message):
    with pytest.raises(SizingInputError, match=message):
        solve(problem(bin_types, items))


def test_same_input_gives_the_same_output():
    p = problem(
        [BinType("s", {"cpu": 40, "memory": 64}, 1.0), BinType("l", {"cpu": 100, "memory": 128}, 2.5)],
        [ItemType(f"w{k}", {"cpu": 3 + 7 * k % 19, "memory": 5 + 11 * k % 23}, 2 * (1 + k % 3)) for k in range(10)],
    )
    first, second = solve(p), solve(p)
    assert (first.status, first.cost, first.bin_count, first.lower_bound, first.bins) == (
        second.status,
        second.cost,
        second.bin_count,
        second.lower_bound,
        second.bins,
    )
    assert first.status == "optimal" and first.cost == pytest.approx(14.0)


def test_a_short_time_limit_still_gives_a_valid_packing(bench_dir, solution_checker):
    # Many small items per bin: no complete pattern list, so the search is cut by the limit.
    p = parse_vbp((bench_dir / "Panigrahy_class1_120_3_0.vbp").read_text(), time_limit_seconds=0.5)
    solution = solve(p)
    solution_checker(p, solution)
    instance = build_instance(p)
    assert solution.cost <= first_fit_decreasing(instance).cost(instance)
    assert solution.lower_bound.bins <= 30  # the proven optimum


def test_never_worse_than_first_fit_decreasing(solution_checker):
    # FFD opens a third bin here: 6, 6 go to separate bins, the 4s fill them, one 3 is left over... the
    # optimiser pairs (6, 4) twice and the 3s with a 4.
    p = problem(
        [BinType("b", {"cpu": 10}, 1.0)],
        [ItemType("a", {"cpu": 6}, 2), ItemType("b", {"cpu": 4}, 3), ItemType("c", {"cpu": 3}, 2)],
    )
    solution = solve(p)
    solution_checker(p, solution)
    ffd = first_fit_decreasing(build_instance(p))
    assert solution.cost <= ffd.cost(build_instance(p)) + 1e-9
    assert solution.bin_count == 3 and solution.status == "optimal"


def test_martello_toth_l2_beats_the_continuous_bound():
    # Capacity 10, items 6, 6, 6, 5, 5, 5: L1 = 4 but no 6 shares a bin with a 5, so 5 bins.
    assert martello_toth_l2(np.array([6, 5]), np.array([3, 3]), 10) == 5
    assert martello_toth_l2(np.array([5]), np.array([4]), 10) == 2


def test_bin_count_bound_uses_l2_for_one_bin_type():
    p = problem([BinType("b", {"cpu": 10}, 1.0)], [ItemType("a", {"cpu": 6}, 3), ItemType("b", {"cpu": 5}, 3)])
    assert bin_count_bound(build_instance(p)) == 5
    assert solve(p).bin_count == 5


def test_aggregate_bound_counts_resources_and_items_per_bin():
    p = problem(
        [BinType("cpu-heavy", {"cpu": 8, "memory": 2}, 1.0), BinType("mem-heavy", {"cpu": 2, "memory": 8}, 3.0)],
        [ItemType("b", {"cpu": 1, "memory": 1}, 10)],
    )
    bound, reason = aggregate_bound(build_instance(p))
    # Resources alone allow 1.6 bins' worth of cost; but any bin holds at most 2 of the items,
    # so at least 5 bins, all of the cheaper type.
    assert reason is None and bound == pytest.approx(5.0, rel=1e-6)
    solution = solve(p)
    assert solution.cost == pytest.approx(5.0) and solution.status == "optimal"


def test_vbp_parsing_of_a_small_file(tmp_path, solution_checker):
    path = tmp_path / "tiny.vbp"
    path.write_text("2\n10 10\n3\n5 5 2\n10 1 1\n1 9 1\n")
    p = parse_vbp(path.read_text())
    assert [b.capacity for b in p.bin_types] == [{"d0": 10, "d1": 10}]
    assert [(i.name, i.size, i.count) for i in p.items] == [
        ("i0", {"d0": 5, "d1": 5}, 2),
        ("i1", {"d0": 10, "d1": 1}, 1),
        ("i2", {"d0": 1, "d1": 9}, 1),
    ]
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.bin_count == 3 and solution.status == "optimal"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "ends before the number of dimensions"),
        ("2\n10 x\n", "capacity in dimension 1 must be an integer, got 'x'"),
        ("1\n10\n1\n-3 1\n", "item type 0: size in dimension 0 must be at least 0, got -3"),
        ("1\n10\n1\n3 1\n7\n", "unexpected text after the last item type"),
        ("1\n0\n0\n", "capacity in dimension 0 must be at least 1"),
    ],
)
def test_vbp_format_errors(text, message):
    with pytest.raises(SizingInputError, match=message):
        parse_vbp(text)


def test_a_benchmark_instance_reaches_its_proven_optimum(bench_dir, solution_checker):
    name = "Panigrahy_class8_40_3_0.vbp"
    optima = {
        row["file"]: int(row["optimum"]) for row in csv.DictReader((bench_dir / "optima.csv").read_text().splitlines())
    }
    p = parse_vbp((bench_dir / name).read_text(), time_limit_seconds=5.0)
    assert len(p.items) == 40 and p.bin_types[0].capacity == {"d0": 150, "d1": 150, "d2": 150}
    solution = solve(p)
    solution_checker(p, solution)
    assert solution.bin_count == optima[name]
    assert solution.lower_bound.bins <= optima[name]


def test_the_lower_bound_rounds_up_to_whole_bins_for_equal_costs():
    p = problem([BinType("b", {"cpu": 10}, 0.5)], [ItemType("a", {"cpu": 4}, 5)])
    solution = solve(p)
    # 20 cpu of items, but two 4s per bin: 3 bins.
    assert solution.lower_bound.bins == 3
    assert solution.lower_bound.cost == pytest.approx(1.5)
    assert math.isclose(solution.cost, 1.5)


def _many_small_pods_on_several_types():
    rng = np.random.default_rng(3)
    shapes = [(3900, 15000, 0.19), (7900, 31000, 0.38), (15900, 63000, 0.77), (3900, 7500, 0.17)]
    shapes += [(7900, 15000, 0.34), (15900, 30000, 0.68), (31900, 126000, 1.54), (31900, 62000, 1.36)]
    bins = [BinType(f"t{k}", {"cpu": c, "memory": m, "pods": 110}, p) for k, (c, m, p) in enumerate(shapes)]
    items = [
        ItemType(
            f"i{i}",
            {"cpu": int(rng.integers(50, 400)), "memory": int(rng.integers(64, 1500)), "pods": 1},
            int(rng.integers(1000, 5000)),
        )
        for i in range(40)
    ]
    return Problem(tuple(bins), tuple(items), None, 2000)


def test_no_integer_program_where_the_master_lp_leaves_it_little_to_gain(monkeypatch, solution_checker):
    """Thousands of bins of many small pods: rounding the master LP comes within 0.5 % of its
    value, which no integer program over those columns can beat; its work goes to more columns,
    and the solve ends within its budget (an integer program's root is not bounded by work)."""
    import sizing.binpack.solver as solver

    seen = []
    original = solver._integer_program_pays

    def recorded(search, master):
        seen.append((search.incumbent_cost, None if master is None else master.value))
        return original(search, master)

    def forbidden(*args, **kwargs):
        raise AssertionError("an integer program over the columns ran")

    monkeypatch.setattr(solver, "_integer_program_pays", recorded)
    monkeypatch.setattr(solver, "pool_milp", forbidden)
    problem = _many_small_pods_on_several_types()
    solution = solve(problem)
    solution_checker(problem, solution)
    assert seen and all(cost <= value * (1 + solver.MIN_INTEGER_PROGRAM_GAIN) for cost, value in seen)
    assert solution.work <= problem.work_limit * 1.02
    assert solution.cost <= first_fit_decreasing(build_instance(problem)).cost(build_instance(problem))
