"""The program evaluated offline: `__main__.py` runs against Pulumi mocks that answer like AWS
would and record every resource, its inputs and its dependency edges.

This is what `make plan` writes out for review and what the test suite asserts on; it needs
neither AWS credentials nor the Pulumi CLI. Values only a deployment would know are shown as
`<unknown>`; the identifiers it makes up (ids, ARNs, subnet ids) are placeholders.
"""

from offline.program import ProgramFailed, run_program
from offline.recording import Recording, Registered

__all__ = ["ProgramFailed", "Recording", "Registered", "run_program"]
