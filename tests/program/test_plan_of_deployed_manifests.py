"""The stack and `python -m sizing plan` cannot disagree: the manifests a stack deploys, written out
as `python -m offline plan` writes them and planned by the command line, give the fleet and the
NodePool limits the stack outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from offline.plan import write_manifests
from offline.program import DELETE, PROJECT_DIR
from tests.harness import run_program


def _deployed_manifests(recording, directory: Path) -> list[Path]:
    """The Kubernetes objects of the recording as files, the NodePool without the limits the plan
    computed: what a user planning the deployed objects would start from."""
    files = [path for path in write_manifests(recording, directory) if path.parent == directory]
    (pool_file,) = [path for path in files if yaml.safe_load(path.read_text())["kind"] == "NodePool"]
    pool = yaml.safe_load(pool_file.read_text())
    del pool["spec"]["limits"]
    pool_file.write_text(yaml.safe_dump(pool))
    return files


def _command_line_plan(files: list[Path], region: str, zones: list[str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "sizing", "plan", *map(str, files), "--json", "--region", region, "--zones", *zones],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _fleet(nodes: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node["instanceType"]] = counts.get(node["instanceType"], 0) + 1
    return dict(sorted(counts.items()))


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({}, id="dev"),
        # A wide spot NodePool in a region with bundled prices, without the dev stack's price
        # override (which has no command-line flag): the plan chooses among many types.
        pytest.param(
            {
                "aws:region": "us-east-1",
                "capacity": DELETE,
                "nodePool": {"preset": "spot"},
                "app": {"hpa": {"maxReplicas": 30}, "cpuRequest": "250m", "cpuLimit": "500m"},
            },
            id="spot-preset",
        ),
    ],
)
def test_the_command_line_plans_the_deployed_manifests_as_the_stack_does(overrides, tmp_path):
    recording = run_program("dev", overrides)
    stack_plan, stack_limits = recording.outputs["capacityPlan"], recording.outputs["nodePoolLimits"]
    region = recording.one("pulumi:providers:aws").input("region")
    zones = recording.one("awsx:ec2:Vpc").input("availabilityZoneNames")
    files = _deployed_manifests(recording, tmp_path)
    assert {yaml.safe_load(path.read_text())["kind"] for path in files} >= {
        "Deployment",
        "HorizontalPodAutoscaler",
        "NodePool",
        "EC2NodeClass",
    }

    cli_plan = _command_line_plan(files, region, zones)

    assert cli_plan["pods"] == stack_plan["pods"]
    assert cli_plan["fleet"]["nodeCount"] == stack_plan["fleet"]["nodes"]
    assert _fleet(cli_plan["fleet"]["nodes"]) == stack_plan["fleet"]["instanceTypes"]
    assert cli_plan["fleet"]["podsPending"] == stack_plan["fleet"]["podsPending"] == 0
    assert cli_plan["limits"]["spec"] == stack_plan["limits"] == stack_limits
