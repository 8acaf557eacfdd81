"""Keeping what native solver code prints away from a command's own output."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what is written on file descriptor 1 to stderr while the block runs.

    HiGHS, inside scipy, sometimes prints progress lines straight to fd 1; the commands
    whose stdout is a report or JSON run the solver inside this block.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
