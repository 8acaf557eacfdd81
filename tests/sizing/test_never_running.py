"""Workloads whose pods can never run are left out of the plan and listed first, as Karpenter
leaves such pods pending and provisions for the rest (kubernetes-sigs/karpenter
pkg/controllers/provisioning/scheduling: a pod no NodePool admits stays unschedulable, the
others are scheduled).

The plan of an input with such a workload is the plan of the input without it: the same
limits, the same fleet. `python -m sizing plan --fail-on-pending` exits with its own status
when a pod never runs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sizing import cli
from sizing.commands.plan import PENDING_EXIT_CODE
from sizing.errors import SizingInputError
from sizing.kube.hpa_scale_up import HpaScaleUp
from sizing.kube.scheduling import HostPort, PodScheduling, Taint, Toleration
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import plan_data, render_report

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)
GPU_TAINT = Taint("nvidia.com/gpu", "NoSchedule", "true")
EXPORTER = DaemonSet("node-exporter", 10, 32, scheduling=PodScheduling(host_ports=(HostPort(9100),)))


def _web(replicas=5, **scheduling):
    return Workload("web", 500, 1024, replicas=replicas, max_surge=1, scheduling=PodScheduling(**scheduling))


def _plan(workloads, pool=NodePoolSpec(requirements=M5), **kwargs):
    kwargs.setdefault("solver_work_limit", None)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=pool, **kwargs))


CASES = {
    "taint not tolerated": (
        Workload("trainer", 1000, 2048, replicas=3, max_surge=0),
        {"pool": NodePoolSpec(requirements=M5, taints=(GPU_TAINT,))},
        "workload 'trainer': no NodePool and no running node can take its pods",
    ),
    "host port bound by a DaemonSet everywhere": (
        Workload("agent", 100, 128, replicas=2, max_surge=0, scheduling=PodScheduling(host_ports=(HostPort(9100),))),
        {"daemon_sets": DEFAULT_DAEMON_SETS + (EXPORTER,)},
        "workload 'agent': host port 9100/TCP is bound by DaemonSet node-exporter on every node the pods may use, "
        "so they can never run",
    ),
    "node selector nothing satisfies": (
        Workload("batch", 200, 256, replicas=4, max_surge=1, node_selector={"example.com/team": "batch"}),
        {},
        "workload 'batch': nodeSelector requires custom label example.com/team=batch, which no NodePool gives its "
        "nodes and no running node carries",
    ),
    "pods larger than any allowed type": (
        Workload("huge", 64_000, 1024, replicas=1, max_surge=0),
        {},
        "workload 'huge' requests 64000m cpu; the largest allowed instance type (m5.xlarge)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_never_running_workload_is_listed_and_the_rest_planned_as_without_it(case):
    never, settings, reason = CASES[case]
    settings = dict(settings)
    pool = settings.pop("pool", NodePoolSpec(requirements=M5))
    # The web tolerates the taint of the tainted case; the trainer does not.
    web = _web(tolerations=(Toleration("nvidia.com/gpu", "Equal", "true", "NoSchedule"),))
    plan = _plan([web, never], pool=pool, **settings)
    alone = _plan([web], pool=pool, **settings)
    (item,) = plan.never_running
    assert (item.workload, item.pods) == (never.name, never.peak_pods)
    assert item.reason.startswith(reason)
    # The plan is that of the input without the workload: the same limits and fleet.
    assert plan.node_pool_limits == alone.node_pool_limits
    assert [(n.instance_type, dict(n.pods)) for n in plan.fleet.nodes] == [
        (n.instance_type, dict(n.pods)) for n in alone.fleet.nodes
    ]
    assert [w.name for w in plan.input.workloads] == ["web"]
    data = plan_data(plan)
    assert next(iter(data)) == "neverRunning"
    assert data["neverRunning"] == [{"workload": never.name, "pods": never.peak_pods, "reason": item.reason}]
    assert [w["name"] for w in data["workloads"]] == ["web"]
    text = render_report(plan)
    first, listed = text.splitlines()[:2]
    pods = f"{never.peak_pods} pod{'s' if never.peak_pods != 1 else ''}"
    assert first.startswith(f"Never running: 1 workload, {pods} that no node may take")
    assert listed == f"  {never.name}: {pods} ({item.reason})"
    assert plan.pods_never_running == never.peak_pods


def test_a_plan_without_never_running_workloads_lists_none():
    plan = _plan([_web()])
    assert plan.never_running == () and plan.pods_never_running == 0
    assert plan_data(plan)["neverRunning"] == []
    assert not render_report(plan).startswith("Never running")


def test_the_hpa_scale_up_of_a_never_running_workload_is_left_out_with_it():
    never, _, _ = CASES["node selector nothing satisfies"]
    plan = _plan([_web(), never], hpa_scale_up={"batch": HpaScaleUp(min_replicas=1)})
    assert [item.workload for item in plan.never_running] == ["batch"]


def test_an_input_whose_every_workload_never_runs_is_refused_with_each_reason():
    batch, _, batch_reason = CASES["node selector nothing satisfies"]
    huge, _, huge_reason = CASES["pods larger than any allowed type"]
    with pytest.raises(SizingInputError) as refused:
        _plan([batch, huge])
    message = str(refused.value)
    assert message.startswith("none of the 2 workloads can ever run, so nothing is left to plan: ")
    assert batch_reason in message and huge_reason in message
    # One workload alone: the reason is the whole message, as before.
    with pytest.raises(SizingInputError) as alone:
        _plan([huge])
    assert str(alone.value).startswith(huge_reason)


DESCRIPTION = """\
    defaultDaemonSets: false
    solverWorkLimit: null
    nodePool:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}
    workloads:
      - {name: api, requests: {cpu: 500m, memory: 1Gi}, maxReplicas: 4}
"""
NEVER = (
    "  - {name: batch, requests: {cpu: 200m, memory: 256Mi}, maxReplicas: 3, maxSurge: 0, nodeSelector: {team: a}}\n"
)


def _run(capsys, tmp_path, text, *flags):
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(DESCRIPTION) + text)
    status = cli.main(["plan", str(path), "--workers", "1", *flags])
    out, err = capsys.readouterr()
    return status, out, err


def test_fail_on_pending_exits_with_its_own_status_after_the_report(tmp_path, capsys):
    status, out, err = _run(capsys, tmp_path, NEVER, "--fail-on-pending")
    assert PENDING_EXIT_CODE == 3 and status == PENDING_EXIT_CODE
    assert out.startswith("Never running: 1 workload, 3 pods that no node may take")
    assert "limits:" in out
    assert "3 pods never run (--fail-on-pending): exit status 3" in err
    status, out, _ = _run(capsys, tmp_path, NEVER, "--fail-on-pending", "--json")
    assert status == PENDING_EXIT_CODE
    assert json.loads(out)["neverRunning"][0]["workload"] == "batch"


def test_without_the_flag_or_without_pending_pods_the_plan_exits_0(tmp_path, capsys):
    status, out, err = _run(capsys, tmp_path, NEVER)
    assert (status, err) == (0, "") and out.startswith("Never running")
    status, out, err = _run(capsys, tmp_path, "", "--fail-on-pending")
    assert (status, err) == (0, "") and not out.startswith("Never running")


def test_fail_on_pending_counts_pods_a_scenario_leaves_pending_even_without_limits(capsys):
    # Every workload runs, but required zone anti-affinity leaves 2 of 5 pods without a zone.
    example = Path(__file__).parents[2] / "docs" / "examples" / "pods-that-never-schedule.yaml"
    status = cli.main(["plan", str(example), "--workers", "1", "--fail-on-pending", "--json"])
    out, err = capsys.readouterr()
    assert status == PENDING_EXIT_CODE and "2 pods never run" in err
    data = json.loads(out)
    assert data["neverRunning"] == [] and data["scenarios"]["peak"]["withoutLimits"]["podsPending"] == 2
    assert cli.main(["plan", str(example), "--workers", "1", "--json"]) == 0
