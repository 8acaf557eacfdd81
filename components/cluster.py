"""The EKS control plane, its managed add-ons, the node security group and the system node group."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from iam.karpenter import node_role_managed_policy_arns
from iam.trust import ec2_trust_policy
from stackconfig.aws_provider import KubeconfigSignIn
from stackconfig.foundation import SYSTEM_NODE_TAINT, SYSTEM_NODE_TOLERATIONS, ClusterConfig, NodeGroupConfig

# Add-ons that run as DaemonSets become ACTIVE without nodes and must exist before the nodes
# join (a node is not Ready without its CNI); CoreDNS is a Deployment and needs nodes first.
ADDONS_BEFORE_NODES = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
ADDONS_AFTER_NODES = ("coredns",)
# The VPC CNI enforces NetworkPolicies only with its network policy agent switched on. The agent
# needs add-on v1.14 or later (EKS installs a far newer default for every supported Kubernetes
# version), Kubernetes 1.25 or later and a 5.10+ kernel with the BPF file system (AL2023 has both);
# it uses the CNI's own permissions, so no IAM changes.
# coredns runs on the system nodes: their taint, written out rather than left to the add-on's
# default tolerations (its `tolerations` setting replaces them). The EKS DaemonSets (aws-node,
# kube-proxy, eks-pod-identity-agent) tolerate every taint.
ADDON_CONFIGURATION: dict[str, dict] = {
    "vpc-cni": {"enableNetworkPolicy": "true"},
    "coredns": {"tolerations": [dict(toleration) for toleration in SYSTEM_NODE_TOLERATIONS]},
}
# The system nodes' instance metadata: IMDSv2 only, answered one hop away, so that a pod (one hop
# past the node, on its own network namespace) does not reach it and cannot take the node role's
# credentials (the CNI policy among them). No controller there needs it: each is given its region
# (the Load Balancer Controller's `region`, Karpenter's AWS_REGION) and gets its role from IRSA
# or Pod Identity. Karpenter's own nodes have the same limit (EC2NodeClass).
SYSTEM_NODE_IMDS_HOP_LIMIT = 1
# The AL2023 AMIs' root device.
AL2023_ROOT_DEVICE = "/dev/xvda"


def with_exec_environment(kubeconfig_json: str, environment: dict[str, str]) -> str:
    """The kubeconfig with `environment` added to the exec environment of every user: the AWS
    CLI's files, which `aws eks get-token` takes from there only."""
    if not environment:
        return kubeconfig_json
    kubeconfig = json.loads(kubeconfig_json)
    for user in kubeconfig.get("users") or []:
        command = (user.get("user") or {}).get("exec")
        if command is None:
            continue
        kept = [entry for entry in command.get("env") or [] if entry.get("name") not in environment]
        command["env"] = kept + [{"name": name, "value": value} for name, value in environment.items()]
    return json.dumps(kubeconfig)


@dataclass(frozen=True)
class ClusterArgs:
    cluster_name: str
    config: ClusterConfig
    node_group: NodeGroupConfig
    vpc_id: pulumi.Input[str]
    public_subnet_ids: pulumi.Input[Sequence[str]]
    private_subnet_ids: pulumi.Input[Sequence[str]]
    partition: str
    tags: dict
    # How the kubeconfig signs in (`aws eks get-token` with a profile, a role and the AWS CLI's
    # files): as the AWS provider does, so that the identity that created the cluster, its admin,
    # applies the Kubernetes objects.
    sign_in: KubeconfigSignIn = KubeconfigSignIn()


class Cluster(pulumi.ComponentResource):
    """An EKS cluster with no default node group: nodes live in private subnets, the API is
    reached through access entries, and a managed node group runs the system pods."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-autoscaling:cluster:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        config = args.config

        self.secrets_key_arn = self._secrets_key(name, args, child)
        self.log_group = self._log_group(name, args, child)
        # pulumi-eks overloads Cluster (an args object or keywords); with this many Input unions
        # mypy gives up matching the overloads, so the call is checked by the tests instead.
        self.eks = eks.Cluster(  # type: ignore[call-overload, misc]
            f"{name}-eks",
            name=args.cluster_name,
            version=config.version,
            vpc_id=args.vpc_id,
            public_subnet_ids=args.public_subnet_ids,
            private_subnet_ids=args.private_subnet_ids,
            node_associate_public_ip_address=False,
            skip_default_node_group=True,
            # The security groups pulumi-eks would add carry the kubernetes.io/cluster tag as the
            # EKS cluster security group does; two such groups on one ENI break the Load
            # Balancer Controller, so this component manages the node security group itself.
            skip_default_security_groups=True,
            create_oidc_provider=True,
            authentication_mode=config.authentication_mode,
            endpoint_private_access=True,
            endpoint_public_access=config.endpoint_public_access,
            public_access_cidrs=list(config.public_access_cidrs) if config.endpoint_public_access else None,
            enabled_cluster_log_types=list(config.log_types),
            # The add-ons below are EKS managed add-ons owned by this component.
            bootstrap_self_managed_addons=False,
            use_default_vpc_cni=True,
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(enabled=False),
            encryption_config_key_arn=self.secrets_key_arn,
            provider_credential_opts=(
                eks.KubeconfigOptionsArgs(profile_name=args.sign_in.profile, role_arn=args.sign_in.role_arn)
                if args.sign_in.profile or args.sign_in.role_arn
                else None
            ),
            tags=args.tags,
            # Two decisions of the stack configuration, on the cluster where the policy pack
            # (policies/) can read them in a real run.
            cluster_tags={
                **(
                    {"eks-autoscaling:cluster.acknowledgeOpenEndpoint": "true"}
                    if config.acknowledge_open_endpoint
                    else {}
                ),
                **(
                    {"eks-autoscaling:cluster.secretsEncryption.enabled": "true"}
                    if config.secrets_encryption.enabled
                    else {}
                ),
            },
            # EKS writes into the group the program made instead of making one that outlives the stack.
            opts=child.merge(pulumi.ResourceOptions(depends_on=[self.log_group] if self.log_group else [])),
        )
        if not config.endpoint_public_access:
            pulumi.log.warn(
                "the API server has no public endpoint: `pulumi up` applies the Helm releases and Kubernetes "
                "objects from where it runs, which needs a route into the VPC (a CI runner in it, a VPN)",
                resource=self,
            )
        self.cluster_name = self.eks.eks_cluster.name
        self.cluster_security_group_id = self.eks.cluster_security_group_id

        self.node_security_group, self.node_security_group_rules = self._node_security_group(name, args, child)
        addons_before_nodes = [self._addon(name, addon, args, []) for addon in ADDONS_BEFORE_NODES]

        self.node_role = aws.iam.Role(
            f"{name}-system-node-role",
            assume_role_policy=json.dumps(ec2_trust_policy()),
            description=f"System nodes of EKS cluster {args.cluster_name}",
            tags=args.tags,
            opts=child,
        )
        node_role_attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-system-node-{arn.rsplit('/', 1)[-1]}",
                role=self.node_role.name,
                policy_arn=arn,
                opts=child,
            )
            # The same AWS managed policies as Karpenter's nodes, SSM included as in the reference.
            for arn in node_role_managed_policy_arns(args.partition)
        ]

        node_group = args.node_group
        self.system_launch_template = self._system_launch_template(name, args, child)
        self.system_nodes = eks.ManagedNodeGroup(
            f"{name}-system-nodes",
            cluster=self.eks,
            node_role=self.node_role,
            subnet_ids=args.private_subnet_ids,
            instance_types=list(node_group.instance_types),
            capacity_type=node_group.capacity_type,
            ami_type=node_group.ami_type,
            # pulumi-eks gives a node group the cluster's version only when it has neither a
            # version nor a launch template: without this, the nodes would keep their kubelet
            # when `cluster.version` goes up, and the next upgrade would exceed the allowed skew.
            version=config.version,
            # The launch template sets the root volume and the metadata options; pulumi-eks's own
            # (enableIMDSv2, diskSize) would set a hop limit this program does not own.
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.system_launch_template.id,
                version=self.system_launch_template.latest_version.apply(str),
            ),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=node_group.min_size,
                desired_size=node_group.desired_size,
                max_size=node_group.max_size,
            ),
            labels=dict(node_group.labels),
            # Only the add-ons tolerate it: a workload without a node selector goes to Karpenter's
            # nodes, not next to the controllers.
            taints=[aws.eks.NodeGroupTaintArgs(**SYSTEM_NODE_TAINT)],
            tags=args.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.eks, *addons_before_nodes, *node_role_attachments],
            ),
        )
        self.node_group_name = self.system_nodes.node_group.node_group_name
        self.addons = addons_before_nodes + [
            self._addon(name, addon, args, [self.system_nodes]) for addon in ADDONS_AFTER_NODES
        ]

        # Not pulumi-eks's `kubeconfigJson`: that one leaves the profile out on purpose, for other
        # users of the cluster, and would sign in as whatever identity the environment holds.
        self.kubeconfig_json = self.eks.get_kubeconfig(
            profile_name=args.sign_in.profile, role_arn=args.sign_in.role_arn
        ).apply(lambda text: with_exec_environment(text, args.sign_in.environment))
        self.kubernetes_provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=self.kubeconfig_json,
            enable_server_side_apply=True,
            # Every Kubernetes object goes through this provider; depending on the system nodes
            # keeps them, and the controllers whose finalizers they need, alive until those
            # objects are deleted. The kubeconfig comes from a method call, whose result carries
            # no dependency on the cluster: the edge is written here.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.eks, self.system_nodes]),
        )

        self.endpoint = self.eks.eks_cluster.endpoint
        self.kubeconfig = pulumi.Output.secret(self.kubeconfig_json)
        self.oidc_provider_arn = self.eks.oidc_provider_arn
        self.oidc_issuer_url = self.eks.oidc_provider_url
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "nodeGroupName": self.node_group_name,
                "nodeSecurityGroupId": self.node_security_group.id,
                "logGroupName": self.log_group.name if self.log_group else None,
            }
        )

    def _system_launch_template(
        self, name: str, args: ClusterArgs, child: pulumi.ResourceOptions
    ) -> aws.ec2.LaunchTemplate:
        """The system nodes' launch template: IMDSv2 with SYSTEM_NODE_IMDS_HOP_LIMIT hops and an
        encrypted gp3 root volume of `nodeGroup.diskSize` GiB. No AMI and no user data: EKS
        fills both in from the node group's AMI type and version."""
        return aws.ec2.LaunchTemplate(
            f"{name}-system-nodes",
            description=f"System nodes of EKS cluster {args.cluster_name}",
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",
                http_put_response_hop_limit=SYSTEM_NODE_IMDS_HOP_LIMIT,
            ),
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=AL2023_ROOT_DEVICE,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=args.node_group.disk_size,
                        volume_type="gp3",
                        encrypted="true",
                        delete_on_termination="true",
                    ),
                )
            ],
            update_default_version=True,
            tags=args.tags,
            opts=child,
        )

    def _secrets_key(self, name: str, args: ClusterArgs, child: pulumi.ResourceOptions):
        encryption = args.config.secrets_encryption
        if not encryption.enabled:
            return None
        if encryption.kms_key_arn:
            return encryption.kms_key_arn
        key = aws.kms.Key(
            f"{name}-secrets",
            description=f"Envelope encryption of Kubernetes secrets of EKS cluster {args.cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=args.tags,
            opts=child,
        )
        aws.kms.Alias(
            f"{name}-secrets", name=f"alias/eks/{args.cluster_name}-secrets", target_key_id=key.key_id, opts=child
        )
        return key.arn

    def _log_group(self, name: str, args: ClusterArgs, child: pulumi.ResourceOptions) -> aws.cloudwatch.LogGroup | None:
        """The group EKS sends the control-plane logs to. Left to EKS, it is created on first use
        with no expiry and survives `pulumi destroy`; made here, the cluster depends on it, so it
        exists before the first log line and is deleted after the cluster."""
        config = args.config
        if not config.log_types:
            return None
        return aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=f"/aws/eks/{args.cluster_name}/cluster",
            retention_in_days=config.log_retention_days,
            kms_key_id=config.log_kms_key_arn,
            tags=args.tags,
            opts=child,
        )

    def _node_security_group(self, name: str, args: ClusterArgs, child: pulumi.ResourceOptions):
        """The security group Karpenter's nodes get, found by its discovery tag, and its rules.

        Nodes talk to each other freely; the control plane and the system nodes (both in the
        EKS cluster security group) reach them on every port, which covers the webhook ports
        443, 8443 and 9443 and the kubelet's 10250 and 10251; and they reach the cluster
        security group in return, for the API server and CoreDNS.
        """
        group = aws.ec2.SecurityGroup(
            f"{name}-node-sg",
            vpc_id=args.vpc_id,
            description=f"Nodes of EKS cluster {args.cluster_name}",
            tags={**args.tags, "Name": f"{args.cluster_name}-node", "karpenter.sh/discovery": args.cluster_name},
            opts=child,
        )
        rules = child.merge(pulumi.ResourceOptions(parent=group))
        from_nodes = aws.vpc.SecurityGroupIngressRule(
            f"{name}-node-from-nodes",
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            description="Node to node, all traffic",
            opts=rules,
        )
        from_cluster = aws.vpc.SecurityGroupIngressRule(
            f"{name}-node-from-cluster",
            security_group_id=group.id,
            referenced_security_group_id=self.cluster_security_group_id,
            ip_protocol="-1",
            description="Control plane and system nodes to nodes, including webhooks and kubelet",
            opts=rules,
        )
        to_cluster = aws.vpc.SecurityGroupIngressRule(
            f"{name}-cluster-from-nodes",
            security_group_id=self.cluster_security_group_id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            description="Nodes to the control plane and system nodes",
            opts=rules,
        )
        egress = aws.vpc.SecurityGroupEgressRule(
            f"{name}-node-egress",
            security_group_id=group.id,
            cidr_ipv4="0.0.0.0/0",
            ip_protocol="-1",
            description="All egress",
            opts=rules,
        )
        return group, [from_nodes, from_cluster, to_cluster, egress]

    def _addon(self, name: str, addon: str, args: ClusterArgs, after: list):
        return aws.eks.Addon(
            f"{name}-{addon}",
            cluster_name=self.eks.eks_cluster.name,
            addon_name=addon,
            configuration_values=json.dumps(ADDON_CONFIGURATION[addon]) if addon in ADDON_CONFIGURATION else None,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.eks, *after]),
        )
