"""A stack's way down planned (`python -m sizing plan --stack NAME --way-down`): its HPA's
scale-down and its NodePool's disruption settings, read from the stack file."""

from dataclasses import replace

import pytest

from sizing.karpenter.simulation.disruption import EMPTINESS, WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED
from sizing.planning.planner import plan_capacity
from stackconfig.errors import StackConfigError
from stackplan.way_down import duration_seconds, plan_input_with_way_down

TOKYO = (
    "config:\n  aws:region: ap-northeast-1\n  eks-autoscaling:capacity:\n    priceOverrides:\n      m5.large: 0.124\n"
)


def _stack(tmp_path, extra=""):
    (tmp_path / "Pulumi.demo.yaml").write_text(TOKYO + extra)
    return plan_input_with_way_down("demo", tmp_path)


def test_the_demo_empties_nodes_thirty_seconds_after_the_scale_in(tmp_path):
    """The reference setup: load stops, the HPA scales in (30 % a minute after a 60 s window), and
    Karpenter deletes the emptied nodes 30 s later (WhenEmpty, consolidateAfter 30s)."""
    plan_input = _stack(tmp_path, "  eks-autoscaling:app:\n    hpa:\n      maxReplicas: 60\n")
    settings = plan_input.way_down
    (policy,) = settings.policies.values()
    assert (policy.consolidation_policy, policy.consolidate_after_seconds) == (WHEN_EMPTY, 30)
    plan = plan_capacity(replace(plan_input, solver_work_limit=None))
    way = plan.way_down.planned
    assert way.start_nodes > 1 and len(way.result.nodes) == 1
    assert {step.method for step in way.result.steps} == {EMPTINESS}
    # Every node goes at a poll at least 30 s after its last pod left, plus the 15 s validation.
    first_scale_in = way.result.pod_steps[0].time
    assert first_scale_in == 60
    for step in way.result.steps:
        assert step.time >= first_scale_in + 30 + 15
    assert way.cost < way.start_cost and not way.changes


def test_the_spot_preset_keeps_its_spot_node_without_the_spot_to_spot_gate(tmp_path):
    """The spot preset with WhenEmptyOrUnderutilized: at minReplicas the spot node is far too large,
    but Karpenter replaces spot with spot only under the SpotToSpotConsolidation gate, which the
    chart leaves off; the report says so."""
    extra = (
        "  eks-autoscaling:app:\n    hpa:\n      maxReplicas: 120\n"
        "  eks-autoscaling:nodePool:\n    preset: spot\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
        "    consolidateAfter: 1m\n"
    )
    plan_input = _stack(tmp_path, extra)
    (policy,) = plan_input.way_down.policies.values()
    assert (policy.consolidation_policy, policy.consolidate_after_seconds) == (WHEN_EMPTY_OR_UNDERUTILIZED, 60)
    plan = plan_capacity(replace(plan_input, solver_work_limit=None))
    way = plan.way_down.planned
    assert [node.capacity_type for node in way.result.nodes] == ["spot"]
    assert all("SpotToSpotConsolidation" in why for why in way.result.stays.values())
    gated = replace(plan_input, way_down=replace(plan_input.way_down, spot_to_spot=True), solver_work_limit=None)
    freed = plan_capacity(gated).way_down.planned
    assert freed.result.steps[-1].replacement is not None and freed.cost < way.cost
    assert not freed.changes


def test_durations_and_a_balanced_policy(tmp_path):
    assert duration_seconds("1h30m") == 5400 and duration_seconds("45s") == 45
    with pytest.raises(StackConfigError, match="Balanced is not modelled"):
        _stack(tmp_path, "  eks-autoscaling:nodePool:\n    consolidationPolicy: Balanced\n")
