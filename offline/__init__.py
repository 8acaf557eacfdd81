"""The program evaluated offline: `__main__.py` runs against Pulumi mocks that answer like AWS
would and record every resource, its inputs and its dependency edges.

This is what `make plan` writes out for review and what the test suite asserts on; it needs
neither AWS credentials nor the Pulumi CLI. Values only a deployment would know are shown as
`<unknown>`; the identifiers it makes up (ids, ARNs, subnet ids) are placeholders.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from offline.program import ProgramFailed, run_program
    from offline.recording import Recording, Registered

__all__ = ["ProgramFailed", "Recording", "Registered", "run_program"]
# Imported when first used, not with the package: `python -m offline` installs its handling of
# Ctrl-C (sizing.interrupts) before Pulumi's modules load.
_HOMES = {"ProgramFailed": "offline.program", "run_program": "offline.program"} | {
    "Recording": "offline.recording",
    "Registered": "offline.recording",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'offline' has no attribute {name!r}")
