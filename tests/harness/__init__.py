"""Run the real Pulumi program under mocks and inspect what it registered.

    recording = run_program("dev")                      # Pulumi.dev.yaml
    recording = run_program("dev", {"nodeGroup": {"maxSize": 5}})   # with overrides
    vpc = recording.one("awsx:ec2:Vpc")
    assert recording.depends_on(ingress, release)       # every edge kind, transitively
"""

from tests.harness.program import ProgramFailed, run_program
from tests.harness.recording import Recording, Registered

__all__ = ["ProgramFailed", "Recording", "Registered", "run_program"]
