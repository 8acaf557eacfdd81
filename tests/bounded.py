"""Run a command in a child process under a memory and a CPU-time limit, and measure what it used.

The limits are the test's own bound: input that would hang or eat memory fails the test by
hitting them (the child is killed, or dies of MemoryError) instead of stalling the suite.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

PROJECT_DIR = Path(__file__).resolve().parents[1]
# Address space of the child: the planner's imports (numpy, scipy, HiGHS) fit in well under half.
MEMORY_LIMIT_MIB = 1024
# CPU seconds the child may use; a refusal before planning takes about two (mostly imports).
CPU_LIMIT_SECONDS = 30
# Wall-clock seconds before the child is killed (the machine may be shared and busy).
WALL_LIMIT_SECONDS = 180


@dataclass(frozen=True)
class BoundedRun:
    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float
    max_rss_mib: float
    wall_seconds: float


# The child's peak resident memory, read by the child itself as it exits. The kernel's own figure
# (`ru_maxrss` from wait4) starts from the moment of the fork, when the child still shares every
# page of the test worker that forked it, so it reports the worker's size once the worker has grown;
# VmHWM is the peak of the program the child runs (its memory map is new at exec).
_PEAK_REPORTER = """
import atexit, os, runpy, sys

def _report_peak(fd=int(os.environ.pop("BOUNDED_PEAK_FD"))):
    try:
        with open("/proc/self/status") as status:
            peak = next((line.split()[1] for line in status if line.startswith("VmHWM:")), "")
        os.write(fd, peak.encode())
    except OSError:
        pass

atexit.register(_report_peak)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def _limits() -> None:
    memory = MEMORY_LIMIT_MIB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_SECONDS, CPU_LIMIT_SECONDS))


def run_bounded(arguments: list[str], stdin: bytes = b"", cwd: Path = PROJECT_DIR) -> BoundedRun:
    """`python <arguments>` under the limits; its exit status, output and the resources it used
    (its own: `os.wait4` reports the child's usage alone)."""
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, *arguments]
    peak_read, peak_write = os.pipe()
    if arguments[:1] == ["-m"] and Path("/proc/self/status").exists():
        command = [sys.executable, "-c", _PEAK_REPORTER, *arguments[1:]]
        environment["BOUNDED_PEAK_FD"] = str(peak_write)
    started = time.monotonic()
    child = subprocess.Popen(
        command,
        pass_fds=(peak_write,),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limits,
        env=environment,
    )
    streams: dict[str, bytes] = {}

    def drain(name: str, stream: IO[bytes]) -> None:
        streams[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("out", child.stdout)),
        threading.Thread(target=drain, args=("err", child.stderr)),
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(WALL_LIMIT_SECONDS, child.kill)
    killer.start()
    try:
        assert child.stdin is not None
        try:
            child.stdin.write(stdin)
            child.stdin.close()
        except BrokenPipeError:
            pass  # the child refused its input before reading all of it
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        killer.cancel()
        os.close(peak_write)
    with os.fdopen(peak_read, "rb") as reported:
        peak_kib = reported.read().decode() or None
    child.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    wall = time.monotonic() - started
    if wall >= WALL_LIMIT_SECONDS:
        raise AssertionError(f"{arguments} ran past {WALL_LIMIT_SECONDS} s and was killed")
    return BoundedRun(
        child.returncode,
        streams["out"].decode("utf-8", "replace"),
        streams["err"].decode("utf-8", "replace"),
        usage.ru_utime + usage.ru_stime,
        # A child killed before it could report: the kernel's figure, an upper bound.
        int(peak_kib) / 1024 if peak_kib else usage.ru_maxrss / 1024,
        wall,
    )
