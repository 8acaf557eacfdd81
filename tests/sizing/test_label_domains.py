"""Custom NodePool labels and topology on keys other than hostname and zone, through both doors:
Kubernetes objects and a workload description. First principles, from how Karpenter builds topology
domains (the NodePools' requirements, template labels and instance types) and matches pods to
NodePools by their labels."""

import textwrap
from collections import Counter
from dataclasses import replace

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.labels import LabelRequirement, compatible, pool_admits
from sizing.kube.objects import read_objects
from sizing.kube.scheduling import LabelSelector, PodScheduling, Taint, Toleration, TopologySpread
from sizing.kube.workloads import DEFAULT_DAEMON_SETS, DaemonSet, Workload
from sizing.planning.description import plan_input_from_document
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import CONSTRAINED_NOTE, NodePoolSpec, PlanInput, node_options, plan_capacity
from sizing.planning.report import plan_data, render_report
from tests.sizing.node_pools import node_pool_yaml

M5 = ({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},)
WEB = {"app": "web"}


def _plan(workloads, pool=NodePoolSpec(requirements=M5), **options):
    options.setdefault("solver_work_limit", None)
    return plan_capacity(PlanInput(workloads=tuple(workloads), node_pool=pool, **options))


def _spread(key, when="DoNotSchedule"):
    return PodScheduling(labels=WEB, topology_spread=(TopologySpread(key, 1, when, LabelSelector(WEB)),))


def _pods_by(plan, attribute):
    counts = Counter()
    for node in plan.fleet.nodes:
        counts[attribute(node)] += node.pods.get("web", 0)
    return dict(counts)


# -- capacity type --------------------------------------------------------------------------------

SPOT_AND_ON_DEMAND = node_pool_yaml(
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
) + textwrap.dedent("""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 10
      strategy: {type: Recreate}
      template:
        metadata: {labels: {app: web}}
        spec:
          topologySpreadConstraints:
            - {maxSkew: 1, topologyKey: karpenter.sh/capacity-type, whenUnsatisfiable: DoNotSchedule,
               labelSelector: {matchLabels: {app: web}}}
          containers: [{name: web, resources: {requests: {cpu: "1", memory: 1Gi}}}]
""")


def test_a_capacity_type_spread_mixes_spot_and_on_demand_as_the_karpenter_docs_describe():
    # One 1-cpu pod per m5.large (1805m of room after the DaemonSets): ten nodes, five of each kind.
    plan_input = plan_input_from_objects(read_objects([("objects", SPOT_AND_ON_DEMAND)]))
    plan = plan_capacity(replace(plan_input, solver_work_limit=None))
    assert not plan.fleet.pending
    assert _pods_by(plan, lambda node: node.capacity_type) == {"on-demand": 5, "spot": 5}
    rows = [line for line in render_report(plan).splitlines() if line.startswith("nodeclaim-")]
    # A spot row carries the tag that says how spot is priced (here: at on-demand, no spot prices).
    assert Counter(line.split("m5.large/0.0960 ")[1].split(" ")[0] for line in rows) == {"on-demand": 5, "spot": 5}
    assert Counter(node["capacityType"] for node in plan_data(plan)["fleet"]["nodes"]) == {"on-demand": 5, "spot": 5}


def test_a_capacity_type_spread_on_an_on_demand_pool_puts_every_pod_on_on_demand():
    # One domain only: the spread never blocks a pod.
    plan = _plan(
        [Workload("web", 1000, 1024, replicas=6, max_surge=0, scheduling=_spread("karpenter.sh/capacity-type"))]
    )
    assert not plan.fleet.pending
    assert _pods_by(plan, lambda node: node.capacity_type) == {"on-demand": 6}


# -- instance-type labels -------------------------------------------------------------------------


def test_an_instance_type_spread_uses_every_type_the_node_pool_allows():
    plan = _plan(
        [Workload("web", 100, 128, replicas=6, max_surge=0, scheduling=_spread("node.kubernetes.io/instance-type"))]
    )
    assert not plan.fleet.pending
    assert _pods_by(plan, lambda node: node.instance_type) == {"m5.large": 3, "m5.xlarge": 3}


# -- custom labels --------------------------------------------------------------------------------

RACKS = (
    NodePoolSpec(requirements=M5, name="rack-a", labels={"example.com/rack": "a"}),
    NodePoolSpec(requirements=M5, name="rack-b", labels={"example.com/rack": "b"}),
)


def test_a_spread_over_a_custom_label_balances_pods_across_the_node_pools_that_set_it():
    # Each NodePool's template label is one domain; maxSkew 1 splits 8 pods 4 and 4.
    web = Workload("web", 100, 128, replicas=8, max_surge=0, scheduling=_spread("example.com/rack"))
    plan = _plan([web], pool=RACKS[0], other_node_pools=RACKS[1:])
    assert not plan.fleet.pending
    assert _pods_by(plan, lambda node: node.labels["example.com/rack"]) == {"a": 4, "b": 4}
    assert _pods_by(plan, lambda node: node.node_pool) == {"rack-a": 4, "rack-b": 4}


def test_a_custom_requirement_with_several_values_gives_each_node_one_of_them():
    pool = NodePoolSpec(
        requirements=M5 + ({"key": "example.com/team", "operator": "In", "values": ["web", "data"]},), name="shared"
    )
    teams = [
        Workload("web", 100, 128, replicas=2, max_surge=0, node_selector={"example.com/team": "web"}),
        Workload("data", 100, 128, replicas=2, max_surge=0, node_selector={"example.com/team": "data"}),
        Workload("any", 100, 128, replicas=1, max_surge=0),
    ]
    plan = _plan(teams, pool=pool)
    assert not plan.fleet.pending
    by_team = {node.labels["example.com/team"]: dict(node.pods) for node in plan.fleet.nodes}
    # Web and data pods never share a node; the unconstrained pod joins one of them.
    assert set(by_team) == {"web", "data"}
    assert by_team["web"].get("data") is None and by_team["data"].get("web") is None
    assert sum(pods.get("any", 0) for pods in by_team.values()) == 1
    # The bin-packing solver does not model that choice of value, so the plan says it did not run; a
    # NodePool whose custom label has one value leaves nothing to choose, and the solver runs.
    solved = _plan(teams, pool=pool, solver_work_limit=50)
    assert solved.optimal is None and CONSTRAINED_NOTE in solved.notes
    single = replace(pool, requirements=M5 + ({"key": "example.com/team", "operator": "In", "values": ["web"]},))
    plain = _plan([teams[0], teams[2]], pool=single, solver_work_limit=50)
    assert plain.optimal is not None and CONSTRAINED_NOTE not in plain.notes


def test_the_custom_label_door_agrees_between_objects_and_a_description():
    objects = textwrap.dedent("""
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: general}
        spec:
          template:
            metadata: {labels: {example.com/tier: gold}}
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
              requirements:
                - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
                - {key: example.com/team, operator: In, values: [web]}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 3
          strategy: {type: Recreate}
          template:
            metadata: {labels: {app: web}}
            spec:
              nodeSelector: {example.com/team: web, example.com/tier: gold}
              containers: [{name: web, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
    """)
    description = {
        "nodePool": {
            "name": "general",
            "labels": {"example.com/tier": "gold"},
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
                {"key": "example.com/team", "operator": "In", "values": ["web"]},
            ],
        },
        "workloads": [
            {
                "name": "web",
                "requests": {"cpu": "100m", "memory": "64Mi"},
                "maxReplicas": 3,
                "maxSurge": 0,
                "nodeSelector": {"example.com/team": "web", "example.com/tier": "gold"},
            }
        ],
    }
    plans = [
        plan_capacity(replace(plan_input, solver_work_limit=None))
        for plan_input in (
            plan_input_from_objects(read_objects([("objects", objects)])),
            plan_input_from_document(description),
        )
    ]
    for plan in plans:
        (node,) = plan.fleet.nodes
        assert node.pods == {"web": 3}
        assert node.labels == {"example.com/team": "web", "example.com/tier": "gold"}


def test_a_pod_requiring_a_custom_label_no_node_pool_offers_is_refused_naming_it():
    web = Workload("web", 100, 128, replicas=1, node_selector={"example.com/team": "batch"})
    pool = NodePoolSpec(requirements=M5 + ({"key": "example.com/team", "operator": "In", "values": ["web"]},))
    with pytest.raises(SizingInputError) as error:
        _plan([web], pool=pool)
    assert str(error.value) == (
        "workload 'web': nodeSelector requires custom label example.com/team=batch, which no NodePool gives its "
        "nodes and no running node carries (NodePool default: example.com/team In [web]); Karpenter would leave "
        "these pods pending. Add the label to a NodePool's template labels or requirements"
    )


def test_a_daemon_set_selecting_a_custom_label_counts_where_the_node_pool_may_carry_it():
    # Karpenter counts a DaemonSet on a NodePool whose requirements are compatible with its selector,
    # here team In [web, data] against team=web: it may run on every node of the pool.
    pool = NodePoolSpec(
        requirements=M5 + ({"key": "example.com/team", "operator": "In", "values": ["web", "data"]},), name="shared"
    )
    web_agent = DaemonSet("web-agent", 300, 0, node_selector={"example.com/team": "web"})
    other_agent = DaemonSet("other-agent", 500, 0, node_selector={"example.com/team": "batch"})
    base = PlanInput(workloads=(Workload("w", 100, 64, replicas=1),), node_pool=pool, daemon_sets=DEFAULT_DAEMON_SETS)
    with_agents = replace(base, daemon_sets=DEFAULT_DAEMON_SETS + (web_agent, other_agent))
    before = {o.name: o.daemon_overhead.cpu for o in node_options(base)}
    after = {o.name: o.daemon_overhead.cpu for o in node_options(with_agents)}
    assert after["m5.large"] - before["m5.large"] == 300


@pytest.mark.parametrize(
    "labels, message",
    [
        (
            {"karpenter.sh/team": "a"},
            "template labels: label domain \"karpenter.sh\" is restricted (at 'karpenter.sh/team')",
        ),
        ({"kubernetes.io/arch": "arm64"}, "'kubernetes.io/arch' is a well-known label: give it as a requirement"),
        (
            {"kubernetes.io/hostname": "a"},
            "template labels: label \"kubernetes.io/hostname\" is restricted (at 'kubernetes.io/hostname')",
        ),
    ],
)
def test_template_labels_on_restricted_or_well_known_keys_are_refused(labels, message):
    with pytest.raises(SizingInputError, match="nodePool: template label") as error:
        _plan([Workload("w", 100, 64, replicas=1)], pool=NodePoolSpec(requirements=M5, labels=labels))
    assert message in str(error.value)


@pytest.mark.parametrize(
    "key, message",
    [
        ("topology.kubernetes.io/region", "is a label Karpenter derives from the instance type or its offering"),
        ("failure-domain.beta.kubernetes.io/zone", "deprecated name of 'topology.kubernetes.io/zone'"),
        ("karpenter.sh/nodepool", "Karpenter's NodePools give it no domain"),
    ],
)
def test_topology_on_a_key_the_planner_does_not_model_is_refused_naming_it(key, message):
    web = Workload("web", 100, 128, replicas=2, scheduling=_spread(key))
    with pytest.raises(SizingInputError) as error:
        _plan([web])
    assert f"topology key {key!r} is not modelled" in str(error.value) and message in str(error.value)


def test_a_node_of_an_earlier_batch_keeps_its_taints_and_labels():
    # The tainted pool is tried first (weight 100) and takes x; y does not tolerate the taint. Whatever
    # batches a scenario takes, no y pod may land on a node of the tainted pool, nor a "data" pod on a
    # "web" node.
    tainted = NodePoolSpec(requirements=M5, name="gpu", weight=100, taints=(Taint("team", "NoSchedule", "gpu"),))
    shared = NodePoolSpec(
        requirements=M5 + ({"key": "example.com/team", "operator": "In", "values": ["web", "data"]},), name="shared"
    )
    tolerant = PodScheduling(tolerations=(Toleration("team", "Equal", "gpu", "NoSchedule"),))
    workloads = [
        Workload("x", 1000, 1024, replicas=1, max_surge=0, scheduling=tolerant),
        Workload("y", 100, 128, replicas=4, max_surge="100%"),
        Workload("web", 200, 128, replicas=4, max_surge="100%", node_selector={"example.com/team": "web"}),
        Workload("data", 200, 128, replicas=4, max_surge="100%", node_selector={"example.com/team": "data"}),
    ]
    plan = _plan(workloads, pool=shared, other_node_pools=(tainted,))
    for name, run in plan.scenarios.items():
        for node in run.result.nodes:
            if node.node_pool == "gpu":
                assert set(node.pods) <= {"x"}, (name, node)
            team = node.labels.get("example.com/team")
            assert not (team == "web" and "data" in node.pods), (name, node)
            assert not (team == "data" and "web" in node.pods), (name, node)


@pytest.mark.parametrize(
    "existing, incoming, expected",
    [
        (("In", ("a", "b")), ("In", ("b",)), True),
        (("In", ("a",)), ("In", ("b",)), False),
        (("In", ("a",)), ("NotIn", ("a",)), False),
        (("NotIn", ("a",)), ("DoesNotExist", ()), True),
        (("DoesNotExist", ()), ("NotIn", ("a",)), True),
        (("Exists", ()), ("DoesNotExist", ()), False),
        (("In", ("3", "7")), ("Gt", ("5",)), True),
        (("In", ("3", "4")), ("Gt", ("5",)), False),
        (("Gt", ("5",)), ("Lt", ("6",)), False),
        (("Gt", ("5",)), ("Lt", ("8",)), True),
    ],
)
def test_label_requirements_intersect_as_karpenter_does(existing, incoming, expected):
    """kubernetes-sigs/karpenter pkg/scheduling/requirements.go `Intersects`: values in common, or both
    sides NotIn/DoesNotExist; Gt/Lt bound integer values."""
    left = LabelRequirement.of("k", existing[0], existing[1])
    right = LabelRequirement.of("k", incoming[0], incoming[1])
    assert compatible(left, right) is expected


def test_an_undefined_custom_label_admits_only_not_in_and_does_not_exist():
    for operator, values, admitted in (("In", ("a",), False), ("Exists", (), False), ("NotIn", ("a",), True)):
        reason = pool_admits((), (LabelRequirement.of("example.com/team", operator, values),))
        assert (reason is None) is admitted
    assert pool_admits((), (LabelRequirement.of("example.com/team", "DoesNotExist"),)) is None
