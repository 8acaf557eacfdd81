"""Errors raised on bad input to the sizing library, and how they quote what they were given.

An input value is echoed in a message cut to a few dozen characters (`echo`), and every message
is bounded (`bounded_message`): a 100,000-character name or a huge nested value never makes a
message of that size.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

# Characters of a value quoted in an error message.
ECHO_LIMIT = 60
# A run of characters without a space longer than this is cut (paths and names are far shorter).
WORD_LIMIT = 240
# Characters of one message at most.
MESSAGE_LIMIT = 4000

_REPR = reprlib.Repr()
_REPR.maxstring = ECHO_LIMIT
_REPR.maxother = ECHO_LIMIT
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 6
_REPR.maxlevel = 3
_REPR.maxlong = 40
_LONG_WORD = re.compile(rf"\S{{{WORD_LIMIT},}}")


def echo(value: Any, limit: int = ECHO_LIMIT) -> str:
    """`repr(value)` as an error message quotes it: a long string is cut after `limit`
    characters with its length said, a large structure or number is abbreviated."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = _REPR.repr(value)
    return text if len(text) <= 2 * limit else text[: 2 * limit] + "…"


def bounded_message(message: str) -> str:
    """`message` with every run of characters without a space longer than `WORD_LIMIT` cut (a
    value quoted whole), and at most `MESSAGE_LIMIT` characters in all."""
    message = _LONG_WORD.sub(
        lambda match: f"{match.group(0)[:ECHO_LIMIT]}… ({len(match.group(0)):,} characters)", message
    )
    if len(message) > MESSAGE_LIMIT:
        message = f"{message[:MESSAGE_LIMIT]}… (message cut at {MESSAGE_LIMIT:,} characters)"
    return message


class SizingInputError(ValueError):
    """Input that cannot be planned or solved.

    The message names the offending field or object and what is allowed; the
    command line prints it as one line on stderr and exits non-zero. It is bounded
    (`bounded_message`), whatever values it quotes.
    """

    def __init__(self, message: object = "") -> None:
        super().__init__(bounded_message(str(message)))


class NeverRuns(SizingInputError):
    """A workload whose pods can never run: no NodePool and no running node may take them (a
    taint not tolerated, a node selector nothing satisfies, a host port a DaemonSet binds on every
    node they may use, ...). Karpenter leaves such pods pending and goes on with the rest, and so
    does the planner: it plans the other workloads and lists this one with the message as reason.
    `workload` names it."""

    def __init__(self, workload: str, message: object = "") -> None:
        super().__init__(message)
        self.workload = workload
