"""The report tells one story: each term means one thing, and no two figures contradict each other.

Each case is a small real-world input (Kubernetes objects) on which an earlier report said two
things at once: a limits line naming a scenario that does not exist, "current limits are enough"
beside limits that remove a designed overflow, a recommendation whose "now" was not the fleet shown,
an HPA ramp for a StatefulSet, a DaemonSet counted on every node that runs on none, a scenario over
the limits left unmarked, a peak of two sizes, a scenario row counting other nodes than the fleet,
and no zones to check a spread with.
"""

import textwrap

import pytest

from sizing.kube.objects import read_objects
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import plan_capacity
from sizing.planning.report import plan_data, render_report

NODE_CLASS = textwrap.dedent("""
    ---
    apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata: {name: default}
    spec:
      amiSelectorTerms: [{alias: al2023@v20250410}]
      role: KarpenterNodeRole-demo
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
    """)


def _pool(name, family, weight=0, limits="", extra=""):
    return textwrap.dedent(f"""
        ---
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {{name: {name}}}
        spec:
          weight: {weight}
          {limits}
          template:
            {extra}
            spec:
              nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
              requirements:
                - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [{family}]}}
                - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
                - {{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}}
        """)


def _workload(kind="Deployment", name="api", replicas=10, cpu="1", surge="25%", spec=""):
    strategy = f"strategy: {{rollingUpdate: {{maxSurge: {surge}}}}}" if kind == "Deployment" else ""
    return textwrap.dedent(f"""
        ---
        apiVersion: apps/v1
        kind: {kind}
        metadata: {{name: {name}, namespace: shop}}
        spec:
          replicas: {replicas}
          {strategy}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
              {spec}
              containers:
                - {{name: main, image: nginx, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}
        """)


def _plan(text):
    # One EC2NodeClass for all the NodePools.
    plan = plan_capacity(plan_input_from_objects(read_objects([("input", text + NODE_CLASS)])))
    return plan, plan_data(plan), render_report(plan)


def test_the_minimum_is_always_set_by_a_scenario_of_the_plan():
    # One small pod: nothing needs more than the peak's own requests (the floor of the search).
    plan, data, text = _plan(_pool("general", "m5") + _workload(replicas=1, cpu="100m", surge=0))
    assert set(plan.limits.binding) <= set(plan.scenarios)
    assert "requests scenario" not in text
    assert f"set by the {plan.limits.binding[0]} scenario" in text


def test_overflow_designed_with_the_current_limits_is_reported_as_what_they_change():
    """Two weighted NodePools, the first with `limits.cpu: 16`: the planned limits are for the first,
    named; the current ones are not "enough", they send pods to the second, as designed or not."""
    text = _pool("general", "m5", 50, 'limits: {cpu: "16"}') + _pool("overflow", "c5", 10) + _workload(replicas=30)
    plan, data, report = _plan(text)
    assert data["nodePool"] == "general" and data["limits"]["nodePool"] == "general"
    assert "NodePool general limits: the smallest under which" in report
    assert data["currentLimits"]["keepsDecisions"] is False
    kinds = {c["kind"] for found in data["currentLimits"]["changes"].values() for c in found}
    assert kinds == {"node-pool"} and "If that overflow is by design, keep the current limits" in report
    assert "keep every scenario's decisions" not in report
    # Under the planned limits nothing goes to the other NodePool, as without limits.
    assert {node.node_pool for node in plan.fleet.nodes} == {"general"}


def test_the_recommendation_compares_with_the_fleet_shown():
    plan, data, text = _plan(_pool("general", "m5") + _workload(replicas=12, cpu="1500m"))
    now = data["recommendation"]["current"]
    assert (now["nodeCount"], now["cost"]) == (data["fleet"]["launched"], data["fleet"]["cost"])


def test_a_workload_without_an_hpa_has_no_hpa_ramp():
    plan, data, text = _plan(_pool("general", "m5") + _workload("StatefulSet", "db", replicas=3))
    assert "hpa-ramp" not in data["scenarios"] and "hpa-ramp" not in text
    assert list(data["scenarios"]) == ["peak", "rollout", "disruption"]


def test_a_daemon_set_that_runs_on_no_node_is_not_listed_on_every_node():
    agent = textwrap.dedent("""
        ---
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: gpu-agent, namespace: kube-system}
        spec:
          template:
            spec:
              nodeSelector: {karpenter.k8s.aws/instance-gpu-manufacturer: nvidia}
              containers: [{name: agent, image: agent, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
        """)
    plan, data, text = _plan(_pool("general", "m5") + _workload() + agent)
    assert [ds["nodePools"] for ds in data["daemonSets"] if ds["name"] == "kube-system/gpu-agent"] == [[]]
    assert "DaemonSets on every node: aws-node, kube-proxy, eks-pod-identity-agent\n" in text
    assert (
        "DaemonSets on no node (their selector or tolerations match no node of the NodePools): kube-system/gpu-agent"
        in text
    )


def test_a_scenario_above_the_planned_limits_is_marked():
    # One large pod per node: the drift replacement is created at the limits and runs over them.
    plan, data, text = _plan(_pool("general", "m5") + _workload(replicas=4, cpu="1500m", surge=0))
    over = {name: run["overLimits"] for name, run in data["scenarios"].items()}
    assert over["disruption"] == ["cpu", "memory"] and not over["peak"] and not over["rollout"]
    assert "above the planned cpu and memory limit" in text


def test_peak_means_one_number_and_scenario_rows_count_the_fleets_nodes():
    text = _pool("general", "m5", 50) + _pool("data", "r5", 10, extra="metadata: {labels: {team: data}}")
    text += _workload(replicas=12, cpu="500m", surge=0)
    text += _workload(name="etl", replicas=2, cpu="4", surge=0, spec="nodeSelector: {team: data}")
    plan, data, report = _plan(text)
    assert data["pods"] == {"peak": 14, "surge": 0, "withSurge": 14}
    assert data["scenarios"]["peak"]["pods"] == data["pods"]["peak"]
    assert data["scenarios"]["rollout"]["pods"] == data["pods"]["withSurge"]
    assert data["scenarios"]["rollout"]["nodeCount"] == data["fleet"]["nodeCount"]
    assert "Pods: 14 at peak (HPA maxReplicas) + 0 rollout surge = 14" in report
    rollout_row = next(line for line in report.splitlines() if line.startswith("  rollout "))
    count = data["fleet"]["nodeCount"]
    assert rollout_row.startswith(f"  rollout     14 pods: {count} node{'s' if count != 1 else ''} (")
    assert f"\n{count} node{'s' if count != 1 else ''} (" in report


@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])
def test_zones_show_how_a_spread_lands(when):
    spread = (
        "topologySpreadConstraints: [{topologyKey: topology.kubernetes.io/zone, maxSkew: 1, "
        f"whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: api}}}}}}]"
    )
    plan, data, text = _plan(_pool("general", "m5") + _workload(replicas=6, cpu="1500m", surge=0, spec=spread))
    per_zone = data["scenarios"]["peak"]["podsByZone"]["shop/api"]
    assert per_zone == {"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}
    assert "shop/api pods by zone: us-east-1a 2, us-east-1b 2, us-east-1c 2" in text
    nodes = data["scenarios"]["peak"]["nodesByZone"]
    assert sum(nodes.values()) == data["scenarios"]["peak"]["nodeCount"]
    assert all(node["zone"] in nodes for node in data["fleet"]["nodes"])


def test_every_figure_the_limits_rest_on_is_named_where_the_report_says_so():
    spread = (
        "topologySpreadConstraints: [{topologyKey: topology.kubernetes.io/zone, maxSkew: 1, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}]"
    )
    plan, data, text = _plan(_pool("general", "m5") + _workload(replicas=6, cpu="1500m", surge=0, spec=spread))
    minimum = data["limits"]["minimum"]
    lines = text.splitlines()
    # The scenario that sets a limit shows the minimum, in the unit of its own row (MiB).
    binding = data["limits"]["bindingScenario"]["memory"]
    row = next(line for line in lines if line.startswith(f"  {binding} "))
    assert f"← sets the cpu and memory limit: decides as without limits from {minimum['cpu'] // 1000} cpu, " in row
    assert f"{minimum['memory']}Mi ({minimum['memory'] // 1024}Gi) up" in row
    # "Only the instance types differ" only where the node counts are the same too.
    for name, run in data["scenarios"].items():
        unlimited = run["withoutLimits"]
        said = [line for line in lines if line.strip().startswith("without limits:")]
        if unlimited["nodePools"] != run["nodePools"] and unlimited["nodeCount"] != run["nodeCount"]:
            fewer = run["nodeCount"] - unlimited["nodeCount"]
            assert any(
                line.strip().startswith(f"without limits: {unlimited['nodeCount']} nodes")
                and f"on {fewer} node{'s' if fewer != 1 else ''} fewer of other instance types" in line
                for line in said
            ), name
    assert "only the instance types differ" not in text
    # One step under the minimum, the report names the limit it means.
    below = data["limits"]["below"]
    assert below["cpu"]["at"] == minimum["cpu"] - 1000
    cores = minimum["cpu"] // 1000
    assert f"  at cpu {cores - 1} (1 core under the minimum of {cores}), the rollout scenario decides" in text
    assert "one core less" not in text and "one GiB less" not in text
    # The drift replacement of a node whose pods spread over zones takes that node's zone.
    disruption = data["scenarios"]["disruption"]
    assert "any" not in disruption["nodesByZone"] and "any" not in disruption["podsByZone"]["shop/api"]
    assert "any zone" not in text


def test_nodes_no_pod_holds_to_a_zone_say_why_they_have_none():
    spread = (
        "topologySpreadConstraints: [{topologyKey: topology.kubernetes.io/zone, maxSkew: 1, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}]"
    )
    apart = (
        "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: api}}}]}}"
    )
    # The api pods spread over zones; the batch pods keep off their nodes and ask for no zone.
    _, data, text = _plan(
        _pool("general", "m5")
        + _workload(replicas=3, cpu="1500m", surge=0, spec=spread)
        + _workload(name="batch", replicas=2, cpu="3", surge=0, spec=apart)
    )
    disruption = data["scenarios"]["disruption"]
    assert disruption["nodesByZone"]["any"] >= 1 and "any" not in disruption["podsByZone"]["shop/api"]
    block = text[text.index("  disruption ") :].split("\n\n")[0]
    assert "any zone: no pod on those nodes asks for a zone, so EC2 picks one of the NodePool's at launch" in block
