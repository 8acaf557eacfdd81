"""Simulations side by side: the same plan with one worker or several, and a child that fails
never changes an answer."""

import json
import multiprocessing
import os
from dataclasses import replace
from types import MappingProxyType

import pytest

from sizing.cli import main
from sizing.kube.scheduling import ZONE_KEY, LabelSelector, PodScheduling, TopologySpread
from sizing.kube.workloads import Workload
from sizing.planning import planner, side_by_side
from sizing.planning.limit_search import EarlyFleet
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.recommendation import recommend
from sizing.planning.report_data import plan_data
from sizing.planning.side_by_side import MAX_WORKERS, can_fork, run_around, run_side_by_side

needs_fork = pytest.mark.skipif(
    not can_fork(), reason="side by side forks on Linux only; here every task runs in the calling process"
)


def _child_started():
    return multiprocessing.get_context("fork").Event() if can_fork() else None


def _pid(value, started=None, parent=None):
    """A task returning (value, its process); the first one waits (up to a minute) until a task has
    started in another process, so a child always takes some, however loaded the machine."""

    def task():
        if started is not None:
            if os.getpid() != parent:
                started.set()
            elif value == 0:
                started.wait(60)
        return value, os.getpid()

    return task


@needs_fork
def test_tasks_run_in_two_processes_and_come_back_in_order():
    parent = os.getpid()
    child_started, parent_started = _child_started(), _child_started()

    def meeting(value):
        """A task that, wherever it runs, waits (up to a minute) until the other process has
        started one too: whichever process takes the first task, neither can take them all."""

        def task():
            mine, theirs = (parent_started, child_started) if os.getpid() == parent else (child_started, parent_started)
            mine.set()
            theirs.wait(60)
            return value, os.getpid()

        return task

    results = run_side_by_side([meeting(k) for k in range(6)], 2)
    assert [value for value, _ in results] == list(range(6))
    pids = {pid for _, pid in results}
    # Which process ran which task, should a child not have taken one.
    assert os.getpid() in pids and len(pids) == 2, f"parent {os.getpid()}, results {results}"


def test_one_worker_runs_everything_here():
    results = run_side_by_side([_pid(k) for k in range(3)], 1)
    assert {pid for _, pid in results} == {os.getpid()}


@needs_fork
def test_read_only_mappings_come_back_from_a_child():
    parent, started = os.getpid(), _child_started()

    def mapping():
        if os.getpid() != parent:
            started.set()
        return MappingProxyType({"child": os.getpid() != parent, "nested": MappingProxyType({"a": 1})})

    results = run_side_by_side([_pid(0, started, parent), mapping, mapping, mapping], 2)
    assert all(isinstance(r, MappingProxyType) for r in results[1:])
    assert any(r["child"] for r in results[1:])
    assert all(r["nested"]["a"] == 1 for r in results[1:])


@needs_fork
def test_a_task_that_fails_in_a_child_is_run_again_here():
    parent, started = os.getpid(), _child_started()

    def only_here(value):
        def task():
            if os.getpid() != parent:
                started.set()
                raise RuntimeError("a child cannot do this")
            if value == 0:
                started.wait(60)
            return value, os.getpid()

        return task

    assert run_side_by_side([only_here(k) for k in range(4)], 2) == [(k, parent) for k in range(4)]
    assert started.is_set()  # a child did take a task, and failed it


@needs_fork
def test_an_error_reaches_the_caller_as_it_would_without_workers():
    def broken():
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_side_by_side([_pid(0), broken, _pid(1)], 2)


def _wide_plan_input():
    # Several instance families: the recommendation ranks restrictions, and checks the limits of
    # the one it chooses, both side by side with two workers.
    return PlanInput(
        workloads=(
            Workload("web", 500, 1024, replicas=40, max_surge="25%"),
            Workload("api", 1500, 3072, replicas=12, max_surge="25%"),
            Workload("cache", 250, 6144, replicas=9),
        ),
        node_pool=NodePoolSpec(
            requirements=(
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5", "m5", "r5", "m6i"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            )
        ),
        zones=("us-east-1a", "us-east-1b", "us-east-1c"),
    )


@needs_fork
def test_the_plan_is_byte_identical_with_one_worker_or_two():
    one = plan_capacity(_wide_plan_input(), workers=1)
    two = plan_capacity(_wide_plan_input(), workers=2)
    assert one.recommendation.evaluated > 2  # candidates were simulated side by side
    assert json.dumps(plan_data(two), sort_keys=True) == json.dumps(plan_data(one), sort_keys=True)


@needs_fork
def test_the_solver_and_likely_candidates_run_beside_the_limit_search(monkeypatch):
    """With two workers the optimal fleet and the recommendation's likely candidates are worked
    out beside the limit search, for the pods the rollout places without limits, and used as
    they are (the planned rollout places the same pods): nothing runs beside the recommendation."""
    one = plan_capacity(_wide_plan_input(), workers=1)

    def not_needed(*args, **kwargs):
        raise AssertionError("the solver ran again after the limit search")

    monkeypatch.setattr(planner, "run_beside", not_needed)
    two = plan_capacity(_wide_plan_input(), workers=2)
    assert json.dumps(plan_data(two), sort_keys=True) == json.dumps(plan_data(one), sort_keys=True)


@needs_fork
def test_early_results_for_other_pods_are_not_used(monkeypatch):
    """If the planned rollout placed other pods on new nodes than the run without limits, what
    was worked out beside the search is dropped and computed again: the plan stays the same."""
    one = plan_capacity(_wide_plan_input(), workers=1)
    original = EarlyFleet.__init__
    calls = []

    def other_pods(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.groups = self.groups[1:]

    def counted(*args, **kwargs):
        calls.append(1)
        return side_by_side.run_beside(*args, **kwargs)

    monkeypatch.setattr(EarlyFleet, "__init__", other_pods)
    monkeypatch.setattr(planner, "run_beside", counted)
    two = plan_capacity(_wide_plan_input(), workers=2)
    assert calls == [1]
    assert json.dumps(plan_data(two), sort_keys=True) == json.dumps(plan_data(one), sort_keys=True)


def _zone_spread_plan_input():
    # Topology spread: no optimal fleet, but the recommendation still ranks restrictions.
    base = _wide_plan_input()
    spread = PodScheduling(
        labels={"app": "web"},
        topology_spread=(TopologySpread(ZONE_KEY, 1, "DoNotSchedule", LabelSelector({"app": "web"})),),
    )
    web = replace(base.workloads[0], scheduling=spread)
    return replace(base, workloads=(web, *base.workloads[1:]))


@needs_fork
def test_with_topology_the_likely_candidates_run_beside_the_limit_search(monkeypatch):
    """Without an optimal fleet (topology constraints) the likely candidates still run beside the
    limit search, and the recommendation takes them as they are: the plan is the same."""
    one = plan_capacity(_zone_spread_plan_input(), workers=1)
    known = []

    def recorded(*args, **kwargs):
        known.append(len(kwargs.get("known_outcomes") or {}))
        return recommend(*args, **kwargs)

    monkeypatch.setattr(planner, "recommend", recorded)
    two = plan_capacity(_zone_spread_plan_input(), workers=2)
    assert one.optimal is None and one.recommendation.evaluated > 2
    assert known and known[0] >= 2
    assert json.dumps(plan_data(two), sort_keys=True) == json.dumps(plan_data(one), sort_keys=True)


@needs_fork
def test_run_around_runs_the_foreground_here_and_the_tasks_in_order():
    parent, started = os.getpid(), _child_started()

    def foreground():
        started.wait(60)  # a child has taken a task by now
        return "searched", os.getpid()

    result, tasks = run_around(foreground, [_pid(k, started, parent) for k in range(1, 5)], 2)
    assert result == ("searched", parent)
    assert [value for value, _ in tasks] == [1, 2, 3, 4]
    assert any(pid != parent for _, pid in tasks)


def test_run_around_with_one_worker_runs_no_task():
    ran = []
    result, tasks = run_around(lambda: "searched", [lambda: ran.append(1)], 1)
    assert (result, tasks, ran) == ("searched", None, [])


@needs_fork
def test_run_around_reruns_here_a_task_a_child_failed():
    parent, started = os.getpid(), _child_started()

    def only_here():
        if os.getpid() != parent:
            started.set()
            raise RuntimeError("a child cannot do this")
        return os.getpid()

    def foreground():
        started.wait(60)  # the child has taken the task, and fails it
        return "searched"

    result, tasks = run_around(foreground, [only_here], 2)
    assert (result, tasks) == ("searched", [parent])
    assert started.is_set()


@pytest.mark.parametrize("workers", ["0", "-1", str(MAX_WORKERS + 1)])
def test_the_command_refuses_a_worker_count_out_of_range(workers, capsys):
    assert main(["plan", "--stack", "dev", "--workers", workers]) == 2
    assert capsys.readouterr().err == (f"error: --workers must be an integer from 1 to {MAX_WORKERS}, got {workers}\n")


def test_off_linux_every_task_runs_here(monkeypatch):
    monkeypatch.setattr("sys.platform", "darwin")
    assert not can_fork()
    results = run_side_by_side([_pid(k) for k in range(3)], 2)
    assert {pid for _, pid in results} == {os.getpid()}
