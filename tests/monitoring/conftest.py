import os
import shutil

import pytest

from tests.harness import run_program

REQUIRE_PROMTOOL = "EKS_AUTOSCALING_REQUIRE_PROMTOOL"


@pytest.fixture(scope="session")
def promtool() -> str:
    """promtool from Debian's prometheus package (`make promtool`); CI requires it."""
    found = shutil.which("promtool")
    if found:
        return found
    reason = (
        "promtool is not installed: `make promtool` installs Debian's prometheus package "
        "(make install tries it; CI installs it and fails instead of skipping)"
    )
    if os.environ.get(REQUIRE_PROMTOOL):
        pytest.fail(f"{REQUIRE_PROMTOOL} is set and {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def dev():
    """The dev stack, monitoring on, as the program registers it (read-only)."""
    return run_program("dev")
