"""Run the real Pulumi program under mocks and inspect what it registered.

    recording = run_program("dev")                      # Pulumi.dev.yaml
    recording = run_program("dev", {"nodeGroup": {"maxSize": 5}})   # with overrides
    vpc = recording.one("awsx:ec2:Vpc")
    assert recording.depends_on(ingress, release)       # every edge kind, transitively

The machinery lives in the `offline` package, which `make plan` uses too.
"""

from offline import ProgramFailed, Recording, Registered, run_program

__all__ = ["ProgramFailed", "Recording", "Registered", "run_program"]
