"""The test workload: httpbin behind an ALB, scaled by the HPA onto nodes of its own Karpenter
NodePool, whose limits come from the capacity plan."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from stackconfig.app import AppConfig
from stackconfig.nodepool import NodePoolConfig
from stackobjects.app import app_objects
from stackobjects.karpenter import node_pool

KINDS = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("policy/v1", "PodDisruptionBudget"): k8s.policy.v1.PodDisruptionBudget,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    ("v1", "Service"): k8s.core.v1.Service,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): k8s.autoscaling.v2.HorizontalPodAutoscaler,
    ("networking.k8s.io/v1", "Ingress"): k8s.networking.v1.Ingress,
}


@dataclass(frozen=True)
class WorkloadArgs:
    """load_balancer_controller, karpenter, karpenter_crds, metrics_server: the add-on releases
    the workload needs while it exists (and so must outlive it on destroy).
    app: None builds the NodePool alone, for workloads deployed by other means."""

    app: AppConfig | None
    node_pool: NodePoolConfig
    zones: Sequence[str]
    limits: Mapping[str, str]
    node_class_name: str
    vpc_cidr: str
    tags: Mapping[str, str]
    load_balancer_controller: pulumi.Resource
    karpenter: pulumi.Resource
    karpenter_crds: pulumi.Resource
    metrics_server: pulumi.Resource
    node_class: pulumi.Resource
    extra_dependencies: Sequence[pulumi.Resource] = field(default_factory=list)


class Workload(pulumi.ComponentResource):
    """Deletion runs in reverse: the Ingress goes while the Load Balancer Controller can still
    delete its ALB, and the NodePool while Karpenter can still drain and terminate its nodes.
    pulumi-kubernetes waits for both deletions, finalizers included; nothing here opts out
    (no `pulumi.com/skipAwait`), so that wait is what keeps the order."""

    def __init__(self, name: str, args: WorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:workload:Workload", name, None, opts)

        pool = node_pool(args.node_pool, zones=args.zones, limits=args.limits, node_class_name=args.node_class_name)
        self.node_pool = k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version=pool["apiVersion"],
            kind=pool["kind"],
            metadata=pool["metadata"],
            spec=pool["spec"],
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[args.karpenter_crds, args.karpenter, args.node_class, *args.extra_dependencies]
            ),
        )

        objects = (
            []
            if args.app is None
            else app_objects(args.app, nodepool_name=args.node_pool.name, vpc_cidr=args.vpc_cidr, tags=args.tags)
        )
        created: dict[str, pulumi.CustomResource] = {}
        # What each kind must outlive or be created after, besides the namespace.
        after: dict[str, Callable[[], list[pulumi.Resource]]] = {
            "Deployment": lambda: [self.node_pool],
            "Service": lambda: [args.load_balancer_controller],
            "Ingress": lambda: [created["Service"], args.load_balancer_controller],
            "HorizontalPodAutoscaler": lambda: [created["Deployment"], args.metrics_server],
        }
        for obj in objects:
            kind = obj["kind"]
            resource_class = KINDS[(obj["apiVersion"], kind)]
            depends_on = [] if kind == "Namespace" else [created["Namespace"], *after.get(kind, lambda: [])()]
            body = {key: value for key, value in obj.items() if key not in ("apiVersion", "kind")}
            created[kind] = resource_class(
                f"{name}-{kind.lower()}",
                **body,
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
            )
        self.resources = created
        self.ingress = created.get("Ingress")
        assert self.ingress is None or isinstance(self.ingress, k8s.networking.v1.Ingress)
        self.alb_hostname = self.ingress.status.apply(_hostname) if self.ingress else pulumi.Output.from_input(None)
        self.register_outputs({"albHostname": self.alb_hostname, "nodePool": args.node_pool.name})


def _hostname(status) -> str | None:
    ingress = (status.load_balancer.ingress or []) if status and status.load_balancer else []
    return ingress[0].hostname if ingress else None
