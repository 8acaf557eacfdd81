"""The fast simulation against a literal, pod-by-pod transcription of Karpenter's rules.

The simulation hands out identical pods in bulk; the reference below places
one pod at a time exactly as karpenter.md section 7 describes. Both must give
the same fleet, the same pending pods and the same remaining limits.
"""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.karpenter.simulation import LIMIT_KEYS, NodeOption, PodGroup, RunningNode, Scenario, simulate
from sizing.kube.resources import Resources

ZONES = ("za", "zb")


def _fits(room, used):
    return all(u <= r for u, r in zip(used, room, strict=True))


def _add(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def reference_simulation(scenario):
    options = scenario.node_options
    room = [tuple((o.allocatable - o.daemon_overhead).as_dict().values()) for o in options]
    capacity = [(o.capacity.cpu, o.capacity.memory, o.capacity.pods, 1) for o in options]
    keys = ("cpu", "memory", "pods", "nodes")
    remaining = dict(scenario.limits)
    for node in scenario.running_nodes:
        if node.in_node_pool and node.capacity_reported:
            c = node.option.capacity
            for key, value in zip(keys, (c.cpu, c.memory, c.pods, 1), strict=True):
                if key in remaining:
                    remaining[key] -= value
    running = [
        {"free": tuple((n.option.allocatable - n.requested).as_dict().values()), "pods": {}}
        for n in scenario.running_nodes
    ]
    groups = scenario.pod_groups
    queue = []
    for index in sorted(range(len(groups)), key=lambda i: (-groups[i].requests.cpu, -groups[i].requests.memory, i)):
        queue.extend([index] * groups[index].count)
    claims = []
    pending = {}

    def allowed(group, name):
        return group.allowed_types is None or name in group.allowed_types

    def zones_ok(zones, group):
        return group.zones is None or zones is None or bool(zones & group.zones)

    def types_ok(kinds, group):
        return group.capacity_types is None or bool(kinds & group.capacity_types)

    for index in queue:
        group = groups[index]
        request = tuple(group.requests.as_dict().values())
        placed = False
        for node, state in zip(scenario.running_nodes, running, strict=True):
            if not allowed(group, node.option.name):
                continue
            if group.zones is not None and node.zone not in group.zones:
                continue
            if group.capacity_types is not None and node.capacity_type not in group.capacity_types:
                continue
            after = tuple(f - r for f, r in zip(state["free"], request, strict=True))
            if min(after) >= 0:
                state["free"] = after
                state["pods"][group.workload] = state["pods"].get(group.workload, 0) + 1
                placed = True
                break
        if placed:
            continue
        for claim in sorted(claims, key=lambda c: (c["count"], c["index"])):
            used = _add(claim["used"], request)
            candidates = [t for t in claim["types"] if allowed(group, options[t].name) and _fits(room[t], used)]
            if candidates and zones_ok(claim["zones"], group) and types_ok(claim["kinds"], group):
                claim.update(used=used, types=candidates, count=claim["count"] + 1)
                if group.zones is not None:
                    claim["zones"] = group.zones if claim["zones"] is None else claim["zones"] & group.zones
                if group.capacity_types is not None:
                    claim["kinds"] = claim["kinds"] & group.capacity_types
                claim["pods"][group.workload] = claim["pods"].get(group.workload, 0) + 1
                placed = True
                break
        if placed:
            continue
        pool_kinds = frozenset(scenario.capacity_types)
        candidates = [
            t
            for t in range(len(options))
            if allowed(group, options[t].name)
            and _fits(room[t], request)
            and zones_ok(scenario.zones, group)
            and types_ok(pool_kinds, group)
        ]
        candidates = [t for t in candidates if all(capacity[t][keys.index(k)] <= left for k, left in remaining.items())]
        if not candidates:
            pending[group.workload] = pending.get(group.workload, 0) + 1
            continue
        for key in remaining:
            remaining[key] -= max(capacity[t][keys.index(key)] for t in candidates)
        zones = scenario.zones
        kinds = pool_kinds
        if group.zones is not None:
            zones = group.zones if zones is None else zones & group.zones
        if group.capacity_types is not None:
            kinds = kinds & group.capacity_types
        claims.append(
            {
                "index": len(claims),
                "count": 1,
                "used": request,
                "types": candidates,
                "zones": zones,
                "kinds": kinds,
                "pods": {group.workload: 1},
            }
        )
    nodes = [(n.option.name, state["pods"]) for n, state in zip(scenario.running_nodes, running, strict=True)]
    for claim in claims:
        types = claim["types"]
        # With both capacity types allowed, spot dearer than the cheapest on-demand type is dropped.
        both = {"spot", "on-demand"} <= set(claim["kinds"])
        ceiling = min(options[t].price for t in types) if both else float("inf")
        spot = [t for t in types if options[t].price_for("spot") <= ceiling] if "spot" in claim["kinds"] else []
        kind, offered = ("spot", spot) if spot else ("on-demand", types)
        best = min(offered, key=lambda t: (options[t].price_for(kind), options[t].name))
        nodes.append((options[best].name, claim["pods"]))
    return nodes, pending, remaining


@st.composite
def scenarios(draw):
    # More than 16 types exercises the vectorised path for large candidate sets as well.
    type_count = draw(st.sampled_from([1, 2, 3, 20, 24]))
    options = []
    for i in range(type_count):
        cpu = draw(st.sampled_from([1000, 2000, 4000, 8000]))
        memory = draw(st.sampled_from([2048, 4096, 8192, 16384]))
        slots = draw(st.integers(2, 12))
        overhead = Resources(
            draw(st.sampled_from([0, 100, 300])), draw(st.sampled_from([0, 256])), draw(st.integers(0, 2))
        )
        capacity = Resources(cpu + 100, memory + 500, slots)
        options.append(
            NodeOption(
                f"type-{i}",
                capacity,
                Resources(cpu, memory, slots),
                draw(st.sampled_from([0.5, 1.0, 1.5, 2.0])),
                daemon_overhead=overhead,
                spot_price=draw(st.sampled_from([None, 0.3, 0.7])),
            )
        )
    names = [o.name for o in options]
    group_count = draw(st.integers(1, 6))
    groups = []
    for g in range(group_count):
        allowed = draw(st.one_of(st.none(), st.sets(st.sampled_from(names), min_size=1).map(frozenset)))
        zones = draw(st.one_of(st.none(), st.sets(st.sampled_from(ZONES), min_size=1).map(frozenset)))
        kinds = draw(st.one_of(st.none(), st.sets(st.sampled_from(("on-demand", "spot")), min_size=1).map(frozenset)))
        groups.append(
            PodGroup(
                f"w{g}",
                Resources(
                    draw(st.sampled_from([100, 250, 500, 1000, 1500])), draw(st.sampled_from([100, 512, 1024, 2048])), 1
                ),
                draw(st.integers(0, 40)),
                allowed_types=allowed,
                zones=zones,
                capacity_types=kinds,
            )
        )
    limits = draw(st.dictionaries(st.sampled_from(["cpu", "memory", "nodes"]), st.integers(0, 40000), max_size=2))
    if "nodes" in limits:
        limits["nodes"] = limits["nodes"] % 12
    running = []
    for r in range(draw(st.integers(0, 2))):
        option = draw(st.sampled_from(options))
        running.append(
            RunningNode(
                f"running-{r}",
                option,
                Resources(draw(st.sampled_from([0, 500, 1500])), 256, draw(st.integers(0, 2))),
                zone=draw(st.sampled_from(ZONES)),
                capacity_type=draw(st.sampled_from(("on-demand", "spot"))),
                in_node_pool=draw(st.booleans()),
                capacity_reported=draw(st.booleans()),
            )
        )
    return Scenario(
        node_options=tuple(options),
        pod_groups=tuple(groups),
        limits=limits,
        zones=draw(st.sampled_from([None, frozenset(ZONES), frozenset({"za"})])),
        capacity_types=draw(st.sampled_from([("on-demand",), ("on-demand", "spot")])),
        running_nodes=tuple(running),
    )


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_simulation_matches_the_pod_by_pod_reference(scenario):
    result = simulate(scenario)
    nodes, pending, remaining = reference_simulation(scenario)
    assert [(n.instance_type, dict(n.pods)) for n in result.nodes] == nodes
    got_pending = {}
    for group in result.pending:
        got_pending[group.workload] = got_pending.get(group.workload, 0) + group.count
    assert got_pending == pending
    assert dict(result.remaining) == remaining


@settings(max_examples=30, deadline=None)
@given(scenarios())
def test_every_pod_is_placed_once_and_no_node_is_over_allocatable(scenario):
    result = simulate(scenario)
    assert result.placed_count + result.pending_count == sum(g.count for g in scenario.pod_groups)
    for node in result.nodes:
        if not node.existing:
            assert node.used.fits_in(node.allocatable)
    reported_usage = {
        key: sum(
            getattr(n.option.capacity, key) if key != "nodes" else 1
            for n in scenario.running_nodes
            if n.in_node_pool and n.capacity_reported
        )
        for key in scenario.limits
    }
    # Within one batch subtractMax keeps new capacity inside what the limits left.
    for key, limit in scenario.limits.items():
        new = sum(getattr(n.capacity, key) if key != "nodes" else 1 for n in result.new_nodes)
        assert new <= max(limit - reported_usage[key], 0)


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.data())
def test_limits_at_the_demand_of_a_run_without_them_change_nothing(scenario, data):
    """Limits at or above `limit_demand` on every key give the same fleet, pending pods and
    placements as no limits; and the demand is not padded: one node fewer than it demands leaves
    the pod that opened the last NodeClaim without one."""
    free = replace(scenario, limits={})
    unlimited = simulate(free)
    demand = unlimited.limit_demand
    assert set(demand) == set(LIMIT_KEYS)
    limits = {key: demand[key] + data.draw(st.integers(0, 3000), label=key) for key in LIMIT_KEYS}
    limited = simulate(replace(free, limits=limits))
    assert limited.nodes == unlimited.nodes
    assert limited.pending == unlimited.pending
    assert limited.placements == unlimited.placements
    assert limited.limit_demand == demand
    if demand["nodes"]:
        tight = simulate(replace(free, limits={"nodes": demand["nodes"] - 1}))
        assert tight.pending_count > unlimited.pending_count
