"""The guides name the project's files and modules as they are: a path or dotted module in backticks exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.architecture.imports import PACKAGES

PROJECT_DIR = Path(__file__).resolve().parents[2]
GUIDES = sorted(
    [PROJECT_DIR / "README.md", *(PROJECT_DIR / "docs").glob("*.md"), PROJECT_DIR / "manifests" / "README.md"]
)
_TOP = "|".join(sorted(PACKAGES))
# `sizing/planning/planner.py`, `stackconfig/`, `components/addons.py`
_PATH = re.compile(rf"`((?:{_TOP})/[A-Za-z0-9_./-]*)`")
# `stackconfig.load.load_from_pulumi()`, `sizing.planning.planner`
_DOTTED = re.compile(rf"`((?:{_TOP})(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`")


def _ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(PROJECT_DIR)) for path in paths]


def _ignored(path: str) -> bool:
    """A path git ignores, or a file in it, is made at run time (a virtualenv, a build folder)."""
    return (
        subprocess.run(["git", "check-ignore", "-q", path.rstrip("/") + "/x"], cwd=PROJECT_DIR, check=False).returncode
        == 0
    )


def _module_file(parts: list[str]) -> Path | None:
    base = PROJECT_DIR / Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _dotted_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module = _module_file(parts[:end])
        if module is None:
            continue
        # What follows the module is a name defined or re-exported in it; only its first part is checked.
        return end == len(parts) or re.search(rf"\b{re.escape(parts[end])}\b", module.read_text()) is not None
    return False


def missing_paths(text: str) -> list[str]:
    """The project paths and dotted module names in backticks that name nothing in the tree."""
    missing = [
        path for path in _PATH.findall(text) if not (PROJECT_DIR / path.rstrip("/")).exists() and not _ignored(path)
    ]
    return missing + [dotted for dotted in _DOTTED.findall(text) if not _dotted_exists(dotted)]


@pytest.mark.parametrize("path", GUIDES, ids=_ids(GUIDES))
def test_named_project_paths_exist(path):
    assert missing_paths(path.read_text()) == []


def test_a_moved_module_is_found_missing():
    text = "`stackconfig/no_such_module.py`, `sizing.planning.no_such_module.plan()` and `sizing/planning/planner.py`"
    assert missing_paths(text) == ["stackconfig/no_such_module.py", "sizing.planning.no_such_module.plan"]
