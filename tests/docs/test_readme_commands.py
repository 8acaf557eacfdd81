"""The commands the README tells users to run: make targets resolve, Python commands run."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
COMMAND_LINES = [
    line.split("#", 1)[0].strip()
    for block in SHELL_BLOCKS
    for line in block.splitlines()
    if line.split("#", 1)[0].strip()
]
MAKE_LINES = [line for line in COMMAND_LINES if line.startswith("make ")]
PYTHON_LINES = [line for line in COMMAND_LINES if re.match(r"(\S*/)?python3? -m ", line)]


def test_the_readme_has_the_two_commands():
    assert "make up" in MAKE_LINES and "make test" in MAKE_LINES


@pytest.mark.parametrize("line", MAKE_LINES)
def test_make_commands_resolve(line):
    # -n: print what would run without running it; an unknown target or variable error fails.
    words = shlex.split(line)
    result = subprocess.run(["make", "-n", *words[1:]], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "No rule to make target" not in result.stderr


# What a scratch copy of the project leaves out: the user's files and the tools' caches.
NOT_COPIED = (".git", ".venv", ".tools", "build", ".pulumi-state", "__pycache__", ".hypothesis", "node_modules")


@pytest.fixture(scope="module")
def scratch_project(tmp_path_factory) -> Path:
    """A copy of the project to run the README's commands in: they write `build/`, which in the
    project folder holds the user's own plans."""
    copy = tmp_path_factory.mktemp("readme") / "project"
    shutil.copytree(PROJECT_DIR, copy, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    return copy


@pytest.mark.parametrize("line", PYTHON_LINES)
def test_python_commands_run(line, scratch_project):
    words = shlex.split(line)
    result = subprocess.run(
        [sys.executable, *words[1:]], cwd=scratch_project, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    if " offline plan " in f" {line} ":
        assert list((scratch_project / "build").rglob(".eks-autoscaling-plan")), "the plan is in the scratch copy"


def test_python_commands_are_found():
    assert PYTHON_LINES, "the README shows how to run the capacity planner"
