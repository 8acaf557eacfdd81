"""Recordings of the real stacks, evaluated once per test session and shared read-only."""

from __future__ import annotations

import dataclasses

import pytest

from offline import Recording, run_program
from offline.program import PROJECT_DIR

STACKS = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in PROJECT_DIR.glob("Pulumi.*.yaml"))
_recordings: dict[str, Recording] = {}


@pytest.fixture(scope="session")
def recording_of():
    """recording_of("dev"): the dev stack as the program registers it (evaluated at most once)."""

    def evaluate(stack: str) -> Recording:
        if stack not in _recordings:
            _recordings[stack] = run_program(stack)
        return _recordings[stack]

    return evaluate


def with_inputs(recording: Recording, type_: str, name: str, inputs: dict) -> Recording:
    """A copy of `recording` in which one resource's inputs are replaced (the original is untouched)."""
    target = recording.one(type_, name)
    copy = dataclasses.replace(
        recording,
        resources=[
            dataclasses.replace(resource, inputs=inputs) if resource is target else resource
            for resource in recording.resources
        ],
    )
    return copy
