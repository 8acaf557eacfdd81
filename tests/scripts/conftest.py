"""The fixtures the operating scripts' tests define (a PATH of system tools, fake CLIs, a state
folder), for the tests of the other scripts."""

from tests.scripts.test_operate_scripts import env, fakes, state_dir, tools  # noqa: F401
