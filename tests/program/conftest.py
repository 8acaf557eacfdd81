import pytest

from tests.harness import run_program


@pytest.fixture(scope="module")
def dev():
    """The dev stack as the program registers it (read-only: shared by a module's tests)."""
    return run_program("dev")
