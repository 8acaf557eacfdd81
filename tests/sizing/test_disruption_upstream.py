"""Disruption cases taken from Karpenter's own tests (kubernetes-sigs/karpenter v1.14.1), one per upstream `It`.

Each docstring names the upstream file (under `pkg/controllers/disruption/`) and the `It("...")` it
follows. Upstream runs against a fake cloud provider; here the instance types are small stand-ins of
the same shape, and what is asserted is what the upstream test asserts.
"""

from datetime import UTC, datetime

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.simulation import NodeOption, NodePoolModel, PodGroup
from sizing.karpenter.simulation.disruption import (
    EMPTINESS,
    MULTI_NODE,
    SINGLE_NODE,
    WHEN_EMPTY,
    Budget,
    DisruptionInput,
    DisruptionPolicy,
    FleetNode,
    by_savings,
    simulate_disruption,
)
from sizing.kube.resources import Resources

EMPTINESS_TEST = "kubernetes-sigs/karpenter pkg/controllers/disruption/emptiness_test.go"
CONSOLIDATION_TEST = "kubernetes-sigs/karpenter pkg/controllers/disruption/consolidation_test.go"


def _option(name, cpu, memory_gib, price, spot_price=None):
    size = Resources(cpu * 1000, memory_gib * 1024, 110)
    return NodeOption(name, size, size, price=price, spot_price=spot_price)


SMALL = _option("small", 2, 4, 0.10)
LARGE = _option("large", 4, 8, 0.20)
HUGE = _option("huge", 16, 32, 0.80)
POD = PodGroup("app", Resources(500, 512, 1), 0)


def _pool(*options, name="default", capacity_types=("on-demand",), limits=None):
    return NodePoolModel(name, tuple(options), dict(limits or {}), capacity_types=capacity_types)


def _node(name, option, pods=0, capacity_type="on-demand", pool="default", workload="app"):
    price = option.price_for(capacity_type)
    return FleetNode(name, option, pool, price, {workload: pods} if pods else {}, capacity_type)


def _way(nodes, pool, policy=None, groups=None, **kwargs):
    policy = policy or DisruptionPolicy()
    given = DisruptionInput(
        nodes=tuple(nodes),
        groups=groups or {"app": POD},
        pools=(pool,),
        policies={pool.name: policy},
        **kwargs,
    )
    return simulate_disruption(given)


# -- emptiness ----------------------------------------------------------------------------------


def test_empty_nodes_are_deleted():
    """emptiness_test.go: It("can delete empty nodes")."""
    result = _way([_node("node-1", LARGE)], _pool(LARGE), DisruptionPolicy(WHEN_EMPTY, 0))
    assert [step.method for step in result.steps] == [EMPTINESS]
    assert result.steps[0].removed == ("node-1",) and not result.nodes


def test_multiple_empty_nodes_go_in_one_command():
    """emptiness_test.go: It("can delete multiple empty nodes")."""
    policy = DisruptionPolicy(WHEN_EMPTY, 0, (Budget("100%"),))
    result = _way([_node("node-1", LARGE), _node("node-2", LARGE)], _pool(LARGE), policy)
    assert len(result.steps) == 1 and result.steps[0].removed == ("node-1", "node-2")


def test_empty_nodes_wait_for_consolidate_after():
    """emptiness_test.go: It("should wait for the node TTL for empty nodes before consolidating")."""
    node = FleetNode("node-1", LARGE, "default", 0.2, {}, last_pod_event=0)
    result = _way([node], _pool(LARGE), DisruptionPolicy(WHEN_EMPTY, 30))
    # The command is computed at the first 10 s poll at or after 30 s and validated 15 s later.
    assert result.steps[0].time == 30 + 15


def test_when_empty_leaves_a_node_with_pods():
    """consolidation_test.go: It("should fire an event for ConsolidationDisabled when the NodePool has
    consolidation set to WhenEmpty"): a non-empty node of a WhenEmpty pool is not consolidated."""
    nodes = [_node("node-1", LARGE, 1), _node("node-2", LARGE, 1)]
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(WHEN_EMPTY, 0))
    assert not result.steps and len(result.nodes) == 2
    assert "WhenEmpty" in result.stays["node-1"]


def test_empty_budget_of_three():
    """emptiness_test.go: It("should only allow 3 empty nodes to be disrupted")."""
    nodes = [_node(f"node-{i}", LARGE) for i in range(10)]
    policy = DisruptionPolicy(WHEN_EMPTY, 0, (Budget("3"),))
    result = _way(nodes, _pool(LARGE), policy)
    assert len(result.steps[0].removed) == 3


def test_empty_budget_of_zero():
    """emptiness_test.go: It("should allow no empty nodes to be disrupted")."""
    nodes = [_node(f"node-{i}", LARGE) for i in range(10)]
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(WHEN_EMPTY, 0, (Budget("0%"),)))
    assert not result.steps and len(result.nodes) == 10
    assert "budget" in result.stays["node-0"]


def test_budget_for_another_reason_does_not_bound_emptiness():
    """consolidation_test.go (Budgets): It("should allow all empty nodes to be disrupted"), with the
    blocking budget naming only the Underutilized reason, as upstream's reason-scoped budgets."""
    nodes = [_node(f"node-{i}", LARGE) for i in range(4)]
    budgets = (Budget("100%"), Budget("0", reasons=("Underutilized",)))
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(WHEN_EMPTY, 0, budgets))
    assert len(result.steps[0].removed) == 4


def test_scheduled_budget_blocks_inside_its_window_only():
    """The budget schedule of pkg/apis/v1/nodepool.go `Budget.IsActive`, as pkg/apis/v1/nodepool_budgets_test.go:
    It("should return that a schedule is active"): a zero budget active from 12:00 UTC for an hour
    keeps the empty node until 13:00."""
    start = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    policy = DisruptionPolicy(
        WHEN_EMPTY, 0, (Budget("100%"), Budget("0", schedule="0 12 * * *", duration_seconds=3600))
    )
    result = _way([_node("node-1", LARGE)], _pool(LARGE), policy, start=start)
    assert result.steps[0].time == 3600 + 15


def test_candidates_go_by_savings_ratio():
    """balanced_scoring_test.go: It("should sort non-Balanced candidates by savings ratio descending"):
    the same price, reschedule costs 10, 1 (no pods) and 5: B, then C, then A."""
    a = _node("node-a", LARGE, 9)
    b = _node("node-b", LARGE)
    c = _node("node-c", LARGE, 4)
    assert [node.name for node in by_savings([a, b, c])] == ["node-b", "node-c", "node-a"]


# -- consolidation: delete ----------------------------------------------------------------------


def test_consolidation_deletes_a_node_whose_pods_fit_elsewhere():
    """consolidation_test.go: It("can delete nodes"): two pods on one node, one on the other; the
    node with one pod goes and its pod joins the other."""
    nodes = [_node("node-0", LARGE, 2), _node("node-1", LARGE, 1)]
    result = _way(nodes, _pool(LARGE))
    assert result.steps[0].removed == ("node-1",) and result.steps[0].replacement is None
    assert [node.name for node in result.nodes] == ["node-0"] and result.nodes[0].pods == {"app": 3}


def test_consolidation_never_leaves_a_pod_pending():
    """consolidation_test.go: It("won't delete nodes if it would make a non-pending pod go pending")."""
    full = PodGroup("app", Resources(3500, 512, 1), 0)
    nodes = [_node("node-0", LARGE, 1), _node("node-1", LARGE, 1)]
    result = _way(nodes, _pool(LARGE), groups={"app": full})
    assert not result.steps and len(result.nodes) == 2


def test_do_not_disrupt_pod_keeps_its_node():
    """consolidation_test.go: It("can delete nodes, considers karpenter.sh/do-not-disrupt set to true on pods"):
    of the nodes that could go, the one running a do-not-disrupt pod stays."""
    groups = {"app": POD, "pinned": PodGroup("pinned", Resources(500, 512, 1), 0)}
    nodes = [_node("node-0", LARGE, 2), _node("node-1", LARGE, 1, workload="pinned"), _node("node-2", LARGE, 1)]
    result = _way(
        nodes,
        _pool(LARGE),
        DisruptionPolicy(budgets=(Budget("100%"),)),
        groups=groups,
        blocking={"pinned": "karpenter.sh/do-not-disrupt"},
    )
    assert "node-1" in {node.name for node in result.nodes}
    assert "do-not-disrupt" in result.stays["node-1"]
    assert all("node-1" not in step.removed for step in result.steps)


def test_blocking_pdb_keeps_its_node():
    """consolidation_test.go: It("can delete nodes, considers PDB"): a PodDisruptionBudget that allows
    no disruption keeps the node of its pods; the other node goes."""
    groups = {"app": POD, "guarded": PodGroup("guarded", Resources(500, 512, 1), 0)}
    nodes = [_node("node-0", LARGE, 1, workload="guarded"), _node("node-1", LARGE, 1), _node("node-2", LARGE, 1)]
    result = _way(nodes, _pool(LARGE), groups=groups, blocking={"guarded": "PodDisruptionBudget allows 0"})
    assert {node.name for node in result.nodes} == {"node-0"}
    assert "PodDisruptionBudget" in result.stays["node-0"]


def test_multi_node_budget_of_three():
    """consolidation_test.go (Budgets): It("should only allow 3 nodes to be deleted in multi node
    consolidation delete"): ten nodes with one small pod each, a budget of 3: the first command takes 3."""
    nodes = [_node(f"node-{i}", LARGE, 1) for i in range(10)]
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(budgets=(Budget("3"),)))
    assert result.steps[0].method == MULTI_NODE and len(result.steps[0].removed) == 3


def test_consolidate_after_holds_non_empty_nodes():
    """consolidation_test.go: It("should wait for the node TTL for non-empty nodes before consolidating")."""
    nodes = [_node("node-0", LARGE, 2), FleetNode("node-1", LARGE, "default", 0.2, {"app": 1}, last_pod_event=0)]
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(consolidate_after_seconds=60))
    assert result.steps[0].time >= 60


def test_pods_do_not_move_onto_a_node_under_consolidate_after():
    """consolidation_test.go: It("should not consolidate pods onto a destination node that is under
    its consolidateAfter window"): node-0 saw a pod arrive at 50 s, so node-1's pod may not move
    there until 110 s, although node-1 is consolidatable from 60 s."""
    nodes = [
        FleetNode("node-0", LARGE, "default", 0.2, {"app": 2}, last_pod_event=50),
        FleetNode("node-1", LARGE, "default", 0.2, {"app": 1}, last_pod_event=0),
    ]
    result = _way(nodes, _pool(LARGE), DisruptionPolicy(consolidate_after_seconds=60))
    assert result.steps[0].time >= 110


def test_pods_move_onto_a_node_whose_pool_never_consolidates():
    """consolidation_test.go: It("should consolidate pods onto a destination node with consolidateAfter
    set to Never")."""
    kept = _pool(LARGE, name="kept")
    given = DisruptionInput(
        nodes=(_node("node-0", LARGE, 1, pool="kept"), _node("node-1", LARGE, 1)),
        groups={"app": POD},
        pools=(_pool(LARGE), kept),
        policies={"default": DisruptionPolicy(), "kept": DisruptionPolicy(consolidate_after_seconds=None)},
    )
    result = simulate_disruption(given)
    assert [node.name for node in result.nodes] == ["node-0"] and result.nodes[0].pods == {"app": 2}
    assert "Never" in result.stays["node-0"]


# -- consolidation: replace ---------------------------------------------------------------------


def test_single_node_replaced_by_a_cheaper_one():
    """consolidation_test.go: It("should replace a node with a cheaper one even when consolidateAfter has
    not expired"): a node far larger than its pods is replaced by the cheapest type that holds them."""
    result = _way([_node("node-0", HUGE, 2)], _pool(SMALL, LARGE, HUGE))
    step = result.steps[0]
    assert step.method == SINGLE_NODE and step.replacement is not None
    assert step.replacement.instance_type == "small" and result.cost == pytest.approx(0.10)


def test_no_replacement_that_costs_more():
    """consolidation_test.go: It("won't replace on-demand node if on-demand replacement is more expensive")."""
    result = _way([_node("node-0", SMALL, 2)], _pool(SMALL, LARGE, HUGE))
    assert not result.steps and "no cheaper instance type" in result.stays["node-0"]


def test_multi_node_merges_three_nodes_into_one():
    """consolidation_test.go: It("can merge 3 nodes into 1 if the candidates have both spot and
    on-demand"): three nodes each with one pod, one of them spot, merge onto one cheaper node."""
    pod = PodGroup("app", Resources(1500, 2048, 1), 0)
    nodes = [_node("node-0", LARGE, 1), _node("node-1", LARGE, 1, "spot"), _node("node-2", LARGE, 1)]
    result = _way(
        nodes,
        _pool(SMALL, LARGE, HUGE, _option("medium", 6, 12, 0.3), capacity_types=("spot", "on-demand")),
        DisruptionPolicy(budgets=(Budget("100%"),)),
        groups={"app": pod},
    )
    step = result.steps[0]
    assert step.method == MULTI_NODE and len(step.removed) == 3
    assert step.replacement is not None and step.replacement.price < 0.6


def _spot_types(count, base=1.0):
    # Types that all hold the pod, spot prices descending from `base`.
    return [_option(f"t{i:02d}", 4, 8, base, spot_price=base * (1 - i / 100)) for i in range(count)]


def test_spot_to_spot_off_keeps_the_spot_node():
    """consolidation_test.go: It("cannot replace spot with spot if the spotToSpotConsolidation is disabled")."""
    types = _spot_types(20)
    node = _node("node-0", types[0], 1, "spot")
    result = _way([node], _pool(*types, capacity_types=("spot",)), spot_to_spot=False)
    assert not result.steps and "SpotToSpotConsolidation" in result.stays["node-0"]


def test_spot_to_spot_needs_fifteen_cheaper_types():
    """consolidation_test.go: It("cannot replace spot with spot if less than minimum InstanceTypes flexibility")."""
    types = _spot_types(10)
    node = _node("node-0", types[0], 1, "spot")
    result = _way([node], _pool(*types, capacity_types=("spot",)), spot_to_spot=True)
    assert not result.steps and "15 cheaper" in result.stays["node-0"]


def test_spot_to_spot_with_enough_cheaper_types():
    """consolidation_test.go: It("spot to spot consolidation should order the instance types by price
    before enforcing minimum flexibility."): with the gate on and more than 15 cheaper types, the
    spot node is replaced by a cheaper spot node."""
    types = _spot_types(20)
    node = _node("node-0", types[0], 1, "spot")
    result = _way([node], _pool(*types, capacity_types=("spot",)), spot_to_spot=True)
    step = result.steps[0]
    assert step.replacement is not None and step.replacement.capacity_type == "spot"
    assert step.replacement.price < node.price


def test_replacement_counts_against_limits():
    """A replacement launches while the node it replaces still runs, and Karpenter's scheduler counts
    the candidates' capacity in the NodePool's usage (pkg/controllers/provisioning/scheduling/scheduler.go,
    `calculateExistingNodeClaims` / `updateRemainingResources`): with limits at the fleet's usage the
    dearer node stays, and the limit is named."""
    pool = _pool(SMALL, LARGE, HUGE, limits={"cpu": 16000})
    result = _way([_node("node-0", HUGE, 2)], pool)
    assert not result.steps and "limit" in result.stays["node-0"]
    assert result.blocked_by_limits == (("node-0",),)
    roomy = _way([_node("node-0", HUGE, 2)], _pool(SMALL, LARGE, HUGE, limits={"cpu": 18000}))
    assert roomy.steps and roomy.steps[0].replacement is not None
    unlimited = _way([_node("node-0", HUGE, 2)], _pool(SMALL, LARGE, HUGE))
    # Limits that filter no type of the replacement: the running node plus the largest type (huge).
    assert unlimited.limit_demand["cpu"] == 16000 + 16000


# -- input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"nodes": "ten"}, "budget nodes"),
        ({"nodes": "101%"}, "budget nodes"),
        ({"reasons": ("Idle",)}, "reasons"),
        ({"schedule": "0 12 * * *"}, "together"),
        ({"schedule": "not cron", "duration_seconds": 60}, "cron"),
    ],
)
def test_bad_budgets_are_refused(kwargs, message):
    with pytest.raises(SizingInputError, match=message):
        Budget(**kwargs)


def test_bad_policy_is_refused():
    with pytest.raises(SizingInputError, match="consolidationPolicy"):
        DisruptionPolicy("Sometimes")
    with pytest.raises(SizingInputError, match="consolidateAfter"):
        DisruptionPolicy(consolidate_after_seconds=-1)
