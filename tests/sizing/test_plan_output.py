"""`python -m sizing plan --output FILE` writes the plan whole, through a symbolic link, and
never leaves scratch files; on stdout, the report falls back to plain characters where the
terminal's encoding cannot show its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR
from sizing import cli
from sizing.commands.output import PLAIN_CHARACTERS, for_encoding, remove_stale_scratch
from tests.sizing.test_plan_cli import DEV


def _description(tmp_path: Path) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(DEV))
    return path


def _entries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_output_writes_the_report_to_the_file_and_nothing_to_stdout(tmp_path, capsys):
    output = tmp_path / "out" / "plan.txt"
    output.parent.mkdir()
    assert cli.main(["plan", str(_description(tmp_path)), "--output", str(output)]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("", "")
    text = output.read_text(encoding="utf-8")
    assert '  limits:\n    cpu: "5"\n    memory: 17Gi\n' in text and "█" in text
    assert _entries(output.parent) == ["plan.txt"], "no scratch file is left"


def test_output_json_replaces_an_older_file_whole(tmp_path, capsys):
    output = tmp_path / "plan.json"
    output.write_text("an older plan, longer than nothing " * 1000)
    assert cli.main(["plan", str(_description(tmp_path)), "--json", "--output", str(output)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(output.read_text())["limits"]["spec"] == {"cpu": "5", "memory": "17Gi"}
    assert _entries(tmp_path) == ["plan.json", "plan.yaml"]


def test_output_through_a_symbolic_link_replaces_the_file_it_points_to(tmp_path, capsys):
    target = tmp_path / "kept" / "plan.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "plan.json"
    link.symlink_to(target)
    assert cli.main(["plan", str(_description(tmp_path)), "--json", "--output", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["fleet"]["nodeCount"] == 2
    assert _entries(target.parent) == ["plan.json"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir() or p, "is a folder; give the path of a file to write"),
        (lambda p: (p.parent / "nowhere" / "x").parent / "plan.txt", "cannot be written (No such file or directory)"),
        (
            lambda p: p.symlink_to(p.parent / "missing" / "plan.txt") or p,
            "is a symbolic link to '{tmp}/missing/plan.txt', whose folder does not exist",
        ),
    ],
    ids=["folder", "no-folder", "dangling-link"],
)
def test_a_bad_output_is_refused_before_planning(tmp_path, capsys, make, message):
    output = make(tmp_path / "plan.txt")
    assert cli.main(["plan", str(_description(tmp_path)), "--output", str(output)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"error: --output {str(output)!r}") and message.format(tmp=tmp_path) in err
    assert err.count("\n") == 1


def test_scratch_files_of_runs_no_longer_alive_are_removed(tmp_path):
    target = tmp_path / "plan.json"
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(finished.stdout)
    stale = tmp_path / f".plan.json.{dead}-abc123.tmp"
    live = tmp_path / f".plan.json.{os.getppid()}-abc123.tmp"
    other = tmp_path / f".other.json.{dead}-abc123.tmp"
    for path in (stale, live, other):
        path.write_text("{")
    assert remove_stale_scratch(target) == [stale]
    assert _entries(tmp_path) == sorted([live.name, other.name])


def test_two_runs_writing_one_file_leave_valid_json(tmp_path):
    description = _description(tmp_path)
    output = tmp_path / "plan.json"
    command = [sys.executable, "-m", "sizing", "plan", str(description), "--json", "--output", str(output)]
    runs = [subprocess.Popen(command, cwd=PROJECT_DIR, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    assert json.loads(output.read_text())["fleet"]["nodeCount"] == 2
    assert _entries(tmp_path) == ["plan.json", "plan.yaml"]


# --- the terminal's encoding ---------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_the_report_falls_back_to_plain_characters_on_a_terminal_that_cannot_show_them(tmp_path, encoding):
    result = subprocess.run(
        [sys.executable, "-m", "sizing", "plan", str(_description(tmp_path))],
        cwd=PROJECT_DIR,
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": encoding},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    text = result.stdout.decode(encoding)
    assert "UnicodeEncodeError" not in result.stderr.decode(errors="replace")
    assert '  limits:\n    cpu: "5"\n    memory: 17Gi\n' in text
    bars = [line for line in text.splitlines() if line.startswith("nodeclaim-")]
    assert len(bars) == 2 and all("#" in line and "█" not in line and "░" not in line for line in bars)
    # Latin-1 has ×; ASCII has not.
    assert ("1 × m5.large" in text) == (encoding == "latin-1") and ("1 x m5.large" in text) == (encoding == "ascii")


def test_a_utf8_terminal_keeps_the_report_as_it_is():
    text = "nodeclaim-1  cpu  ███░░  2 × m5.large ← sets the cpu limit, … ≤ 30 pods, 40 µs"
    assert for_encoding(text, "utf-8") == text
    assert (
        for_encoding(text, "ascii")
        == "nodeclaim-1  cpu  ###..  2 x m5.large <- sets the cpu limit, ... <= 30 pods, 40 us"
    )
    assert (
        for_encoding(text, "latin-1")
        == "nodeclaim-1  cpu  ###..  2 × m5.large <- sets the cpu limit, ... <= 30 pods, 40 µs"
    )


def test_a_name_the_encoding_cannot_show_is_escaped_not_lost():
    assert for_encoding("workload café-日本", "ascii") == "workload caf\\xe9-\\u65e5\\u672c"
    assert set(PLAIN_CHARACTERS.values()) <= {chr(c) for c in range(128)} | {"...", "<-", "<="}
