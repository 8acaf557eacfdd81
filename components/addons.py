"""The cluster add-ons installed with Helm: metrics-server, the AWS Load Balancer Controller
and Karpenter (its CRDs first), each pinned to the system node group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from stackconfig.addons import AddonsConfig
from stackconfig.foundation import SYSTEM_NODE_TOLERATIONS
from stackconfig.system_pods import KARPENTER_CONTROLLER_RESOURCES

METRICS_SERVER_REPOSITORY = "https://kubernetes-sigs.github.io/metrics-server/"
EKS_CHARTS_REPOSITORY = "https://aws.github.io/eks-charts"
KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter"
KARPENTER_CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"
SYSTEM_NAMESPACE = "kube-system"
LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT = "aws-load-balancer-controller"
KARPENTER_SERVICE_ACCOUNT = "karpenter"
# Helm waits this long for a release's pods to become ready before failing the update.
RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ReleaseIdentity:
    """A service account's role as a release needs it: the service account's annotations, the
    pods' annotations (which roll the pods when the role or the way they get it changes), and
    what must exist first."""

    annotations: pulumi.Input[Mapping[str, str]]
    ready: Sequence[pulumi.Resource]
    pod_annotations: pulumi.Input[Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class AddonsArgs:
    config: AddonsConfig
    cluster_name: str
    region: str
    vpc_id: pulumi.Input[str]
    system_node_selector: Mapping[str, str]
    interruption_queue_name: pulumi.Input[str]
    load_balancer_controller: ReleaseIdentity
    karpenter: ReleaseIdentity
    karpenter_prerequisites: Sequence[pulumi.Resource] = field(default_factory=list)
    cluster_ready: Sequence[pulumi.Resource] = field(default_factory=list)


class Addons(pulumi.ComponentResource):
    def __init__(self, name: str, args: AddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:addons:Addons", name, None, opts)
        config = args.config
        node_selector = {"kubernetes.io/os": "linux", **args.system_node_selector}
        # The system nodes' taint; the charts but Karpenter's tolerate nothing by default.
        tolerations = [dict(toleration) for toleration in SYSTEM_NODE_TOLERATIONS]

        def release(resource_name: str, depends_on: Sequence[pulumi.Resource], **release_args) -> k8s.helm.v3.Release:
            return k8s.helm.v3.Release(
                resource_name,
                namespace=SYSTEM_NAMESPACE,
                timeout=RELEASE_TIMEOUT_SECONDS,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.cluster_ready, *depends_on]),
                **release_args,
            )

        self.metrics_server = release(
            f"{name}-metrics-server",
            [],
            name="metrics-server",
            chart="metrics-server",
            version=config.metrics_server.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=METRICS_SERVER_REPOSITORY),
            values={
                "replicas": config.metrics_server.replicas,
                "nodeSelector": node_selector,
                "tolerations": tolerations,
            },
        )
        self.load_balancer_controller = release(
            f"{name}-aws-load-balancer-controller",
            args.load_balancer_controller.ready,
            name="aws-load-balancer-controller",
            chart="aws-load-balancer-controller",
            version=config.load_balancer_controller.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=EKS_CHARTS_REPOSITORY),
            values={
                "clusterName": args.cluster_name,
                # Given, not discovered through IMDS: the controller then needs neither the
                # metadata service nor a hop limit that lets a pod reach it.
                "region": args.region,
                "vpcId": args.vpc_id,
                "replicaCount": config.load_balancer_controller.replicas,
                "serviceAccount": {
                    "create": True,
                    "name": LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT,
                    "annotations": args.load_balancer_controller.annotations,
                },
                "podAnnotations": args.load_balancer_controller.pod_annotations,
                "nodeSelector": node_selector,
                "tolerations": tolerations,
                # The chart's Service mutator intercepts the creation of every Service in the cluster
                # and fails it (failurePolicy Fail) until the controller is ready, which races the
                # metrics-server and Karpenter releases installed alongside. The app is exposed by an
                # Ingress, which the mutator does not concern; Services of type LoadBalancer are left
                # to the in-tree controller unless they ask for this one (loadBalancerClass).
                "enableServiceMutatorWebhook": False,
            },
        )
        self.karpenter_crds = release(
            f"{name}-karpenter-crd",
            [],
            name="karpenter-crd",
            chart=KARPENTER_CRD_CHART,
            version=config.karpenter.version,
        )
        self.karpenter = release(
            f"{name}-karpenter",
            [self.karpenter_crds, *args.karpenter.ready, *args.karpenter_prerequisites],
            name="karpenter",
            chart=KARPENTER_CHART,
            version=config.karpenter.version,
            # The CRDs come from the karpenter-crd release, which Helm upgrades; the copies in this
            # chart's crds/ directory would be installed once and never upgraded.
            skip_crds=True,
            values={
                "settings": {"clusterName": args.cluster_name, "interruptionQueue": args.interruption_queue_name},
                "serviceAccount": {"name": KARPENTER_SERVICE_ACCOUNT, "annotations": args.karpenter.annotations},
                "podAnnotations": args.karpenter.pod_annotations,
                "replicas": config.karpenter.replicas,
                "controller": {
                    "resources": KARPENTER_CONTROLLER_RESOURCES,
                    # Given, not read from the instance metadata: the system nodes answer it one
                    # hop away only, out of a pod's reach.
                    "env": [{"name": "AWS_REGION", "value": args.region}],
                },
                # On top of the chart's own affinity, which keeps Karpenter off the nodes it launches.
                "nodeSelector": node_selector,
                # The chart's default, written out: the system nodes' taint.
                "tolerations": tolerations,
            },
        )
        self.register_outputs(
            {
                "metricsServer": self.metrics_server.status,
                "loadBalancerController": self.load_balancer_controller.status,
                "karpenter": self.karpenter.status,
            }
        )
