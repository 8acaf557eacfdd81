"""AWS roles for Kubernetes service accounts, through IRSA or EKS Pod Identity."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.addons import (
    KARPENTER_SERVICE_ACCOUNT,
    LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT,
    SYSTEM_NAMESPACE,
)
from iam.karpenter import (
    EKS_INTEGRATION,
    IAM_INTEGRATION,
    INTERRUPTION,
    NODE_LIFECYCLE,
    RESOURCE_DISCOVERY,
)
from iam.karpenter import controller_policies as karpenter_controller_policies
from iam.load_balancer_controller import controller_policy_text as load_balancer_controller_policy_text
from iam.trust import irsa_trust_policy, pod_identity_trust_policy

IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
# On the controllers' pods: credentials are injected only into a pod being created (by the IRSA
# webhook or the Pod Identity agent's), and neither chart restarts its pods when only the service
# account changes. A pod-template annotation naming the mode and the role rolls them on a switch.
IDENTITY_ANNOTATION = "eks-autoscaling/aws-identity"


@dataclass(frozen=True)
class ServiceAccountRoleArgs:
    """mode: "irsa" (trust the cluster's OIDC provider) or "podIdentity" (trust the EKS
    Pod Identity agent and associate the role with the service account).
    policies: customer-managed policies to create and attach, name -> JSON document.
    """

    mode: str
    cluster_name: pulumi.Input[str]
    namespace: str
    service_account: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    policies: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)


class ServiceAccountRole(pulumi.ComponentResource):
    """The role, its policies and, under Pod Identity, the association with the service account.

    `ready` lists what must exist before a pod may use the role; a Helm release depends on it.
    `service_account_annotations` is what the service account must carry (nothing under Pod
    Identity). `pod_annotations` is what the pods must carry, so that a change of mode or role
    replaces them.
    """

    role: aws.iam.Role
    ready: Sequence[pulumi.Resource]

    def __init__(self, name: str, args: ServiceAccountRoleArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:identities:ServiceAccountRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        trust: pulumi.Input[str]
        if args.mode == "irsa":
            trust = pulumi.Output.all(args.oidc_provider_arn, args.oidc_issuer_url).apply(
                lambda values: json.dumps(irsa_trust_policy(values[0], values[1], args.namespace, args.service_account))
            )
        elif args.mode == "podIdentity":
            trust = json.dumps(pod_identity_trust_policy())
        else:
            raise ValueError(f"identity mode {args.mode!r} is not one of irsa, podIdentity")

        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=trust,
            description=f"Service account {args.namespace}/{args.service_account}",
            tags=dict(args.tags),
            opts=child,
        )
        ready: list[pulumi.Resource] = [self.role]
        self.policies = {}
        for policy_name, document in args.policies.items():
            policy = aws.iam.Policy(
                f"{name}-{policy_name}",
                policy=document,
                description=f"{policy_name} for {args.namespace}/{args.service_account}",
                tags=dict(args.tags),
                opts=child,
            )
            self.policies[policy_name] = policy
            ready.append(
                aws.iam.RolePolicyAttachment(
                    f"{name}-{policy_name}", role=self.role.name, policy_arn=policy.arn, opts=child
                )
            )
        if args.mode == "podIdentity":
            ready.append(
                aws.eks.PodIdentityAssociation(
                    f"{name}-association",
                    cluster_name=args.cluster_name,
                    namespace=args.namespace,
                    service_account=args.service_account,
                    role_arn=self.role.arn,
                    tags=dict(args.tags),
                    opts=child,
                )
            )
            self.service_account_annotations: pulumi.Input[Mapping[str, str]] = {}
        else:
            self.service_account_annotations = self.role.arn.apply(lambda arn: {IRSA_ANNOTATION: arn})
        self.pod_annotations: pulumi.Output[Mapping[str, str]] = self.role.arn.apply(
            lambda arn: {IDENTITY_ANNOTATION: identity_annotation(args.mode, arn)}
        )
        self.ready = ready
        self.role_arn = self.role.arn
        self.register_outputs({"roleArn": self.role.arn})


def identity_annotation(mode: str, role_arn: str) -> str:
    """The value of the pods' identity annotation: the mode and the role, as `podIdentity <arn>`."""
    return f"{mode} {role_arn}"


KARPENTER_POLICY_NAMES = (NODE_LIFECYCLE, IAM_INTEGRATION, EKS_INTEGRATION, INTERRUPTION, RESOURCE_DISCOVERY)


@dataclass(frozen=True)
class ControllerIdentitiesArgs:
    mode: str
    cluster_name: str
    eks_cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    partition: str
    region: str
    account_id: str
    load_balancer_controller_version: str
    karpenter_version: str
    karpenter_node_role_arn: pulumi.Input[str]
    karpenter_queue_arn: pulumi.Input[str]
    tags: Mapping[str, str] = field(default_factory=dict)


class ControllerIdentities(pulumi.ComponentResource):
    """The roles of the AWS Load Balancer Controller and of Karpenter's controller, with the
    permissions their maintainers publish for the pinned versions."""

    def __init__(self, name: str, args: ControllerIdentitiesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:identities:ControllerIdentities", name, None, opts)
        common: dict[str, Any] = dict(
            mode=args.mode,
            cluster_name=args.eks_cluster_name,
            oidc_provider_arn=args.oidc_provider_arn,
            oidc_issuer_url=args.oidc_issuer_url,
            tags=args.tags,
        )
        self.load_balancer_controller = ServiceAccountRole(
            f"{name}-aws-load-balancer-controller",
            ServiceAccountRoleArgs(
                namespace=SYSTEM_NAMESPACE,
                service_account=LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT,
                policies={"policy": load_balancer_controller_policy_text(args.load_balancer_controller_version)},
                **common,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        documents = pulumi.Output.all(args.karpenter_node_role_arn, args.karpenter_queue_arn).apply(
            lambda arns: karpenter_controller_policies(
                args.karpenter_version,
                partition=args.partition,
                region=args.region,
                account_id=args.account_id,
                cluster_name=args.cluster_name,
                node_role_arn=arns[0],
                queue_arn=arns[1],
            )
        )
        self.karpenter = ServiceAccountRole(
            f"{name}-karpenter",
            ServiceAccountRoleArgs(
                namespace=SYSTEM_NAMESPACE,
                service_account=KARPENTER_SERVICE_ACCOUNT,
                policies={
                    policy_name: documents.apply(functools.partial(_document_text, key=policy_name))
                    for policy_name in KARPENTER_POLICY_NAMES
                },
                **common,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs(
            {
                "loadBalancerControllerRoleArn": self.load_balancer_controller.role_arn,
                "karpenterRoleArn": self.karpenter.role_arn,
            }
        )


def _document_text(documents: Mapping[str, Any], key: str) -> str:
    return json.dumps(documents[key])
