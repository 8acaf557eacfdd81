"""The one error type of bad stack configuration."""

from __future__ import annotations

from collections.abc import Iterable

from sizing.errors import bounded_message


class StackConfigError(ValueError):
    """Bad stack configuration: names the key, the bad value and what is allowed.

    Raised before any resource is registered. Each problem is bounded (`bounded_message`):
    a huge value given is quoted cut, never whole.
    """

    def __init__(self, problems: Iterable[str]):
        self.problems = tuple(bounded_message(str(problem)) for problem in problems)
        if len(self.problems) == 1:
            message = f"invalid stack configuration: {self.problems[0]}"
        else:
            lines = "\n".join(f"  - {problem}" for problem in self.problems)
            message = f"invalid stack configuration ({len(self.problems)} problems):\n{lines}"
        super().__init__(message)
