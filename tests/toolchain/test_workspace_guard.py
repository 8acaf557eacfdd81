"""The suite leaves the project's files as it found them: tests/workspace_guard.py fails a run
that changes `build/` or a file git sees, and passes one that does not."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR

PLANTED = b"TYPE  NAME\nthe user's saved plan\n"


def _project(tmp_path: Path, test_body: str) -> Path:
    """A project of its own with a planted plan under build/ and one test."""
    project = tmp_path / "project"
    (project / "build" / "plan-before" / "dev").mkdir(parents=True)
    (project / "build" / "plan-before" / "dev" / "resources.txt").write_bytes(PLANTED)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (project / "conftest.py").write_text('pytest_plugins = ["tests.workspace_guard"]\n')
    (project / "test_it.py").write_text(
        "from pathlib import Path\n\n\ndef test_it():\n" + textwrap.indent(textwrap.dedent(test_body), "    ")
    )
    return project


def _pytest(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *arguments, str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["one-process", "xdist"])
def test_a_test_that_overwrites_a_saved_plan_fails_the_run(tmp_path, workers):
    project = _project(
        tmp_path,
        """
        Path("build/plan-before/dev/resources.txt").write_text("the current commit's plan\\n")
        Path("build/plan/dev").mkdir(parents=True)
        """,
    )
    result = _pytest(project, *workers)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert "error: the tests changed 3 of the project's files" in result.stdout
    assert "build/plan-before/dev/resources.txt: changed (sha256 " in result.stdout
    assert "build/plan/dev: created (folder)" in result.stdout


def test_a_test_that_writes_to_a_temporary_folder_passes(tmp_path):
    project = _project(tmp_path, "assert Path('build/plan-before/dev/resources.txt').read_bytes()\n")
    result = _pytest(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "changed" not in result.stdout
    assert (project / "build" / "plan-before" / "dev" / "resources.txt").read_bytes() == PLANTED


def test_a_file_git_sees_is_watched_too(tmp_path):
    git = subprocess.run(["git", "--version"], capture_output=True, check=False)
    if git.returncode != 0:
        pytest.skip("git is not installed, and the guard reads git's view of the project")
    project = _project(tmp_path, 'Path("schema.json").write_text("{}")\n')
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    result = _pytest(project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "schema.json: created (sha256 " in result.stdout


def test_the_project_s_own_runs_are_guarded(request):
    assert request.config.pluginmanager.has_plugin("tests.workspace_guard")
