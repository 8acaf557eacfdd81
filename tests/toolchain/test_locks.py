"""The locks agree with their requirement files, and `make install` and the tool environments use them."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR

# requirement file (human-edited, top-level pins) -> its lock (every transitive version)
LOCKS = {
    "requirements.txt": "requirements.lock",
    "requirements-dev.txt": "requirements-dev.lock",
    "security/requirements-checkov.txt": "security/requirements-checkov.lock",
    "security/requirements-parliament.txt": "security/requirements-parliament.lock",
    "policies/requirements.txt": "policies/requirements.lock",
}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(\s*;\s*([^\\]+?))?\s*\\?$")
HASH = re.compile(r"^\s+--hash=sha256:[0-9a-f]{64}")


def canonical(name: str) -> str:
    """PEP 503: case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level_pins(path: Path) -> dict[str, str]:
    """name -> version of a requirement file, following `-r` includes; anything but `==` pins is refused."""
    pins: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            pins.update(top_level_pins(path.parent / line[3:].strip()))
            continue
        match = PIN.match(line)
        assert match, f"{path.relative_to(PROJECT_DIR)}: {raw!r} is not an exact pin (name==version)"
        pins[canonical(match[1])] = match[2]
    return pins


def locked(path: Path) -> dict[str, set[str]]:
    """name -> the versions a lock holds (a universal lock may hold one per Python version)."""
    versions: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            versions.setdefault(canonical(match[1]), set()).add(match[2])
    return versions


@pytest.mark.parametrize("requirements, lock", LOCKS.items())
def test_every_top_level_pin_is_in_the_lock_at_its_version(requirements, lock):
    pins = top_level_pins(PROJECT_DIR / requirements)
    versions = locked(PROJECT_DIR / lock)
    assert pins, requirements
    wrong = {
        name: (version, sorted(versions.get(name, ())))
        for name, version in pins.items()
        if versions.get(name) != {version}
    }
    assert not wrong, f"{lock} is stale for {requirements} (pinned, locked): {wrong}; run `make lock`"


@pytest.mark.parametrize("lock", LOCKS.values())
def test_every_locked_package_carries_hashes(lock):
    lines = (PROJECT_DIR / lock).read_text().splitlines()
    starts = [index for index, line in enumerate(lines) if PIN.match(line)]
    assert starts, lock
    for index in starts:
        assert lines[index].endswith("\\") and HASH.match(lines[index + 1]), f"{lock}: {lines[index]!r} has no hash"


def test_the_runtime_lock_is_the_development_lock_s_subset():
    runtime = locked(PROJECT_DIR / "requirements.lock")
    development = locked(PROJECT_DIR / "requirements-dev.lock")
    differing = {
        name: (versions, development.get(name))
        for name, versions in runtime.items()
        if development.get(name) != versions
    }
    assert not differing, f"the runtime and development locks disagree: {differing}; run `make lock`"


def test_pyproject_reads_its_dependencies_from_requirements_txt():
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())
    assert "dependencies" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["dependencies"] == {"file": ["requirements.txt"]}
    minimum = project["project"]["requires-python"]
    assert minimum == ">=3.11"
    # The Makefile refuses an older Python with the same minimum.
    assert "sys.version_info < (3, 11)" in (PROJECT_DIR / "Makefile").read_text()


def _dry_run(*targets: str) -> str:
    # -B: as if nothing were built yet; -n: print the recipes without running them.
    result = subprocess.run(["make", "-B", "-n", *targets], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_install_installs_the_development_lock_with_hashes():
    commands = [line for line in _dry_run("install").splitlines() if "pip install" in line]
    # The project itself is installed without dependencies, so nothing comes from outside the lock.
    project = [line for line in commands if "--editable ." in line]
    assert len(project) == 1 and "--no-deps" in project[0] and "--no-build-isolation" in project[0], commands
    locked = [line for line in commands if line not in project]
    assert locked and all("--require-hashes" in line and "requirements-dev.lock" in line for line in locked), commands
    assert not any("requirements-dev.txt" in line or "requirements.txt" in line for line in commands), commands


def test_the_tool_environments_install_their_locks_with_hashes():
    commands = [line for line in _dry_run("security-tools", "policy-tools").splitlines() if "pip install" in line]
    installed = {re.search(r"--requirement (\S+)", line)[1] for line in commands}
    assert installed == {
        "security/requirements-checkov.lock",
        "security/requirements-parliament.lock",
        "policies/requirements.lock",
    }
    assert all("--require-hashes" in line for line in commands), commands


def test_make_lock_regenerates_every_lock():
    commands = _dry_run("lock")
    for requirements, lock in LOCKS.items():
        assert re.search(
            rf"pip compile .*--generate-hashes.* {re.escape(requirements)} .*--output-file {re.escape(lock)}", commands
        ), lock
