"""`python -m security`: exit status 0 when every gate passes, 1 on findings, 2 when a gate cannot run."""

from __future__ import annotations

from security.__main__ import available_stacks, main
from security.gates import GATES
from tests.security.conftest import STACKS


def test_every_stack_file_is_a_stack():
    assert available_stacks() == STACKS and "dev" in STACKS and "prod" in STACKS


def test_gates_pass_on_the_prod_stack(capsys):
    assert main(["gates", "--stack", "prod"]) == 0
    output = capsys.readouterr().out
    assert output.startswith("stack prod\n")
    assert output.count("  ok  ") == len(GATES) and "FAIL" not in output


def test_an_unknown_stack_cannot_be_checked(capsys):
    assert main(["gates", "--stack", "staging"]) == 2
    assert "no stack file for staging" in capsys.readouterr().err


def test_check_refuses_to_run_without_its_tools(tmp_path, capsys):
    missing = tmp_path / "checkov"
    assert main(["check", "--stack", "dev", "--checkov", str(missing), "--parliament", str(missing)]) == 2
    assert f"{missing} does not exist" in capsys.readouterr().err


def test_check_refuses_to_run_without_a_plan(tmp_path, capsys):
    tool = tmp_path / "tool"
    tool.write_text("")
    arguments = [
        "check",
        "--stack",
        "dev",
        "--checkov",
        str(tool),
        "--parliament",
        str(tool),
        "--plan-dir",
        str(tmp_path),
    ]
    assert main(arguments) == 2
    assert "run `python -m offline plan --stack dev` first" in capsys.readouterr().err
