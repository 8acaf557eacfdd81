"""A pytest plugin that fails the run when the tests change the project's working files.

A user keeps plans and kubeconfigs under `build/` (`make plan`, the README's "compare two
commits" steps, `make kubeconfig`) and edits files git sees. The suite must leave both as it
found them: before the first test, the plugin records every entry under `<rootdir>/build`
(a file by its bytes' SHA-256, a symlink by its target, a folder by its presence) and every
file `git status` lists (changed or untracked, not ignored), by the same measure; after the last
test it records them again and, when they differ, names the paths and makes the exit status 1.

Under pytest-xdist the controller does both, around every worker's tests.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

WATCHED = "build"
# The paths named in the failure message; the rest are counted.
SHOWN_PATHS = 20
_BEFORE = pytest.StashKey[dict[str, str]]()


def _fingerprint(path: Path) -> str:
    if path.is_symlink():
        return f"symlink to {os.readlink(path)}"
    if path.is_dir():
        return "folder"
    if path.is_file():
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as error:
            return f"unreadable ({error.strerror})"
        return f"sha256 {digest.hexdigest()}"
    return "missing" if not os.path.lexists(path) else "special file"


def _git_listed(root: Path) -> list[str]:
    """Paths (relative to `root`) that `git status` shows: changed, added or untracked, not ignored."""
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return []
    result = subprocess.run(
        [git, "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "."],
        capture_output=True,
        timeout=60,
        check=False,
    )
    if result.returncode != 0:
        return []
    # Each entry: two status letters, a space, the path relative to the repository's top.
    top = subprocess.run(
        [git, "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    base = Path(top) if top else root
    paths = []
    for entry in result.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) > 3:
            absolute = base / entry[3:]
            try:
                paths.append(str(absolute.relative_to(root)))
            except ValueError:
                continue
    return paths


def snapshot(root: Path) -> dict[str, str]:
    """Relative path -> fingerprint of everything under `root/build` and every file git lists as
    changed or untracked."""
    entries: dict[str, str] = {}
    watched = root / WATCHED
    if os.path.lexists(watched):
        entries[WATCHED] = _fingerprint(watched)
        if watched.is_dir() and not watched.is_symlink():
            for folder, folders, files in os.walk(watched):
                for name in [*folders, *files]:
                    path = Path(folder, name)
                    entries[str(path.relative_to(root))] = _fingerprint(path)
    for relative in _git_listed(root):
        entries.setdefault(relative, _fingerprint(root / relative))
    return entries


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """One line per path added, removed or changed, sorted."""
    lines = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            lines.append(f"{path}: created ({new})")
        elif new is None:
            lines.append(f"{path}: removed (was {old})")
        else:
            lines.append(f"{path}: changed ({old} -> {new})")
    return lines


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_xdist_worker(session.config):
        session.config.stash[_BEFORE] = snapshot(session.config.rootpath)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if _is_xdist_worker(config) or _BEFORE not in config.stash:
        return
    changed = differences(config.stash[_BEFORE], snapshot(config.rootpath))
    if not changed:
        return
    shown = changed[:SHOWN_PATHS]
    more = len(changed) - len(shown)
    message = [
        f"error: the tests changed {len(changed)} of the project's files in {config.rootpath} "
        "(tests must write to temporary folders only):",
        *(f"  {line}" for line in shown),
        *([f"  ... and {more} more"] if more else []),
    ]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        for line in message:
            reporter.write_line(line, red=True, bold=True)
    else:
        print("\n".join(message))
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
