"""The plan depends on its input only: a slow or loaded machine gives byte-identical output."""

import itertools
import json
import time

from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.solver import solve
from sizing.cli import main


def _slow_clock(monkeypatch):
    # Every reading is 5 s after the last: any wall-clock deadline would cut the search short.
    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: 5.0 * next(ticks))


def test_the_solver_spends_the_same_work_on_a_slow_machine(monkeypatch):
    problem = Problem(
        (BinType("s", {"cpu": 40, "memory": 64}, 1.0), BinType("l", {"cpu": 100, "memory": 128}, 2.5)),
        tuple(ItemType(f"w{k}", {"cpu": 3 + 7 * k % 19, "memory": 5 + 11 * k % 23}, 2 * (1 + k % 3)) for k in range(10)),
        work_limit=300,
    )
    fast = solve(problem)
    _slow_clock(monkeypatch)
    slow = solve(problem)
    assert (slow.status, slow.cost, slow.bins, slow.lower_bound, slow.work) == (
        fast.status, fast.cost, fast.bins, fast.lower_bound, fast.work,
    )


def test_plan_json_is_byte_identical_on_a_slow_machine(monkeypatch, capsys):
    assert main(["plan", "--stack", "prod", "--json"]) == 0
    fast = capsys.readouterr().out
    _slow_clock(monkeypatch)
    assert main(["plan", "--stack", "prod", "--json"]) == 0
    slow = capsys.readouterr().out
    assert slow == fast
    data = json.loads(fast)
    assert "seconds" not in data["optimal"] and data["optimal"]["work"] > 0
