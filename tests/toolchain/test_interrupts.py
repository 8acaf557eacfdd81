"""Ctrl-C (SIGINT) and SIGTERM stop every command the README and make run with one line,
`interrupted` or `terminated`, status 130 or 143, and nothing left behind, at any moment: while
modules import, while planning, while files are written (a real signal in a child process:
tests/signals.py)."""

from __future__ import annotations

import signal
import textwrap

import pytest

from sizing.interrupts import INTERRUPTED_STATUS, TERMINATED_STATUS
from tests.signals import MESSAGE, STATUS, run_and_stop
from tests.sizing.test_plan_cli import DEV

SIGINT, SIGTERM = signal.SIGINT, signal.SIGTERM


def _stopped_cleanly(result, number):
    assert result.returncode == STATUS[number], (result.returncode, result.stderr[-3000:])
    assert result.stderr.splitlines()[-1:] == [MESSAGE[number]]
    assert "Traceback" not in result.stderr and "Error" not in result.stderr
    assert result.stdout == ""


def test_the_statuses_are_the_shells():
    assert (INTERRUPTED_STATUS, TERMINATED_STATUS) == (130, 143)


@pytest.fixture
def description(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(DEV))
    return path


@pytest.mark.parametrize(
    ("where", "number"),
    [("/numpy/", SIGINT), ("plan_capacity", SIGINT), ("plan_capacity", SIGTERM)],
    ids=["importing", "planning", "planning-sigterm"],
)
def test_sizing_plan_stops_cleanly(description, tmp_path, where, number):
    result = run_and_stop("sizing", ["plan", str(description), "--workers", "2"], where, number, cwd=tmp_path)
    _stopped_cleanly(result, number)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plan.yaml"]


@pytest.mark.parametrize("number", [SIGINT, SIGTERM])
def test_sizing_plan_output_stopped_while_writing_leaves_the_old_file_and_no_scratch(description, tmp_path, number):
    output = tmp_path / "plan.txt"
    output.write_text("the previous plan\n")
    result = run_and_stop("sizing", ["plan", str(description), "--output", str(output)], "call:fdopen", number)
    _stopped_cleanly(result, number)
    assert output.read_text() == "the previous plan\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["plan.txt", "plan.yaml"]


def _previous_plan(folder):
    folder.mkdir(parents=True)
    (folder / ".eks-autoscaling-plan").write_text("a plan\n")
    (folder / "resources.txt").write_text("TYPE  NAME\nthe previous plan\n")


@pytest.mark.parametrize(
    ("where", "number"),
    [("/pulumi_kubernetes/", SIGINT), ("_write_contents", SIGTERM), ("call:_swap_in", SIGINT)],
    ids=["importing", "writing-sigterm", "swapping"],
)
def test_offline_plan_stops_cleanly_and_keeps_the_previous_plan(tmp_path, where, number):
    output = tmp_path / "plan" / "dev"
    _previous_plan(output)
    result = run_and_stop("offline", ["plan", "--stack", "dev", "--output", str(output)], where, number)
    _stopped_cleanly(result, number)
    assert sorted(path.name for path in output.parent.iterdir()) == ["dev"], "no scratch folder is left"
    assert (output / "resources.txt").read_text() == "TYPE  NAME\nthe previous plan\n"


def test_security_gates_stop_cleanly_while_importing():
    _stopped_cleanly(run_and_stop("security", ["gates", "--stack", "dev"], "/pulumi/", SIGINT), SIGINT)


def test_the_sizing_docs_script_stops_cleanly_while_planning():
    result = run_and_stop("scripts.generate_sizing_docs", ["--check"], "plan_capacity", SIGINT)
    _stopped_cleanly(result, SIGINT)
