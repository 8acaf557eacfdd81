"""eks-autoscaling: EKS with pods scaled by the HPA and nodes scaled by Karpenter."""

import pulumi

from components.addons import Addons, AddonsArgs, ReleaseIdentity
from components.aws_provider import look_up_account, stack_aws_provider
from components.cluster import Cluster, ClusterArgs
from components.identities import ControllerIdentities, ControllerIdentitiesArgs
from components.karpenter import (
    KarpenterNodeClass,
    KarpenterNodeClassArgs,
    KarpenterNodeInfrastructure,
    KarpenterNodeInfrastructureArgs,
)
from components.network import Network, NetworkArgs
from components.workload import Workload, WorkloadArgs
from stackconfig.aws_provider import parse_aws_settings
from stackconfig.capacity import capacity_warnings, node_pool_limits, plan_for, plan_summary
from stackconfig.errors import StackConfigError
from stackconfig.load import load_from_pulumi, pulumi_config_values, select_zones

# Everything that can reject the configuration runs before the first resource is registered, but
# for the checks that need the region's zones: they follow the AWS provider, which creates nothing.
try:
    config = load_from_pulumi()
    aws_settings = parse_aws_settings(pulumi_config_values())
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None
tags = config.resource_tags
aws_provider = stack_aws_provider("aws", config.region, aws_settings, tags)
try:
    account = look_up_account(aws_provider)
    zones = select_zones(config, account.region_zones)
    capacity_plan = plan_for(config, zones)
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None
for warning in capacity_warnings(config, capacity_plan):
    pulumi.log.warn(warning)
partition = account.partition
account_id = account.account_id
aws_only = pulumi.ResourceOptions(providers={"aws": aws_provider})

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
        kubeconfig_profile=aws_settings.profile,
        kubeconfig_role_arn=aws_settings.role_arn,
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
        create_spot_service_linked_role=config.addons.karpenter.create_spot_service_linked_role,
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
        security_group=[cluster.node_security_group, *cluster.node_security_group_rules],
    ),
    opts=kubernetes_only.merge(pulumi.ResourceOptions(depends_on=[addons.karpenter_crds, addons.karpenter])),
)
workload = Workload(
    "workload",
    WorkloadArgs(
        app=config.app,
        node_pool=config.node_pool,
        zones=list(config.node_pool.zones or zones),
        limits=node_pool_limits(config, capacity_plan),
        node_class_name=node_class.name,
        vpc_cidr=config.network.cidr,
        tags=tags,
        load_balancer_controller=addons.load_balancer_controller,
        karpenter=addons.karpenter,
        karpenter_crds=addons.karpenter_crds,
        metrics_server=addons.metrics_server,
        node_class=node_class.node_class,
    ),
    opts=kubernetes_only,
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
pulumi.export("albHostname", workload.alb_hostname)
pulumi.export("nodePoolLimits", node_pool_limits(config, capacity_plan))
pulumi.export("capacityPlan", plan_summary(capacity_plan))
