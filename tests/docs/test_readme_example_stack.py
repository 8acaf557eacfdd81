"""The README's example stack is complete: it plans offline and passes the same gates as the stacks."""

from __future__ import annotations

import re

import pytest
import yaml

from offline.program import PROJECT_DIR, run_program
from security.gates import run_gates
from stackconfig.load import load_stack_file

README = (PROJECT_DIR / "README.md").read_text()
STACK_EXAMPLES = [
    block for block in re.findall(r"```yaml\n(.*?)```", README, flags=re.S) if block.startswith("config:")
]


def test_the_readme_shows_a_stack():
    assert STACK_EXAMPLES


@pytest.fixture
def project_with(tmp_path):
    """A project folder holding one stack file next to the program (the rest is imported as usual)."""

    def make(text: str, stack: str = "example"):
        (tmp_path / "__main__.py").symlink_to(PROJECT_DIR / "__main__.py")
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(text)
        return tmp_path

    return make


@pytest.mark.parametrize("text", STACK_EXAMPLES)
def test_the_example_stack_plans_and_passes_the_gates(project_with, text):
    project = project_with(text)
    config = load_stack_file(project / "Pulumi.example.yaml")
    assert config.region == yaml.safe_load(text)["config"]["aws:region"]
    recording = run_program("example", project_dir=project)
    assert recording.resources
    failed = {result.gate: result.findings for result in run_gates(recording) if not result.passed}
    assert failed == {}


def test_without_its_endpoint_setting_the_example_fails_the_gates(project_with):
    """The gate the example satisfies is real: the same stack with the open default endpoint fails it."""
    (text,) = STACK_EXAMPLES
    document = yaml.safe_load(text)
    del document["config"]["eks-autoscaling:cluster"]
    project = project_with(yaml.safe_dump(document))
    results = {result.gate: result for result in run_gates(run_program("example", project_dir=project))}
    assert not results["policy-pack-rules"].passed
    assert any("eks-cluster-endpoint-restricted" in finding for finding in results["policy-pack-rules"].findings)


def test_without_its_inbound_cidrs_the_example_fails_the_gates(project_with):
    """So is the test app's: with the default ALB, open to every address, the stack fails the gates."""
    (text,) = STACK_EXAMPLES
    document = yaml.safe_load(text)
    del document["config"]["eks-autoscaling:app"]
    project = project_with(yaml.safe_dump(document))
    results = {result.gate: result for result in run_gates(run_program("example", project_dir=project))}
    assert not results["policy-pack-rules"].passed
    assert any("ingress-not-open-to-internet" in finding for finding in results["policy-pack-rules"].findings)
