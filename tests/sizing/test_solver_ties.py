"""With equal costs, the solver returns the packing with the fewest bins."""

from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.solver import solve


def test_equal_cost_prefers_fewer_bins():
    # Three items of 3: three small bins (3 x 1.0) or one large and one small (2.0 + 1.0) cost the
    # same; first-fit decreasing finds the three small bins, which already meets the cost bound.
    problem = Problem(
        bin_types=(
            BinType("large", {"cpu": 6}, 2.0),
            BinType("small", {"cpu": 4}, 1.0),
            BinType("small-copy", {"cpu": 4}, 1.0),
        ),
        items=(ItemType("pod", {"cpu": 3}, 3),),
        work_limit=2000,
    )
    solution = solve(problem)
    assert solution.status == "optimal"
    assert solution.cost == 3.0
    assert solution.bin_count == 2
    assert {group.bin_type: group.items["pod"] for group in solution.bins} == {"large": 2, "small": 1}


def test_a_cheaper_packing_still_wins_over_fewer_bins():
    problem = Problem(
        bin_types=(BinType("large", {"cpu": 6}, 2.5), BinType("small", {"cpu": 4}, 1.0)),
        items=(ItemType("pod", {"cpu": 3}, 3),),
        work_limit=2000,
    )
    solution = solve(problem)
    assert (solution.cost, solution.bin_count) == (3.0, 3)
