"""EksAutoscaling: the whole project as one component any Pulumi program can use.

Pulumi infers the package schema from the annotations of this class and of its args type, so
annotations here are evaluated (no postponed annotations) and every output carries a docstring.
"""

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws

from components.addons import Addons, AddonsArgs, ReleaseIdentity
from components.aws_provider import look_up_zones
from components.cluster import Cluster, ClusterArgs
from components.eks_autoscaling_args import EksAutoscalingArgs
from components.identities import ControllerIdentities, ControllerIdentitiesArgs
from components.karpenter import (
    KarpenterNodeClass,
    KarpenterNodeClassArgs,
    KarpenterNodeInfrastructure,
    KarpenterNodeInfrastructureArgs,
)
from components.network import Network, NetworkArgs
from components.workload import Workload, WorkloadArgs
from stackconfig.capacity import capacity_warnings, plan_summary
from stackconfig.deployment import (
    EXISTING_VPC_INPUTS,
    check_existing_vpc,
    config_from_args,
    kubeconfig_sign_in,
    plan_deployment,
)
from stackconfig.errors import StackConfigError

TYPE_TOKEN = "eks-autoscaling:index:EksAutoscaling"


class EksAutoscaling(pulumi.ComponentResource):
    """An EKS cluster whose pods scale with the Horizontal Pod Autoscaler and whose nodes scale with Karpenter, behind an Application Load Balancer, with NodePool limits sized by a capacity plan. Builds the VPC (or uses yours), the cluster and its system node group, the controllers' IAM roles, metrics-server, the AWS Load Balancer Controller, Karpenter with its node role, interruption queue and EC2NodeClass, the NodePool, and a test app."""

    cluster_name: pulumi.Output[str]
    """Name of the EKS cluster."""
    endpoint: pulumi.Output[str]
    """URL of the Kubernetes API server."""
    kubeconfig: pulumi.Output[str]
    """Kubeconfig of the cluster (secret)."""
    oidc_provider_arn: pulumi.Output[str]
    """ARN of the cluster's IAM OIDC provider."""
    oidc_issuer_url: pulumi.Output[str]
    """Issuer URL of the cluster's OIDC provider."""
    vpc_id: pulumi.Output[str]
    """The VPC: the one built, or the one given."""
    public_subnet_ids: pulumi.Output[list[str]]
    """Public subnets, where internet-facing ALBs go."""
    private_subnet_ids: pulumi.Output[list[str]]
    """Private subnets, where every node runs."""
    node_group_name: pulumi.Output[str]
    """Name of the system managed node group."""
    node_security_group_id: pulumi.Output[str]
    """Security group of the nodes, found by Karpenter by its discovery tag."""
    karpenter_node_role_name: pulumi.Output[str]
    """IAM role of the nodes Karpenter launches."""
    karpenter_interruption_queue: pulumi.Output[str]
    """SQS queue of the EC2 interruption events Karpenter handles."""
    load_balancer_controller_role_arn: pulumi.Output[str]
    """IAM role of the AWS Load Balancer Controller."""
    karpenter_controller_role_arn: pulumi.Output[str]
    """IAM role of the Karpenter controller."""
    alb_hostname: pulumi.Output[str | None]
    """Hostname of the test app's ALB (unset without the test app)."""
    node_pool_limits: pulumi.Output[dict[str, str]]
    """`spec.limits` of the NodePool: the planned ones, with any override applied."""
    capacity_plan: pulumi.Output[dict[str, Any]]
    """The capacity plan: fleet, cost per hour, limits, optimum and lower bound, gap, recommendation."""

    def __init__(
        self,
        name: str,
        args: EksAutoscalingArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        keep_stack_resource_names: bool = False,
    ):
        """keep_stack_resource_names: for the stack program only. Its resources were created
        before this component existed, directly under the stack and named without a prefix;
        the same names and an alias to the stack keep `pulumi up` from replacing them. Two
        components in one program need the default (children named after the component)."""
        inputs: dict[str, Any] = dict(args or {})
        # Bad inputs stop the program with one message (no traceback) before any child exists.
        try:
            _require_plain(inputs)
            existing_vpc = check_existing_vpc(inputs)
            sign_in = kubeconfig_sign_in(inputs)
        except StackConfigError as error:
            raise pulumi.RunError(str(error)) from None
        super().__init__(TYPE_TOKEN, name, None, opts)
        # Look-ups go through the AWS provider the component runs with, as its children do.
        invoke = pulumi.InvokeOptions(parent=self)
        provider_region = aws.get_region(opts=invoke).region
        region = inputs.get("region") or provider_region
        try:
            # A region that does not exist is named as such before it is compared with the provider's.
            config = config_from_args(inputs, region)
            _require_provider_region(region, provider_region)
            zones = look_up_zones(invoke, config.region, () if existing_vpc else config.node_group.instance_types)
            deployment = plan_deployment(config, zones, existing_vpc=existing_vpc)
        except StackConfigError as error:
            raise pulumi.RunError(str(error)) from None
        for warning in (*deployment.warnings, *capacity_warnings(config, deployment.plan)):
            pulumi.log.warn(warning, resource=self)
        partition = aws.get_partition(opts=invoke).partition
        account_id = aws.get_caller_identity(opts=invoke).account_id
        tags = config.resource_tags

        def child_name(part: str) -> str:
            return part if keep_stack_resource_names else f"{name}-{part}"

        child = pulumi.ResourceOptions(
            parent=self,
            aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)] if keep_stack_resource_names else None,
        )

        if existing_vpc:
            network = None
            vpc_id = pulumi.Output.from_input(inputs["vpc_id"])
            public_subnet_ids = pulumi.Output.from_input(inputs["public_subnet_ids"])
            private_subnet_ids = pulumi.Output.from_input(inputs["private_subnet_ids"])
        else:
            network = Network(
                child_name("network"),
                NetworkArgs(
                    config=config.network,
                    cluster_name=config.cluster_name,
                    availability_zones=deployment.vpc_zones,
                    tags=tags,
                ),
                opts=child,
            )
            vpc_id, public_subnet_ids, private_subnet_ids = (
                network.vpc_id,
                network.public_subnet_ids,
                network.private_subnet_ids,
            )
        cluster = Cluster(
            child_name("cluster"),
            ClusterArgs(
                cluster_name=config.cluster_name,
                config=config.cluster,
                node_group=config.node_group,
                vpc_id=vpc_id,
                public_subnet_ids=public_subnet_ids,
                private_subnet_ids=private_subnet_ids,
                partition=partition,
                tags=tags,
                sign_in=sign_in,
            ),
            opts=child,
        )
        kubernetes_only = child.merge(pulumi.ResourceOptions(providers={"kubernetes": cluster.kubernetes_provider}))

        karpenter_nodes = KarpenterNodeInfrastructure(
            child_name("karpenter-nodes"),
            KarpenterNodeInfrastructureArgs(
                cluster_name=config.cluster_name,
                eks_cluster_name=cluster.cluster_name,
                partition=partition,
                tags=tags,
                create_spot_service_linked_role=config.addons.karpenter.create_spot_service_linked_role,
            ),
            opts=child,
        )
        identities = ControllerIdentities(
            child_name("identities"),
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
            opts=child,
        )
        addons = Addons(
            child_name("addons"),
            AddonsArgs(
                config=config.addons,
                cluster_name=config.cluster_name,
                region=config.region,
                vpc_id=vpc_id,
                system_node_selector=dict([config.node_group.system_label]),
                interruption_queue_name=karpenter_nodes.queue_name,
                load_balancer_controller=ReleaseIdentity(
                    identities.load_balancer_controller.service_account_annotations,
                    identities.load_balancer_controller.ready,
                    identities.load_balancer_controller.pod_annotations,
                ),
                karpenter=ReleaseIdentity(
                    identities.karpenter.service_account_annotations,
                    identities.karpenter.ready,
                    identities.karpenter.pod_annotations,
                ),
                karpenter_prerequisites=karpenter_nodes.ready,
                cluster_ready=[cluster.system_nodes, *cluster.addons],
            ),
            opts=kubernetes_only,
        )
        node_class = KarpenterNodeClass(
            child_name("karpenter-node-class"),
            KarpenterNodeClassArgs(
                cluster_name=config.cluster_name,
                node_role_name=karpenter_nodes.node_role.name,
                ami_alias=config.addons.karpenter.ami_alias,
                root_volume_size=config.addons.karpenter.root_volume_size,
                tags=tags,
                security_group=[cluster.node_security_group, *cluster.node_security_group_rules],
                # Subnets of an existing VPC lack the discovery tag the built VPC puts on its own.
                subnet_ids=private_subnet_ids if existing_vpc else None,
            ),
            opts=kubernetes_only.merge(pulumi.ResourceOptions(depends_on=[addons.karpenter_crds, addons.karpenter])),
        )
        workload = Workload(
            child_name("workload"),
            WorkloadArgs(
                app=config.app if config.deploy_test_app else None,
                node_pool=config.node_pool,
                zones=list(deployment.node_pool_zones),
                limits=dict(deployment.limits),
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

        self.network = network
        self.cluster = cluster
        self.workload = workload
        self.cluster_name = cluster.cluster_name
        self.endpoint = cluster.endpoint
        self.kubeconfig = cluster.kubeconfig
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.oidc_issuer_url = cluster.oidc_issuer_url
        self.vpc_id = vpc_id
        self.public_subnet_ids = public_subnet_ids
        self.private_subnet_ids = private_subnet_ids
        self.node_group_name = cluster.node_group_name
        self.node_security_group_id = cluster.node_security_group.id
        self.karpenter_node_role_name = karpenter_nodes.node_role.name
        self.karpenter_interruption_queue = karpenter_nodes.queue_name
        self.load_balancer_controller_role_arn = identities.load_balancer_controller.role_arn
        self.karpenter_controller_role_arn = identities.karpenter.role_arn
        self.alb_hostname = workload.alb_hostname
        self.node_pool_limits = pulumi.Output.from_input(dict(deployment.limits))
        self.capacity_plan = pulumi.Output.from_input(plan_summary(deployment.plan))
        self.register_outputs(self.stack_outputs())

    def stack_outputs(self) -> dict[str, pulumi.Output]:
        """Every output by its schema name (`clusterName`, ...), as the stack program exports them."""
        return {
            "clusterName": self.cluster_name,
            "endpoint": self.endpoint,
            "kubeconfig": self.kubeconfig,
            "oidcProviderArn": self.oidc_provider_arn,
            "oidcIssuerUrl": self.oidc_issuer_url,
            "vpcId": self.vpc_id,
            "publicSubnetIds": self.public_subnet_ids,
            "privateSubnetIds": self.private_subnet_ids,
            "nodeGroupName": self.node_group_name,
            "nodeSecurityGroupId": self.node_security_group_id,
            "karpenterNodeRoleName": self.karpenter_node_role_name,
            "karpenterInterruptionQueue": self.karpenter_interruption_queue,
            "loadBalancerControllerRoleArn": self.load_balancer_controller_role_arn,
            "karpenterControllerRoleArn": self.karpenter_controller_role_arn,
            "albHostname": self.alb_hostname,
            "nodePoolLimits": self.node_pool_limits,
            "capacityPlan": self.capacity_plan,
        }


def _require_plain(inputs: Mapping[str, Any], path: str = "") -> None:
    """Configuration inputs must be known when the program runs: they are validated and the
    capacity plan is computed from them. Only the existing VPC's ids may come from resources."""
    problems = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, pulumi.Output) or hasattr(value, "__await__"):
            problems.append(
                f"`{where}` is an output of another resource; EksAutoscaling needs its configuration as plain "
                "values (only vpcId, publicSubnetIds and privateSubnetIds may be outputs)"
            )
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{where}.{_camel(key)}")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    for key, value in inputs.items():
        if key not in EXISTING_VPC_INPUTS:
            walk(value, _camel(key))
    if problems:
        raise StackConfigError(problems)


def _require_provider_region(region: str, provider_region: str) -> None:
    """The provider decides where every child is created and which zones are looked up; a
    different `region` would only reach the controllers' settings and IAM scopes, which would
    then name a region without the cluster."""
    if region != provider_region:
        raise StackConfigError(
            [
                f"`region` is {region!r}, but the AWS provider EksAutoscaling runs with creates everything in "
                f"{provider_region!r}: leave `region` out, or give the component an AWS provider of {region} "
                "(opts providers)"
            ]
        )


def _camel(name: Any) -> str:
    head, *rest = str(name).split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
