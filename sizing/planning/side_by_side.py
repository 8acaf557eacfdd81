"""Independent simulations run side by side on forked processes, with results that do not
depend on how many run at once.

The planner's searches stay sequential: they ask for one simulation at a time and decide
from its answer. What runs side by side are simulations they are about to ask for (the other
scenarios at the same limits, the next restrictions to rank): each is a pure function of the
plan's input, so a result computed early on another core is the result the search would have
computed itself, and a result it never asks for is dropped. The plan is byte-identical with
one worker or several.

Forking is used on Linux only (elsewhere every task runs in the calling process); a child that
fails for any reason leaves its task to the calling process, which runs it again itself (and
raises what it raises).
"""

from __future__ import annotations

import contextlib
import copyreg
import functools
import gc
import io
import multiprocessing
import os
import pickle
import signal
import struct
import sys
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from sizing.cores import available_cores
from sizing.interrupts import undo_on_stop

Result = TypeVar("Result")
Other = TypeVar("Other")

_LENGTH = struct.Struct("<Q")
# Each worker beyond the first is a forked copy of the planner: a bound on the processes one plan starts.
MAX_WORKERS = 8


def available_workers() -> int:
    """The cores this process may run on, at most 2 (more rarely pays: the searches ask for few
    simulations at a time)."""
    return available_cores(2)


def can_fork() -> bool:
    """Whether work may run in forked children here: on Linux only. On macOS, system libraries
    (numpy's Accelerate among them) are not safe in a forked child and can hang it."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def read_only(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    """A read-only view of `mapping` (the type itself cannot be named in a pickle)."""
    return MappingProxyType(mapping)


def _reduce_mapping_proxy(proxy: MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    return read_only, (dict(proxy),)


class _Pickler(pickle.Pickler):
    # The results are frozen data classes that hold read-only mappings; the reducer is this
    # pickler's own, so nothing global changes.
    dispatch_table = copyreg.dispatch_table.copy()
    dispatch_table[MappingProxyType] = _reduce_mapping_proxy


def _dumps(value: object) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _fork(task: Callable[[], object]) -> tuple[int, int]:
    """A child running `task`, and the read end of the pipe its pickled result comes through."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        status = 1
        # A collection would walk (and so copy) every object the child shares with its parent;
        # the child lives for one round of tasks.
        gc.disable()
        try:
            os.close(read_end)
            data = _dumps(task())
            _write_all(write_end, _LENGTH.pack(len(data)) + data)
            status = 0
        finally:
            # No cleanup of the parent's state (open files, atexit hooks) may run twice.
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _stop_children(pids: Sequence[int]) -> None:
    """End the forked children at once: the command that started them was stopped (SIGINT or
    SIGTERM, sizing.interrupts), and their results would have no reader."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _collect(pid: int, read_end: int) -> tuple[bool, object]:
    try:
        data = _read_all(read_end)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if status != 0 or len(data) < _LENGTH.size:
        return False, None
    (length,) = _LENGTH.unpack_from(data)
    if len(data) != _LENGTH.size + length:
        return False, None
    return True, pickle.loads(data[_LENGTH.size :])


def _take_in_turn(tasks: Sequence[Callable[[], Result]], counter: Any) -> dict[int, Result]:
    """Run tasks by the index the shared counter hands out next, until none is left."""
    done: dict[int, Result] = {}
    while True:
        with counter.get_lock():
            index = counter.value
            counter.value = index + 1
        if index >= len(tasks):
            return done
        done[index] = tasks[index]()


def run_side_by_side(tasks: Sequence[Callable[[], Result]], workers: int) -> list[Result]:
    """The results of `tasks`, in order. With several workers, forked children and this process
    take the tasks one at a time, the next one free first, so a long task does not hold up the
    short ones (put the longest first). One worker (or no fork) runs them one by one here."""
    if workers <= 1 or len(tasks) <= 1 or not can_fork():
        return [task() for task in tasks]
    _, results = _shared(tasks, min(workers, MAX_WORKERS, len(tasks)) - 1, lambda: None)
    return results


def run_around(
    foreground: Callable[[], Other], tasks: Sequence[Callable[[], Result]], workers: int
) -> tuple[Other, list[Result] | None]:
    """`foreground`'s result, and `tasks`' results in order: forked children start on the tasks
    at once, this process joins them once `foreground` is done (put the longest first). With
    one worker (or no fork), `foreground`'s alone and None: the tasks only compute early what
    a later step would compute anyway."""
    if workers <= 1 or not tasks or not can_fork():
        return foreground(), None
    return _shared(tasks, min(workers - 1, MAX_WORKERS - 1, len(tasks)), foreground)


def _shared(
    tasks: Sequence[Callable[[], Result]], children: int, first: Callable[[], Other]
) -> tuple[Other, list[Result]]:
    """`first`'s result, run here while `children` forked children start on the tasks, then the
    tasks' results in order, this process taking tasks too once `first` is done."""
    counter = multiprocessing.get_context("fork").Value("q", 0)
    forked: list[tuple[int, int]] = []
    with undo_on_stop(lambda: _stop_children([pid for pid, _ in forked])):
        for _ in range(children):
            forked.append(_fork(functools.partial(_take_in_turn, tasks, counter)))
        try:
            result = first()
            done = _take_in_turn(tasks, counter)
        finally:
            collected = [_collect(pid, read_end) for pid, read_end in forked]
    for ok, theirs in collected:
        if ok:
            done.update(theirs)  # type: ignore[call-overload]
    # A task a failed child took is run here.
    return result, [done[index] if index in done else tasks[index]() for index in range(len(tasks))]


def run_beside(
    background: Callable[[], Result], foreground: Callable[[], Other], workers: int
) -> tuple[Result, Other | None]:
    """`background`'s result, computed in a forked child while this process runs `foreground`,
    and `foreground`'s result; with one worker (or no fork), `background`'s alone and None.
    `foreground` only computes early what a later step would compute anyway."""
    if workers <= 1 or not can_fork():
        return background(), None
    forked: list[int] = []
    with undo_on_stop(lambda: _stop_children(forked)):
        pid, read_end = _fork(background)
        forked.append(pid)
        try:
            early = foreground()
        finally:
            ok, value = _collect(pid, read_end)
    return (value if ok else background()), early  # type: ignore[return-value]
