"""The bounded runner measures the child's own peak memory, not that of the test worker it forks from."""

from __future__ import annotations

import sys

import pytest

from tests.bounded import run_bounded

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status (Linux)")

HOG = "import sys\nheld = bytearray(int(sys.argv[1]) * 2**20)\nheld[::4096] = b'x' * len(held[::4096])\n"


def test_a_large_worker_does_not_count_as_the_childs_memory(tmp_path):
    (tmp_path / "small.py").write_text("print('ok')\n")
    ballast = bytearray(600 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched, so resident
    run = run_bounded(["-m", "small"], cwd=tmp_path)
    del ballast
    assert run.returncode == 0 and run.stdout == "ok\n", run
    assert run.max_rss_mib < 100, run


def test_the_childs_own_memory_is_measured(tmp_path):
    (tmp_path / "hog.py").write_text(HOG)
    run = run_bounded(["-m", "hog", "300"], cwd=tmp_path)
    assert run.returncode == 0, run
    assert 300 <= run.max_rss_mib < 400, run


def test_the_childs_exit_status_and_arguments_pass_through(tmp_path):
    (tmp_path / "status.py").write_text("import sys\nprint(sys.argv[1:])\nsys.exit(3)\n")
    run = run_bounded(["-m", "status", "a", "b"], cwd=tmp_path)
    assert run.returncode == 3 and run.stdout == "['a', 'b']\n", run
