"""Claims opened alike and holding the same pods narrow alike, and hold as many more pods: the
simulation reuses both outcomes, and what it keeps for that is bounded and never changes a result."""

from sizing.karpenter.simulation import NodeOption, PodGroup, Scenario, simulate
from sizing.karpenter.simulation import nodeclaims as nodeclaims_module
from sizing.kube.resources import Resources

OPTIONS = tuple(
    NodeOption(
        f"type-{cores}",
        Resources(cores * 1000, cores * 4096, 110),
        Resources(cores * 950, cores * 3800, 110),
        cores * 0.05,
    )
    for cores in (2, 4, 8, 16, 32, 48, 64, 96)
)


def _scenario():
    # Large pods of a few shapes: hundreds of claims of one type and content.
    groups = tuple(
        PodGroup(
            f"w{cpu}",
            Resources(cpu, cpu * 3, 1),
            150,
            allowed_types=None if cpu > 10000 else frozenset(o.name for o in OPTIONS[2:]),
        )
        for cpu in (7000, 15000, 30000, 45000, 60000)
    )
    return Scenario(node_options=OPTIONS, pod_groups=groups, limits={"cpu": 40_000_000})


def test_a_bounded_memory_of_narrowings_gives_the_same_fleet(monkeypatch):
    every = simulate(_scenario())
    sizes = []
    original = nodeclaims_module.NodeClaims.narrow

    def watched(self, claim, run):
        original(self, claim, run)
        sizes.append(max(len(self._narrowings), len(self._most)))

    monkeypatch.setattr(nodeclaims_module, "NARROWINGS_KEPT", 3)
    monkeypatch.setattr(nodeclaims_module.NodeClaims, "narrow", watched)
    few = simulate(_scenario())
    assert few == every
    assert len(every.nodes) > 200
    assert sizes and max(sizes) <= 3


def test_claims_of_one_type_and_content_narrow_once(monkeypatch):
    computed = []
    original = nodeclaims_module.set_candidates

    def counted(table, claim, candidates):
        computed.append(1)
        original(table, claim, candidates)

    monkeypatch.setattr(nodeclaims_module, "set_candidates", counted)
    result = simulate(_scenario())
    # Each claim is set up once from its template; narrowing adds one computation per distinct content.
    assert len(computed) < len(result.nodes) // 4


def test_claims_of_one_type_and_content_are_weighed_once(monkeypatch):
    weighed = []
    original = nodeclaims_module.most_pods

    def counted(*args):
        weighed.append(1)
        return original(*args)

    monkeypatch.setattr(nodeclaims_module, "most_pods", counted)
    result = simulate(_scenario())
    assert len(weighed) < len(result.nodes) // 4
