"""Type tables shared by simulations of the same NodePools: the same fleets as tables built afresh."""

from dataclasses import replace

from sizing.karpenter.simulation import NodeOption, NodePoolModel, PodGroup, Scenario, TypeTables, simulate
from sizing.kube.resources import Resources


def _option(name, cpu, memory, price):
    room = Resources(cpu, memory, 110)
    return NodeOption(name, room, room, price)


OPTIONS = (
    _option("a.large", 2000, 8192, 0.1),
    _option("a.xlarge", 4000, 16384, 0.2),
    _option("b.large", 2000, 4096, 0.08),
)
POOL = NodePoolModel("general", OPTIONS, zones=frozenset({"z1", "z2"}))


def test_pools_that_differ_only_in_limits_share_one_table_built_without_limits():
    tables = TypeTables()
    first = tables.for_pools((replace(POOL, limits={"cpu": 4000}),))
    again = tables.for_pools((replace(POOL, limits={"cpu": 64_000, "memory": 1 << 20}),))
    assert again is first
    assert all(not pool.limits for pool in first.pools)


def test_other_types_get_a_table_of_their_own():
    tables = TypeTables()
    wide = tables.for_pools((POOL,))
    narrow = tables.for_pools((replace(POOL, node_options=OPTIONS[:1]),))
    assert narrow is not wide and narrow.names == ["a.large"] and wide.names == [o.name for o in OPTIONS]
    assert tables.for_pools((POOL,)) is wide


def test_only_the_last_few_tables_are_kept():
    tables = TypeTables()
    first = tables.for_pools((POOL,))
    for k in range(TypeTables.KEPT):
        tables.for_pools((replace(POOL, node_options=OPTIONS[: 1 + k % 3], weight=k),))
    assert tables.for_pools((POOL,)) is not first


def test_simulations_sharing_tables_launch_what_fresh_tables_launch():
    tables = TypeTables()
    groups = (PodGroup("web", Resources(700, 1500, 1), 9), PodGroup("db", Resources(1800, 6000, 1), 2))
    for limits in ({}, {"cpu": 6000}, {"cpu": 6000, "memory": 20_000}, {}):
        scenario = Scenario(OPTIONS, groups, node_pools=(replace(POOL, limits=limits),))
        shared, fresh = simulate(scenario, tables), simulate(scenario)
        assert shared == fresh
        assert shared.nodes  # each one launched something to compare
