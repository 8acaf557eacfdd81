"""Karpenter's node infrastructure: the node role and its cluster access, the interruption
queue with its EventBridge rules, and the EC2NodeClass."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from iam.interruption import (
    INTERRUPTION_RULES,
    QUEUE_MESSAGE_RETENTION_SECONDS,
    event_rules,
    queue_name,
    queue_policy,
)
from iam.karpenter import node_role_managed_policy_arns
from iam.trust import ec2_trust_policy
from stackobjects.karpenter import DEFAULT_NODE_CLASS_NAME, ec2_node_class


@dataclass(frozen=True)
class KarpenterNodeInfrastructureArgs:
    cluster_name: str
    eks_cluster_name: pulumi.Input[str]
    partition: str
    tags: Mapping[str, str] = field(default_factory=dict)
    create_spot_service_linked_role: bool = False


class KarpenterNodeInfrastructure(pulumi.ComponentResource):
    """What Karpenter needs in AWS before its controller starts."""

    def __init__(self, name: str, args: KarpenterNodeInfrastructureArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:karpenter:NodeInfrastructure", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(args.tags)

        self.node_role = aws.iam.Role(
            f"{name}-node-role",
            assume_role_policy=json.dumps(ec2_trust_policy()),
            description=f"Nodes that Karpenter launches for EKS cluster {args.cluster_name}",
            tags=tags,
            opts=child,
        )
        self.node_role_attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{arn.rsplit('/', 1)[-1]}", role=self.node_role.name, policy_arn=arn, opts=child
            )
            for arn in node_role_managed_policy_arns(args.partition)
        ]
        # EC2_LINUX entries let the nodes join without editing aws-auth.
        self.access_entry = aws.eks.AccessEntry(
            f"{name}-node-access",
            cluster_name=args.eks_cluster_name,
            principal_arn=self.node_role.arn,
            type="EC2_LINUX",
            tags=tags,
            opts=child,
        )

        self.queue = aws.sqs.Queue(
            f"{name}-interruption",
            name=queue_name(args.cluster_name),
            message_retention_seconds=QUEUE_MESSAGE_RETENTION_SECONDS,
            sqs_managed_sse_enabled=True,
            tags=tags,
            opts=child,
        )
        self.queue_policy = aws.sqs.QueuePolicy(
            f"{name}-interruption",
            queue_url=self.queue.url,
            policy=self.queue.arn.apply(lambda arn: json.dumps(queue_policy(arn))),
            opts=child,
        )
        self.rules = []
        for spec, rule in zip(INTERRUPTION_RULES, event_rules(args.cluster_name), strict=True):
            event_rule = aws.cloudwatch.EventRule(
                f"{name}-{spec.name_suffix}",
                name=rule.name,
                event_pattern=json.dumps(rule.event_pattern),
                tags=tags,
                opts=child,
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{spec.name_suffix}",
                rule=event_rule.name,
                arn=self.queue.arn,
                opts=pulumi.ResourceOptions(parent=event_rule, depends_on=[self.queue_policy]),
            )
            self.rules.append(event_rule)

        self.spot_service_linked_role = (
            aws.iam.ServiceLinkedRole(
                f"{name}-spot-service-linked-role",
                aws_service_name="spot.amazonaws.com",
                description="Lets EC2 launch spot instances in this account (AWSServiceRoleForEC2Spot)",
                # One role per account, which other stacks' spot instances may rely on: the
                # stack makes it when asked, and a destroy leaves it.
                opts=child.merge(pulumi.ResourceOptions(retain_on_delete=True)),
            )
            if args.create_spot_service_linked_role
            else None
        )

        self.queue_name = self.queue.name
        self.ready: Sequence[pulumi.Resource] = [
            self.node_role,
            *self.node_role_attachments,
            self.access_entry,
            self.queue,
            self.queue_policy,
            *self.rules,
            *([self.spot_service_linked_role] if self.spot_service_linked_role else []),
        ]
        self.register_outputs(
            {"nodeRoleName": self.node_role.name, "nodeRoleArn": self.node_role.arn, "queueName": self.queue.name}
        )


@dataclass(frozen=True)
class KarpenterNodeClassArgs:
    cluster_name: str
    node_role_name: pulumi.Input[str]
    ami_alias: str
    root_volume_size: int
    tags: Mapping[str, str] = field(default_factory=dict)
    name: str = DEFAULT_NODE_CLASS_NAME
    # The node security group and its rules. The class selects the group by tag, which makes no
    # edge; this does, so that the group outlives every node launched into it.
    security_group: Sequence[pulumi.Resource] = ()
    # The private subnets by id, for a VPC this project did not build (its subnets lack the discovery tag).
    subnet_ids: pulumi.Input[Sequence[str]] | None = None


class KarpenterNodeClass(pulumi.ComponentResource):
    """The EC2NodeClass. It must depend on the Karpenter release: its finalizer, which deletes
    the instance profiles and launch templates Karpenter made, needs a running controller. And
    on the node security group: the class is deleted only after its last node is gone."""

    def __init__(self, name: str, args: KarpenterNodeClassArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:karpenter:NodeClass", name, None, opts)
        document = pulumi.Output.all(args.node_role_name, args.subnet_ids).apply(
            lambda values: ec2_node_class(
                name=args.name,
                role_name=values[0],
                cluster_name=args.cluster_name,
                ami_alias=args.ami_alias,
                tags=args.tags,
                volume_size_gi=args.root_volume_size,
                subnet_ids=values[1],
            )
        )
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-ec2nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": args.name},
            spec=document.apply(lambda obj: obj["spec"]),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.security_group)),
        )
        self.name = args.name
        self.register_outputs({"name": args.name})
