"""The VPC: public subnets for the ALB, private subnets for every node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_awsx as awsx

from stackconfig.foundation import NetworkConfig

NAT_STRATEGIES = {
    "single": awsx.ec2.NatGatewayStrategy.SINGLE,
    "onePerAz": awsx.ec2.NatGatewayStrategy.ONE_PER_AZ,
}


@dataclass(frozen=True)
class NetworkArgs:
    config: NetworkConfig
    cluster_name: str
    availability_zones: Sequence[str]
    tags: dict


def subnet_tags(cluster_name: str) -> dict:
    """Subnet role tags: the Load Balancer Controller finds public subnets for internet-facing
    ALBs and private ones for internal ALBs by them, and Karpenter launches nodes into the
    subnets that carry its discovery tag."""
    return {
        "public": {"kubernetes.io/role/elb": "1"},
        "private": {"kubernetes.io/role/internal-elb": "1", "karpenter.sh/discovery": cluster_name},
    }


class Network(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    public_subnet_ids: pulumi.Output[Sequence[str]]
    private_subnet_ids: pulumi.Output[Sequence[str]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:network:Network", name, None, opts)
        tags = subnet_tags(args.cluster_name)
        self.availability_zones = list(args.availability_zones)
        self.vpc = awsx.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.config.cidr,
            availability_zone_names=self.availability_zones,
            nat_gateways=awsx.ec2.NatGatewayConfigurationArgs(strategy=NAT_STRATEGIES[args.config.nat_gateways]),
            subnet_strategy=awsx.ec2.SubnetAllocationStrategy.AUTO,
            subnet_specs=[
                awsx.ec2.SubnetSpecArgs(type=awsx.ec2.SubnetType.PUBLIC, tags=tags["public"]),
                awsx.ec2.SubnetSpecArgs(type=awsx.ec2.SubnetType.PRIVATE, tags=tags["private"]),
            ],
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**args.tags, "Name": f"{args.cluster_name}-vpc"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.vpc_id = self.vpc.vpc_id
        self.public_subnet_ids = self.vpc.public_subnet_ids
        self.private_subnet_ids = self.vpc.private_subnet_ids
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "publicSubnetIds": self.public_subnet_ids,
                "privateSubnetIds": self.private_subnet_ids,
            }
        )
