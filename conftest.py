"""Puts the repository root on sys.path so tests import `sizing` and `scripts`; in CI, property
tests draw the same examples on every run; a run that changes the project's files (`build/`,
files git sees) fails (tests/workspace_guard.py)."""

import os

from hypothesis import settings

pytest_plugins = ["tests.workspace_guard"]

# In CI (`CI` set, as `.ci/run` and hosted runners do) every property test draws a fixed sequence
# of examples, so a red build is the code's doing, never a new draw's; elsewhere each run explores
# new examples, and a failure prints the example to pin with @example.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
