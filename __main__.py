"""eks-autoscaling: EKS with pods scaled by the HPA and nodes scaled by Karpenter."""

import pulumi
import pulumi_aws as aws

from components.addons import Addons, AddonsArgs, ReleaseIdentity
from components.cluster import Cluster, ClusterArgs
from components.identities import ControllerIdentities, ControllerIdentitiesArgs
from components.karpenter import (
    KarpenterNodeClass,
    KarpenterNodeClassArgs,
    KarpenterNodeInfrastructure,
    KarpenterNodeInfrastructureArgs,
)
from components.network import Network, NetworkArgs
from stackconfig.errors import StackConfigError
from stackconfig.load import load_from_pulumi

try:
    config = load_from_pulumi()
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None

aws_provider = aws.Provider(
    "aws",
    region=config.region,
    default_tags=aws.ProviderDefaultTagsArgs(tags=config.resource_tags),
)
invoke_options = pulumi.InvokeOptions(provider=aws_provider)
zones = aws.get_availability_zones(state="available", opts=invoke_options).names
if len(zones) < config.network.availability_zones:
    raise pulumi.RunError(
        f"invalid stack configuration: `network.availabilityZones` is {config.network.availability_zones} "
        f"but {config.region} has only {len(zones)} available zones ({', '.join(zones)})"
    )
zones = sorted(zones)[: config.network.availability_zones]
partition = aws.get_partition(opts=invoke_options).partition
account_id = aws.get_caller_identity(opts=invoke_options).account_id
aws_only = pulumi.ResourceOptions(providers={"aws": aws_provider})
tags = config.resource_tags

network = Network(
    "network",
    NetworkArgs(
        config=config.network,
        cluster_name=config.cluster_name,
        availability_zones=zones,
        tags=tags,
    ),
    opts=aws_only,
)
cluster = Cluster(
    "cluster",
    ClusterArgs(
        cluster_name=config.cluster_name,
        config=config.cluster,
        node_group=config.node_group,
        vpc_id=network.vpc_id,
        public_subnet_ids=network.public_subnet_ids,
        private_subnet_ids=network.private_subnet_ids,
        partition=partition,
        tags=tags,
    ),
    opts=aws_only,
)
kubernetes_only = pulumi.ResourceOptions(providers={"kubernetes": cluster.kubernetes_provider})

karpenter_nodes = KarpenterNodeInfrastructure(
    "karpenter-nodes",
    KarpenterNodeInfrastructureArgs(
        cluster_name=config.cluster_name,
        eks_cluster_name=cluster.cluster_name,
        partition=partition,
        tags=tags,
    ),
    opts=aws_only,
)
identities = ControllerIdentities(
    "identities",
    ControllerIdentitiesArgs(
        mode=config.identity,
        cluster_name=config.cluster_name,
        eks_cluster_name=cluster.cluster_name,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        partition=partition,
        region=config.region,
        account_id=account_id,
        load_balancer_controller_version=config.addons.load_balancer_controller.version,
        karpenter_version=config.addons.karpenter.version,
        karpenter_node_role_arn=karpenter_nodes.node_role.arn,
        karpenter_queue_arn=karpenter_nodes.queue.arn,
        tags=tags,
    ),
    opts=aws_only,
)
addons = Addons(
    "addons",
    AddonsArgs(
        config=config.addons,
        cluster_name=config.cluster_name,
        region=config.region,
        vpc_id=network.vpc_id,
        system_node_selector=dict([config.node_group.system_label]),
        interruption_queue_name=karpenter_nodes.queue_name,
        load_balancer_controller=ReleaseIdentity(
            identities.load_balancer_controller.service_account_annotations,
            identities.load_balancer_controller.ready,
        ),
        karpenter=ReleaseIdentity(identities.karpenter.service_account_annotations, identities.karpenter.ready),
        karpenter_prerequisites=karpenter_nodes.ready,
        cluster_ready=[cluster.system_nodes, *cluster.addons],
    ),
    opts=kubernetes_only,
)
node_class = KarpenterNodeClass(
    "karpenter-node-class",
    KarpenterNodeClassArgs(
        cluster_name=config.cluster_name,
        node_role_name=karpenter_nodes.node_role.name,
        ami_alias=config.addons.karpenter.ami_alias,
        root_volume_size=config.addons.karpenter.root_volume_size,
        tags=tags,
    ),
    opts=kubernetes_only.merge(pulumi.ResourceOptions(depends_on=[addons.karpenter_crds, addons.karpenter])),
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("endpoint", cluster.endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("oidcProviderArn", cluster.oidc_provider_arn)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("vpcId", network.vpc_id)
pulumi.export("publicSubnetIds", network.public_subnet_ids)
pulumi.export("privateSubnetIds", network.private_subnet_ids)
pulumi.export("nodeGroupName", cluster.node_group_name)
pulumi.export("nodeSecurityGroupId", cluster.node_security_group.id)
pulumi.export("karpenterNodeRoleName", karpenter_nodes.node_role.name)
pulumi.export("karpenterInterruptionQueue", karpenter_nodes.queue_name)
pulumi.export("loadBalancerControllerRoleArn", identities.load_balancer_controller.role_arn)
pulumi.export("karpenterControllerRoleArn", identities.karpenter.role_arn)
