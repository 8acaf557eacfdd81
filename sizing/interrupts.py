"""Stopping a command cleanly on Ctrl-C (SIGINT) and SIGTERM (what a cancelled CI job sends).

A command's entry point calls `stop_cleanly_on_signals()` before its heavy imports. From then on
either signal, at any moment (while modules import, while planning, while files are written),
runs the undo actions registered with `undo_on_stop` (newest first: remove a scratch folder, put
a previous plan back), prints one line to stderr, `interrupted` or `terminated`, and ends the
process at once with status 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.

The process ends without unwinding, on purpose: an exception raised in the middle of an import
leaves half-initialised modules that fail later with misleading errors, and code that catches
every exception (a library's, a thread's) could swallow it and finish with status 0. Output
already buffered for stdout is dropped: a command that was stopped has no result.

A process started by fork (a worker of `sizing.planning.side_by_side`) inherits the handler; it
ends silently with the same status, without the parent's undo actions or its message.

Only a command's entry point installs the handler: the library never changes a process's signal
handling when it is imported or called.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import FrameType

INTERRUPTED_STATUS = 128 + signal.SIGINT
TERMINATED_STATUS = 128 + signal.SIGTERM
MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


@dataclass
class _Handler:
    """The installed handler: the process that installed it and the undo actions, oldest first."""

    pid: int
    undo: list[Callable[[], None]] = field(default_factory=list)

    def __call__(self, number: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:
            os._exit(128 + number)
        # A second signal while undoing waits: the undo runs to its end.
        for other in MESSAGES:
            signal.signal(other, signal.SIG_IGN)
        # Undo is best effort: the message and the status follow all the same.
        for action in reversed(self.undo):
            with suppress(Exception):
                action()
        message = MESSAGES.get(signal.Signals(number), f"stopped by signal {number}")
        with suppress(OSError, ValueError):
            os.write(sys.stderr.fileno() if sys.stderr is not None else 2, f"{message}\n".encode())
        os._exit(128 + number)


def stop_cleanly_on_signals() -> None:
    """Install the handler for SIGINT and SIGTERM in this process (the command's entry point)."""
    handler = _installed()
    if handler is None or handler.pid != os.getpid():
        handler = _Handler(os.getpid())
    for number in MESSAGES:
        signal.signal(number, handler)


def _installed() -> _Handler | None:
    current = signal.getsignal(signal.SIGINT)
    return current if isinstance(current, _Handler) else None


@contextmanager
def undo_on_stop(action: Callable[[], None]) -> Iterator[None]:
    """Run `action` if the process is stopped by SIGINT or SIGTERM inside the `with` block.

    Without an installed handler (the library used from other code) this does nothing: the
    caller's own handling of KeyboardInterrupt and its `finally` blocks apply.
    """
    handler = _installed()
    if handler is None or handler.pid != os.getpid():
        yield
        return
    handler.undo.append(action)
    try:
        yield
    finally:
        # Identity, not equality: two equal actions may be registered by two blocks.
        for index in range(len(handler.undo) - 1, -1, -1):
            if handler.undo[index] is action:
                del handler.undo[index]
                break


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs (this one does): the scratch files of a run whose process
    is gone may be removed by the next run."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
