"""eks-autoscaling: EKS with pods scaled by the HPA and nodes scaled by Karpenter."""

import pulumi
import pulumi_aws as aws

from components.cluster import Cluster, ClusterArgs
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
aws_only = pulumi.ResourceOptions(providers={"aws": aws_provider})

network = Network(
    "network",
    NetworkArgs(
        config=config.network,
        cluster_name=config.cluster_name,
        availability_zones=zones,
        tags=config.resource_tags,
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
        tags=config.resource_tags,
    ),
    opts=aws_only,
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
