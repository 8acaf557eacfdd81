"""EksAutoscaling in a VPC that already exists, running the team's own workloads.

`pulumi install` (or `pulumi package add ../../provider`) generates the Python SDK of the component
package, `pulumi_eks_autoscaling`. The VPC comes from the stack configuration (Pulumi.dev.yaml); its ids
could as well be outputs of a VPC built in this program or read from another stack.
"""

import pulumi
import pulumi_eks_autoscaling as eks_autoscaling

config = pulumi.Config()
aws_config = pulumi.Config("aws")

autoscaling = eks_autoscaling.EksAutoscaling(
    "autoscaling",
    cluster_name="platform",
    tags={"team": "platform"},
    vpc_id=config.require("vpcId"),
    public_subnet_ids=config.require_object("publicSubnetIds"),
    private_subnet_ids=config.require_object("privateSubnetIds"),
    # The VPC's block and the number of zones its private subnets span.
    network={"cidr": config.require("vpcCidr"), "availability_zones": 3},
    cluster={"endpoint_public_access": False, "log_types": ["api", "audit", "authenticator"]},
    node_group={"min_size": 3, "desired_size": 3, "max_size": 6},
    identity="podIdentity",
    # The kubeconfig signs in as this stack's AWS provider does (None: the default credentials).
    aws_profile=aws_config.get("profile"),
    node_pool={"name": "general", "preset": "spot"},
    # No test app: the NodePool is sized for these workloads, which select it with the
    # node label karpenter.sh/nodepool=general.
    deploy_test_app=False,
    capacity={
        "headroom_percent": 20,
        "workloads": [
            {"name": "api", "requests": {"cpu": "500m", "memory": "1Gi"}, "maxReplicas": 40, "maxSurge": "25%"},
            {"name": "worker", "requests": {"cpu": "1", "memory": "2Gi"}, "maxReplicas": 24},
        ],
    },
)

pulumi.export("clusterName", autoscaling.cluster_name)
pulumi.export("kubeconfig", autoscaling.kubeconfig)
pulumi.export("nodePoolLimits", autoscaling.node_pool_limits)
pulumi.export("capacityPlan", autoscaling.capacity_plan)
