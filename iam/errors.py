"""Errors raised by the IAM document builders.

All of them are `ValueError`s, so a caller that validates configuration can
catch one type and report the message as it stands.
"""

from __future__ import annotations


class IamInputError(ValueError):
    """An argument that cannot go into an IAM document.

    The message names the argument, the value received and what is allowed.
    """

    def __init__(self, argument: str, value: object, allowed: str, *, message: str | None = None):
        self.argument = argument
        self.value = value
        self.allowed = allowed
        super().__init__(message or f"{argument}={value!r} is not allowed; expected {allowed}")


class UnsupportedVersionError(IamInputError):
    """A component version whose IAM documents the project does not carry.

    IAM policies change between releases of the controllers, so a document is
    only produced for the exact versions it was written for.
    """


class PolicySizeError(ValueError):
    """A generated policy exceeds the size IAM accepts for its kind."""

    def __init__(self, policy_name: str, size: int, limit: int, hint: str):
        self.policy_name = policy_name
        self.size = size
        self.limit = limit
        super().__init__(
            f"policy {policy_name!r} is {size} characters without whitespace, over the IAM limit of {limit}; {hint}"
        )
