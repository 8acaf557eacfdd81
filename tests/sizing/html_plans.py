"""Plans rendered by the HTML report's tests: one with a never-running workload, the dev stack
with its way down, and a way down whose consolidation replaces a node under raised limits while
the NodePool's current limits block it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from sizing.cli import main
from sizing.planning.report import plan_data
from tests.sizing.test_way_down import _one_big_node

PROJECT_DIR = Path(__file__).resolve().parents[2]
NEVER_RUNNING = textwrap.dedent(
    """\
    defaultDaemonSets: false
    solverWorkLimit: null
    nodePool:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}
    workloads:
      - {name: api, requests: {cpu: 500m, memory: 1Gi}, maxReplicas: 4}
      - {name: batch, requests: {cpu: 200m, memory: 256Mi}, maxReplicas: 3, maxSurge: 0, nodeSelector: {team: a}}
    """
)


def _cli_json(capsys: Any, args: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["plan", *args, "--json", "--workers", "1"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def never_running(capsys: Any, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "never-running.yaml"
    path.write_text(NEVER_RUNNING)
    return _cli_json(capsys, [str(path)])


def dev_way_down(capsys: Any) -> dict[str, Any]:
    return _cli_json(capsys, ["--stack", "dev", "--project-dir", str(PROJECT_DIR), "--way-down"])


def replacement() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(plan_data(_one_big_node(limits={"cpu": "32", "memory": "256Gi"}))))
    return data
