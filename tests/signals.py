"""Run a command in a child process and send it a real signal at a chosen moment.

The child runs the command's module as `python -m` would (`runpy`, as `__main__`), with a thread
that watches the main thread's stack and sends the signal to its own process (`os.kill`) as soon
as a frame there matches WHERE: a function's name (`plan_capacity`), or a fragment of a source
file's path (`/numpy/`: while numpy's modules are imported). `call:NAME` sends it as a function
of that name is called (a profile hook: for a call too short to be seen by watching), such as
`call:fdopen`, once a scratch file exists. The moment is exact, so the test does not depend on
the machine's speed; the signal is the one a terminal or `kill` sends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from offline.program import PROJECT_DIR

BOOTSTRAP = r"""
import os, runpy, sys, threading, time

module, where, number = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.argv = [module, *sys.argv[4:]]
main = threading.main_thread().ident


def matches(frame):
    while frame is not None:
        code = frame.f_code
        if code.co_name == where or ("/" in where and where in code.co_filename):
            return True
        frame = frame.f_back
    return False


def watch():
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if matches(sys._current_frames().get(main)):
            os.kill(os.getpid(), number)
            return
        time.sleep(0.0002)


def on_call(frame, event, argument):
    if event == "call" and frame.f_code.co_name == where[len("call:"):]:
        sys.setprofile(None)
        os.kill(os.getpid(), number)


if where.startswith("call:"):
    sys.setprofile(on_call)
else:
    threading.Thread(target=watch, daemon=True).start()
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
MESSAGE = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def run_and_stop(
    module: str,
    arguments: list[str],
    where: str,
    number: signal.Signals,
    cwd: Path = PROJECT_DIR,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """`python -m module arguments...`, sent `number` when its main thread is at `where`."""
    return subprocess.run(
        [sys.executable, "-c", BOOTSTRAP, module, where, str(int(number)), *arguments],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
