"""`make install` installs the project: the `eks-sizing` command, and `python -m sizing`, work
from any folder. Tried in a virtualenv of its own under a temporary folder, with the command
line `make install` runs, on a scratch copy of the project; the virtualenv reads the running
environment's packages (a `.pth` file) for the dependencies and the build backend."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR
from tests.docs.test_readme_commands import NOT_COPIED
from tests.sizing.test_plan_cli import DEV


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except Exception:
        return 0


def _project_install_line(venv: Path) -> str:
    """The command line of `make install` that installs the project, for the virtualenv `venv`."""
    result = subprocess.run(
        ["make", "-B", "-n", "install", f"VENV={venv}"], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if "pip install" in line and "--editable" in line]
    return line


def _venv_with_dependencies(root: Path) -> Path:
    """A virtualenv under `root` that reads the running environment's packages, without the project."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    (Path(purelib) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    if shutil.which("make") is None:
        pytest.skip("make is not installed, and the install is make's")
    if _setuptools_major() < 77:
        pytest.skip("setuptools 77 or later is not installed next to this Python (requirements-dev.lock has it)")
    root = tmp_path_factory.mktemp("install")
    project = root / "project"
    shutil.copytree(PROJECT_DIR, project, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    venv = _venv_with_dependencies(root)
    line = _project_install_line(venv)
    result = subprocess.run(shlex.split(line), cwd=project, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return venv


def _elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "plan.yaml").write_text(textwrap.dedent(DEV))
    return folder


def test_the_project_is_installed_with_its_command(installed):
    assert (installed / "bin" / "eks-sizing").is_file()
    assert "sizing.__main__ import console" in (installed / "bin" / "eks-sizing").read_text()


def test_eks_sizing_plans_from_another_folder(installed, tmp_path):
    folder = _elsewhere(tmp_path)
    result = subprocess.run(
        [str(installed / "bin" / "eks-sizing"), "plan", "plan.yaml", "--json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["limits"]["spec"] == {"cpu": "5", "memory": "17Gi"}


def test_python_m_sizing_works_from_another_folder(installed, tmp_path):
    folder = _elsewhere(tmp_path)
    result = subprocess.run(
        [str(installed / "bin" / "python"), "-m", "sizing", "--help"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert "{solve,plan,catalog}" in result.stdout


def test_without_the_install_python_m_sizing_is_not_found_elsewhere(tmp_path):
    # What `make install` changes: an environment with the dependencies but no install of the
    # project does not find the package outside the project folder.
    bare = _venv_with_dependencies(tmp_path)
    result = subprocess.run(
        [str(bare / "bin" / "python"), "-m", "sizing", "--help"],
        cwd=_elsewhere(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 1 and "No module named sizing" in result.stderr


def test_the_installed_command_names_itself_in_its_help(installed, tmp_path):
    result = subprocess.run(
        [str(installed / "bin" / "eks-sizing"), "--help"],
        cwd=_elsewhere(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: eks-sizing ")
