"""The test workload, its NodePool sized by the planner, and the order `pulumi destroy` follows."""

import pytest

from offline import ProgramFailed, run_program

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOAD_KINDS = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:apps/v1:Deployment",
    "kubernetes:core/v1:Service",
    "kubernetes:networking.k8s.io/v1:Ingress",
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
    "kubernetes:policy/v1:PodDisruptionBudget",
    "kubernetes:networking.k8s.io/v1:NetworkPolicy",
}


def release(recording, name):
    return recording.one(RELEASE, f"addons-{name}")


def test_every_workload_object_is_registered_with_the_cluster_provider(dev):
    provider = dev.one("pulumi:providers:kubernetes")
    workload = dev.one("eks-autoscaling:workload:Workload")
    for kind in WORKLOAD_KINDS | {NODEPOOL}:
        (resource,) = [r for r in dev.of_type(kind) if r.parent == workload.urn]
        assert resource.provider == provider.urn, kind


def test_deployment_reference_behaviour(dev):
    deployment = dev.one("kubernetes:apps/v1:Deployment")
    spec = deployment.input("spec")
    assert deployment.input("metadata.namespace") == "test-app"
    assert "replicas" not in spec  # the HPA owns the count
    assert spec["strategy"]["rollingUpdate"] == {"maxSurge": "100%", "maxUnavailable": 0}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["image"].startswith("ghcr.io/mccutchen/go-httpbin:")
    assert container["resources"]["requests"]["cpu"] == "100m"
    assert container["resources"]["limits"]["cpu"] == "200m"
    assert spec["template"]["spec"]["nodeSelector"] == {"karpenter.sh/nodepool": "test-app"}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_hpa_and_ingress(dev):
    hpa = dev.one("kubernetes:autoscaling/v2:HorizontalPodAutoscaler").input("spec")
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 10)
    assert hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    scale_down = hpa["behavior"]["scaleDown"]
    assert scale_down["stabilizationWindowSeconds"] == 60
    assert scale_down["policies"] == [{"type": "Percent", "value": 30, "periodSeconds": 60}]
    ingress = dev.one("kubernetes:networking.k8s.io/v1:Ingress")
    assert ingress.input("spec.ingressClassName") == "alb"
    annotations = ingress.input("metadata.annotations")
    assert annotations["alb.ingress.kubernetes.io/scheme"] == "internet-facing"
    assert annotations["alb.ingress.kubernetes.io/target-type"] == "ip"
    assert dev.outputs["albHostname"].endswith(".elb.amazonaws.com")


def test_nodepool_is_the_reference_provisioner_on_v1(dev):
    spec = dev.one(NODEPOOL).input("spec")
    requirements = {r["key"]: r for r in spec["template"]["spec"]["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"]["values"] == ["m5.large"]
    assert requirements["karpenter.sh/capacity-type"]["values"] == ["on-demand"]
    assert requirements["kubernetes.io/arch"]["values"] == ["amd64"]
    assert requirements["topology.kubernetes.io/zone"]["values"] == ["ap-northeast-1a", "ap-northeast-1c"]
    assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert spec["disruption"]["consolidateAfter"] == "30s"
    assert spec["template"]["spec"]["expireAfter"] == "15m"
    assert spec["template"]["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "default",
    }


def test_nodepool_limits_come_from_the_plan(dev):
    limits = dev.one(NODEPOOL).input("spec.limits")
    assert limits == dev.outputs["nodePoolLimits"]
    plan = dev.outputs["capacityPlan"]
    assert plan["limits"] == limits
    # Ten replicas with 100 % surge: twenty pods of 100m on m5.large (1930m allocatable).
    assert plan["pods"] == {"peak": 10, "surge": 10, "withSurge": 20}
    assert plan["fleet"]["podsPending"] == 0
    assert plan["fleet"]["instanceTypes"] == {"m5.large": plan["fleet"]["nodes"]}
    # Limits count capacity: two m5.large (the rollout surge, or a drift replacement at peak)
    # are 4 vCPU and 15154Mi; + 10 % headroom rounded up: 5 cores and 17Gi, no spare type.
    assert limits == {"cpu": "5", "memory": "17Gi"}
    assert plan["limitsSetBy"] == {"cpu": "rollout", "memory": "rollout"}
    assert plan["scenarios"]["disruption"]["nodes"] == 2 and plan["scenarios"]["peak"]["nodes"] == 1


def test_the_spot_preset_plans_limits_within_twice_its_peak_fleet():
    spot = run_program("dev", {"nodePool": {"preset": "spot"}})
    plan = spot.outputs["capacityPlan"]
    peak_fleet = plan["scenarios"]["peak"]["capacity"]["cpu"]
    assert plan["fleet"]["podsPending"] == 0
    assert int(spot.outputs["nodePoolLimits"]["cpu"]) * 1000 <= 2 * peak_fleet


def test_plan_follows_the_workload():
    bigger = run_program(
        "dev",
        {
            "app": {"hpa": {"maxReplicas": 40}},
            "capacity": {"workloads": [{"name": "api", "requests": {"cpu": "1", "memory": "2Gi"}, "maxReplicas": 6}]},
        },
    )
    plan = bigger.outputs["capacityPlan"]
    assert plan["pods"]["withSurge"] == 80 + 6 + 2  # 25 % default surge on the extra workload rounds up to 2
    assert int(bigger.outputs["nodePoolLimits"]["cpu"]) > 10


def test_limits_override_and_its_acknowledgement():
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"nodePool": {"limits": {"cpu": "2", "memory": "8Gi"}}})
    assert "`nodePool.limits`" in str(failure.value) and "acknowledgeLimitsBelowPeak" in str(failure.value)
    # The AWS provider is registered before the checks that need the region's zones; it creates nothing.
    assert failure.value.recording.besides_providers() == []
    accepted = run_program(
        "dev", {"nodePool": {"limits": {"cpu": "2", "memory": "8Gi"}, "acknowledgeLimitsBelowPeak": True}}
    )
    assert accepted.one(NODEPOOL).input("spec.limits") == {"cpu": "2", "memory": "8Gi"}
    generous = run_program("dev", {"nodePool": {"limits": {"cpu": "100", "memory": "400Gi"}}})
    assert generous.one(NODEPOOL).input("spec.limits") == {"cpu": "100", "memory": "400Gi"}


@pytest.mark.parametrize(
    "overrides, fragments",
    [
        ({"app": {"hpa": {"minReplicas": 5, "maxReplicas": 2}}}, ["app.hpa", "minReplicas"]),
        ({"app": {"hpa": {"targetCpuUtilizationPercent": 0}}}, ["targetCpuUtilizationPercent"]),
        ({"app": {"hpa": {"targetCpuUtilizationPercent": 150}}}, ["targetCpuUtilizationPercent"]),
        ({"app": {"cpuRequest": "4", "cpuLimit": "4"}}, ["capacity", "test-app", "cpu", "m5.large"]),
        (
            {
                "nodePool": {
                    "requirements": [{"key": "karpenter.k8s.aws/instance-colour", "operator": "In", "values": ["blue"]}]
                }
            },
            ["nodePool.requirements", "instance-colour"],
        ),
        (
            {"nodePool": {"requirements": [{"key": "kubernetes.io/arch", "operator": "Near", "values": ["amd64"]}]}},
            ["nodePool.requirements", "Near"],
        ),
        (
            {
                "nodePool": {
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.nonexistent"]}
                    ]
                }
            },
            ["no instance type"],
        ),
        ({"nodePool": {"zones": ["us-east-1a"]}}, ["nodePool.zones", "us-east-1a", "ap-northeast-1"]),
        ({"nodePool": {"zones": ["ap-northeast-1d"]}}, ["nodePool.zones", "ap-northeast-1d", "VPC's zones"]),
        (
            {
                "capacity": {
                    "workloads": [{"name": "api", "requests": {"cpu": "-1", "memory": "1Gi"}, "maxReplicas": 2}]
                }
            },
            ["capacity", "api"],
        ),
    ],
)
def test_bad_workload_input_stops_before_any_resource(overrides, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    message = str(failure.value)
    for fragment in fragments:
        assert fragment in message, message
    # The AWS provider is registered before the checks that need the region's zones; it creates nothing.
    assert failure.value.recording.besides_providers() == []


# Teardown: (deleted first, deleted later). destroy deletes dependents first, so each pair must be
# an edge path from the first to the second in the recorded graph.
TEARDOWN_PAIRS = [
    ("ingress", "lbc"),
    ("service", "lbc"),
    ("nodepool", "nodeclass"),
    ("nodepool", "karpenter"),
    ("nodepool", "karpenter-crd"),
    ("nodeclass", "karpenter"),
    ("nodeclass", "node-sg"),
    ("nodepool", "node-sg"),
    ("nodeclass", "node-from-cluster-rule"),
    ("nodeclass", "cluster-from-nodes-rule"),
    ("deployment", "nodepool"),
    ("karpenter", "karpenter-role"),
    ("karpenter", "karpenter-policy-attachment"),
    ("karpenter", "queue"),
    ("karpenter", "queue-rule"),
    ("karpenter", "node-access-entry"),
    ("karpenter", "system-nodes"),
    ("lbc", "lbc-role"),
    ("lbc", "system-nodes"),
    ("system-nodes", "cluster"),
    ("cluster", "vpc"),
]


def _named(recording):
    return {
        "ingress": recording.one("kubernetes:networking.k8s.io/v1:Ingress"),
        "service": recording.one("kubernetes:core/v1:Service"),
        "deployment": recording.one("kubernetes:apps/v1:Deployment"),
        "nodepool": recording.one(NODEPOOL),
        "nodeclass": recording.one(NODECLASS),
        "lbc": release(recording, "aws-load-balancer-controller"),
        "karpenter": release(recording, "karpenter"),
        "karpenter-crd": release(recording, "karpenter-crd"),
        "karpenter-role": recording.one("aws:iam/role:Role", "identities-karpenter-role"),
        "karpenter-policy-attachment": recording.one(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "identities-karpenter-node-lifecycle"
        ),
        "lbc-role": recording.one("aws:iam/role:Role", "identities-aws-load-balancer-controller-role"),
        "queue": recording.one("aws:sqs/queue:Queue"),
        "queue-rule": recording.one("aws:cloudwatch/eventRule:EventRule", "karpenter-nodes-spot-interruption"),
        "node-access-entry": recording.one("aws:eks/accessEntry:AccessEntry"),
        "system-nodes": recording.one("eks:index:ManagedNodeGroup"),
        "cluster": recording.one("eks:index:Cluster"),
        "vpc": recording.one("awsx:ec2:Vpc"),
        "node-sg": recording.one("aws:ec2/securityGroup:SecurityGroup", "cluster-node-sg"),
        "node-from-cluster-rule": recording.one(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "cluster-node-from-cluster"
        ),
        "cluster-from-nodes-rule": recording.one(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "cluster-cluster-from-nodes"
        ),
    }


@pytest.mark.parametrize("first, later", TEARDOWN_PAIRS, ids=[f"{a}-before-{b}" for a, b in TEARDOWN_PAIRS])
def test_teardown_order(dev, first, later):
    named = _named(dev)
    assert dev.depends_on(named[first], named[later])
    assert not dev.depends_on(named[later], named[first])
    order = dev.deletion_order()
    assert order.index(named[first]) < order.index(named[later])


def test_every_in_cluster_object_goes_before_the_cluster(dev):
    cluster = dev.one("eks:index:Cluster")
    nodes = dev.one("eks:index:ManagedNodeGroup")
    for resource in dev.resources:
        if resource.type.startswith("kubernetes:") and not resource.type.startswith("pulumi:"):
            assert dev.depends_on(resource, cluster), resource
            assert dev.depends_on(resource, nodes), resource


def test_nothing_skips_the_deletion_wait(dev):
    for resource in dev.resources:
        if resource.type.startswith("kubernetes:"):
            annotations = resource.input("metadata.annotations", {}) or {}
            assert "pulumi.com/skipAwait" not in annotations, resource
            assert resource.deleted_with is None, resource


def test_a_workload_object_without_the_dependency_would_be_caught(dev):
    """The check above is not vacuous: drop the Ingress's edges and it fails."""
    from dataclasses import replace

    named = _named(dev)
    ingress = named["ingress"]
    detached = replace(ingress, dependencies=(), property_dependencies={}, parent=None)
    dev_copy = type(dev)(resources=[detached if r is ingress else r for r in dev.resources])
    assert not dev_copy.depends_on(detached, named["lbc"])


def test_the_node_class_outlives_none_of_the_node_security_group_rules(dev):
    """Karpenter's nodes use the group and all four of its rules: each outlives the EC2NodeClass."""
    node_class = dev.one(NODECLASS)
    group = dev.one("aws:ec2/securityGroup:SecurityGroup", "cluster-node-sg")
    rules = [r for r in dev.resources if r.type.startswith("aws:vpc/securityGroup") and r.parent == group.urn]
    assert len(rules) == 4
    order = dev.deletion_order()
    for resource in (group, *rules):
        assert dev.depends_on(node_class, resource, via=["dependency"]), resource
        assert order.index(node_class) < order.index(resource), resource
