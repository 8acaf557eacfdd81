import ipaddress
import json

import pytest

from offline.program import PROJECT_DIR
from stackconfig.foundation import NON_PUBLIC_RANGES, non_public_range
from stackconfig.load import parse_stack_config
from tests.harness import ProgramFailed, run_program

WEBHOOK_AND_KUBELET_PORTS = (443, 8443, 9443, 10250, 10251)


def test_cluster_has_no_default_node_group_and_private_nodes(dev):
    eks = dev.one("eks:index:Cluster")
    assert eks.input("name") == "karpenter-test"
    assert eks.input("skipDefaultNodeGroup") is True
    assert eks.input("nodeAssociatePublicIpAddress") is False
    assert eks.input("privateSubnetIds") == dev.outputs["privateSubnetIds"]
    assert eks.input("vpcId") == dev.outputs["vpcId"]


def test_cluster_version_logging_and_endpoint(dev):
    eks = dev.one("eks:index:Cluster")
    assert eks.input("version") == "1.35"
    assert eks.input("enabledClusterLogTypes") == ["api", "audit", "authenticator"]
    assert eks.input("endpointPrivateAccess") is True
    assert eks.input("endpointPublicAccess") is True
    assert eks.input("publicAccessCidrs") == ["0.0.0.0/0"]


def test_cluster_identity_oidc_and_access_entries(dev):
    eks = dev.one("eks:index:Cluster")
    assert eks.input("createOidcProvider") is True
    assert eks.input("authenticationMode") == "API"


def test_restricted_private_endpoint_settings():
    recording = run_program(
        "dev",
        {
            "cluster": {
                "version": "1.36",
                "publicAccessCidrs": ["52.94.0.0/22"],
                "acknowledgeOpenEndpoint": False,
                "logTypes": ["api", "audit", "authenticator", "scheduler"],
                "authenticationMode": "API_AND_CONFIG_MAP",
            }
        },
    )
    eks = recording.one("eks:index:Cluster")
    assert eks.input("version") == "1.36"
    assert eks.input("publicAccessCidrs") == ["52.94.0.0/22"]
    assert eks.input("enabledClusterLogTypes")[-1] == "scheduler"
    assert eks.input("authenticationMode") == "API_AND_CONFIG_MAP"


def test_a_cluster_version_change_reaches_the_system_node_group():
    # The system nodes have a launch template of their own, so pulumi-eks leaves their version
    # unset: the program passes it, and the upgrade rolls the nodes too.
    recording = run_program("dev", {"cluster": {"version": "1.36"}})
    assert recording.one("eks:index:Cluster").input("version") == "1.36"
    assert recording.one("eks:index:ManagedNodeGroup").input("version") == "1.36"


def test_private_only_endpoint():
    recording = run_program("dev", {"cluster": {"endpointPublicAccess": False, "deployFromInsideVpc": True}})
    eks = recording.one("eks:index:Cluster")
    assert eks.input("endpointPublicAccess") is False
    assert eks.input("publicAccessCidrs", None) is None


def test_managed_addons(dev):
    addons = {addon.input("addonName"): addon for addon in dev.of_type("aws:eks/addon:Addon")}
    assert set(addons) == {"vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent"}
    for addon in addons.values():
        assert addon.input("clusterName") == "karpenter-test"
        assert addon.input("resolveConflictsOnCreate") == "OVERWRITE"
    # pulumi-eks must not install its own copies of the same add-ons.
    eks = dev.one("eks:index:Cluster")
    assert eks.input("corednsAddonOptions.enabled") is False
    assert eks.input("kubeProxyAddonOptions.enabled") is False
    assert eks.input("useDefaultVpcCni") is True
    assert eks.input("bootstrapSelfManagedAddons") is False


def test_addon_order_around_the_nodes(dev):
    nodes = dev.one("eks:index:ManagedNodeGroup")
    addons = {addon.input("addonName"): addon for addon in dev.of_type("aws:eks/addon:Addon")}
    for name in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent"):
        assert dev.depends_on(nodes, addons[name]), name
    assert dev.depends_on(addons["coredns"], nodes)
    eks = dev.one("eks:index:Cluster")
    for addon in addons.values():
        assert dev.depends_on(addon, eks)


def _rules(recording, group, kind):
    return [
        rule
        for rule in recording.of_type(f"aws:vpc/securityGroup{kind}Rule:SecurityGroup{kind}Rule")
        if rule.input("securityGroupId") == group
    ]


def _allows_tcp(rule, port):
    if rule.input("ipProtocol") == "-1":
        return True
    return rule.input("ipProtocol") == "tcp" and rule.input("fromPort") <= port <= rule.input("toPort")


def test_node_security_group(dev):
    group = dev.one("aws:ec2/securityGroup:SecurityGroup", "cluster-node-sg")
    node_sg = dev.outputs["nodeSecurityGroupId"]
    assert group.input("tags")["karpenter.sh/discovery"] == "karpenter-test"
    # Only the EKS cluster security group may carry the kubernetes.io/cluster tag (one per ENI).
    assert not any(key.startswith("kubernetes.io/cluster/") for key in group.input("tags"))
    cluster_sg = dev.one("eks:index:Cluster").outputs["clusterSecurityGroupId"]
    ingress = _rules(dev, node_sg, "Ingress")
    from_nodes = [r for r in ingress if r.input("referencedSecurityGroupId") == node_sg]
    from_cluster = [r for r in ingress if r.input("referencedSecurityGroupId") == cluster_sg]
    assert from_nodes and all(r.input("ipProtocol") == "-1" for r in from_nodes)
    for port in WEBHOOK_AND_KUBELET_PORTS:
        assert any(_allows_tcp(rule, port) for rule in from_cluster), port
    egress = _rules(dev, node_sg, "Egress")
    assert [(r.input("cidrIpv4"), r.input("ipProtocol")) for r in egress] == [("0.0.0.0/0", "-1")]
    back = _rules(dev, cluster_sg, "Ingress")
    assert [r.input("referencedSecurityGroupId") for r in back] == [node_sg]
    assert dev.one("eks:index:Cluster").input("skipDefaultSecurityGroups") is True


def test_system_node_group(dev):
    nodes = dev.one("eks:index:ManagedNodeGroup")
    assert nodes.input("instanceTypes") == ["m5.large"]
    assert nodes.input("scalingConfig") == {"minSize": 2, "desiredSize": 2, "maxSize": 3}
    assert nodes.input("amiType") == "AL2023_x86_64_STANDARD"
    assert nodes.input("labels") == {"node-role": "system"}
    assert nodes.input("subnetIds") == dev.outputs["privateSubnetIds"]
    assert nodes.input("version") == dev.one("eks:index:Cluster").input("version") == "1.35"
    assert system_root_volume(dev)["volumeSize"] == 20
    # A reference to a remote component records no edge, so the wiring is asserted on the input.
    assert nodes.input("cluster").urn == dev.one("eks:index:Cluster").urn


def test_system_node_role_policies(dev):
    nodes = dev.one("eks:index:ManagedNodeGroup")
    role = dev.one("aws:iam/role:Role", "cluster-system-node-role")
    assert nodes.input("nodeRole").urn == role.urn
    attached = {
        attachment.input("policyArn")
        for attachment in dev.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if attachment.name.startswith("cluster-system-node-")
    }
    assert attached == {
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
    }
    for attachment in dev.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment"):
        if attachment.name.startswith("cluster-system-node-"):
            assert dev.depends_on(nodes, attachment)


def test_node_group_sizes_and_types_from_config():
    recording = run_program(
        "dev",
        {
            "nodeGroup": {
                "instanceTypes": ["m6i.large", "m5.large"],
                "minSize": 3,
                "desiredSize": 3,
                "maxSize": 6,
                "diskSize": 50,
                "labels": {"node-role": "system", "team": "platform"},
            }
        },
    )
    nodes = recording.one("eks:index:ManagedNodeGroup")
    assert nodes.input("instanceTypes") == ["m6i.large", "m5.large"]
    assert nodes.input("scalingConfig") == {"minSize": 3, "desiredSize": 3, "maxSize": 6}
    assert system_root_volume(recording)["volumeSize"] == 50
    assert nodes.input("labels") == {"node-role": "system", "team": "platform"}


LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def system_root_volume(recording) -> dict:
    (mapping,) = recording.one(LAUNCH_TEMPLATE, "cluster-system-nodes").input("blockDeviceMappings")
    assert mapping["deviceName"] == "/dev/xvda"
    return mapping["ebs"]


def test_the_system_nodes_answer_imds_one_hop_away(dev):
    # Pods are one hop past their node: they do not reach the node role's credentials.
    template = dev.one(LAUNCH_TEMPLATE, "cluster-system-nodes")
    assert template.input("metadataOptions") == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
    }
    nodes = dev.one("eks:index:ManagedNodeGroup")
    assert nodes.input("launchTemplate.id").startswith("lt-") and nodes.input("launchTemplate.version") == "1"
    assert template.urn in nodes.property_dependencies["launchTemplate"]
    assert dev.depends_on(nodes, template)
    # pulumi-eks would make a template of its own for these, with a hop limit this program does not set.
    for owned_by_the_template in ("enableIMDSv2", "diskSize", "userData", "amiId"):
        assert nodes.input(owned_by_the_template, None) is None, owned_by_the_template


def test_the_system_root_volume_is_encrypted_gp3(dev):
    volume = system_root_volume(dev)
    assert (volume["volumeType"], volume["encrypted"], volume["deleteOnTermination"]) == ("gp3", "true", "true")
    # EKS fills in the AMI and its user data from the node group's AMI type.
    template = dev.one(LAUNCH_TEMPLATE, "cluster-system-nodes")
    assert template.input("imageId", None) is None and template.input("userData", None) is None


def test_kubernetes_provider_uses_the_cluster_kubeconfig(dev):
    provider = dev.one("pulumi:providers:kubernetes")
    eks = dev.one("eks:index:Cluster")
    assert dev.depends_on(provider, eks, via=["dependency"])
    assert dev.depends_on(provider, dev.one("eks:index:ManagedNodeGroup"), via=["dependency"])
    kubeconfig = provider.input("kubeconfig")
    assert kubeconfig["clusters"][0]["cluster"]["server"] == dev.outputs["endpoint"]
    assert "--cluster-name" in kubeconfig["users"][0]["user"]["exec"]["args"]


def test_outputs(dev):
    expected = {
        "clusterName",
        "endpoint",
        "kubeconfig",
        "oidcProviderArn",
        "oidcIssuerUrl",
        "vpcId",
        "publicSubnetIds",
        "privateSubnetIds",
        "nodeGroupName",
        "nodeSecurityGroupId",
    }
    assert expected <= set(dev.outputs)
    assert dev.outputs["clusterName"] == "karpenter-test"
    assert dev.outputs["endpoint"].startswith("https://")
    assert dev.outputs["oidcProviderArn"].startswith("arn:aws:iam::123456789012:oidc-provider/oidc.eks.ap-northeast-1")
    assert dev.outputs["oidcIssuerUrl"].startswith("https://oidc.eks.")
    assert dev.outputs["nodeSecurityGroupId"].startswith("sg-")
    assert len(dev.outputs["publicSubnetIds"]) == 2


def test_kubeconfig_is_the_only_secret_output(dev):
    # With monitoring on (the dev stack), Grafana's admin password is the other one.
    assert "kubeconfig" in dev.secret_outputs
    assert dev.secret_outputs == {"kubeconfig", "grafanaAdminPassword"}


def test_cluster_is_destroyed_before_the_network(dev):
    eks = dev.one("eks:index:Cluster")
    vpc = dev.one("awsx:ec2:Vpc")
    assert dev.depends_on(eks, vpc)
    assert not dev.depends_on(vpc, eks)
    order = dev.deletion_order()
    assert order.index(eks) < order.index(vpc)


def test_secrets_are_not_encrypted_with_a_key_of_ours_by_default(dev):
    assert dev.one("eks:index:Cluster").input("encryptionConfigKeyArn", None) is None
    assert dev.of_type("aws:kms/key:Key") == []


def test_secrets_encryption_with_a_new_key():
    recording = run_program("dev", {"cluster": {"secretsEncryption": {"enabled": True}}})
    key = recording.one("aws:kms/key:Key")
    assert key.input("enableKeyRotation") is True
    eks = recording.one("eks:index:Cluster")
    assert eks.input("encryptionConfigKeyArn") == key.outputs["arn"]
    assert key.urn in eks.property_dependencies["encryptionConfigKeyArn"]
    assert recording.one("aws:kms/alias:Alias").input("name") == "alias/eks/karpenter-test-secrets"


def test_secrets_encryption_with_an_existing_key():
    arn = "arn:aws:kms:ap-northeast-1:111122223333:key/0f2c7a4e-8d1b-4c2a-9e3f-5a6b7c8d9e0f"
    recording = run_program("dev", {"cluster": {"secretsEncryption": {"enabled": True, "kmsKeyArn": arn}}})
    assert recording.one("eks:index:Cluster").input("encryptionConfigKeyArn") == arn
    assert recording.of_type("aws:kms/key:Key") == []


def test_every_component_registers_its_outputs(dev):
    components = [r for r in dev.resources if r.type.startswith("eks-autoscaling:")]
    assert len(components) >= 7
    for component in components:
        assert dev.component_outputs.get(component.urn), component


LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


def test_the_control_plane_log_group_is_the_stacks_own(dev):
    group = dev.one(LOG_GROUP)
    assert group.input("name") == "/aws/eks/karpenter-test/cluster"
    assert group.input("retentionInDays") == 90
    assert group.input("kmsKeyId", None) is None
    assert group.input("tags")["eks-autoscaling:cluster"] == "karpenter-test"
    # Made before the cluster, so EKS does not make its own; deleted after it.
    eks = dev.one("eks:index:Cluster")
    assert dev.depends_on(eks, group, via=["dependency"])
    order = dev.deletion_order()
    assert order.index(eks) < order.index(group)


def test_log_retention_and_key_follow_the_config():
    key = "arn:aws:kms:ap-northeast-1:111122223333:key/0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"
    recording = run_program("dev", {"cluster": {"logRetentionDays": 731, "logKmsKeyArn": key}})
    group = recording.one(LOG_GROUP)
    assert (group.input("retentionInDays"), group.input("kmsKeyId")) == (731, key)


def test_no_log_types_no_log_group():
    recording = run_program("dev", {"cluster": {"logTypes": []}})
    assert recording.of_type(LOG_GROUP) == []
    assert recording.one("eks:index:Cluster").input("enabledClusterLogTypes") == []


def test_the_prod_stack_keeps_a_year_of_logs_and_an_endpoint_for_its_operators():
    recording = run_program("prod")
    assert recording.one(LOG_GROUP).input("name") == "/aws/eks/autoscaling-prod/cluster"
    assert recording.one(LOG_GROUP).input("retentionInDays") == 365
    eks = recording.one("eks:index:Cluster")
    # Its first `up` runs from outside the VPC it creates: the public endpoint stays, for the
    # operator's addresses only (stood in for here).
    assert eks.input("endpointPublicAccess") is True
    assert eks.input("endpointPrivateAccess") is True
    assert eks.input("publicAccessCidrs") == ["192.0.0.9/32"]
    assert recording.stood_in == {"192.0.0.9/32": "<the operator's address: cluster.publicAccessCidrs>"}


def test_the_prod_stack_refuses_to_start_until_its_operator_sets_the_endpoint_cidrs():
    with pytest.raises(ProgramFailed) as failure:
        run_program("prod", operator_values=False)
    message = str(failure.value)
    assert "`cluster.publicAccessCidrs` is empty while `cluster.endpointPublicAccess` is true" in message
    assert "checkip.amazonaws.com" in message
    assert "pulumi config set --path 'eks-autoscaling:cluster.publicAccessCidrs[0]' <address>/32" in message
    # Before anything, the AWS provider included.
    assert failure.value.recording.resources == []
    text = (PROJECT_DIR / "Pulumi.prod.yaml").read_text()
    assert "publicAccessCidrs: []" in text and "--stack prod" in text


def test_the_prod_stack_starts_once_its_operator_has_set_them():
    recording = run_program("prod", {"cluster": {"publicAccessCidrs": ["52.94.0.0/22"]}}, operator_values=False)
    assert recording.one("eks:index:Cluster").input("publicAccessCidrs") == ["52.94.0.0/22"]
    assert recording.stood_in == {}


def test_a_private_endpoint_on_a_vpc_the_stack_creates_is_refused():
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"cluster": {"endpointPublicAccess": False}})
    message = str(failure.value)
    for fragment in (
        "`cluster.endpointPublicAccess` is false on a stack that builds its own VPC",
        "the first Helm release fails",
        "`make destroy` cannot drain",
        "switch to private in a second step",
        "docs/upgrades.md",
        "`cluster.deployFromInsideVpc: true`",
    ):
        assert fragment in message, message
    assert failure.value.recording.resources == []


def test_a_stack_that_deploys_from_inside_its_vpc_may_go_private():
    recording = run_program("dev", {"cluster": {"endpointPublicAccess": False, "deployFromInsideVpc": True}})
    eks = recording.one("eks:index:Cluster")
    assert eks.input("endpointPublicAccess") is False
    assert any("needs a route into the VPC" in warning for warning in recording.warnings)


def test_the_vpc_cni_enforces_network_policies(dev):
    (vpc_cni,) = [addon for addon in dev.of_type("aws:eks/addon:Addon") if addon.input("addonName") == "vpc-cni"]
    assert json.loads(vpc_cni.input("configurationValues")) == {"enableNetworkPolicy": "true"}
    # No add-on version is pinned: EKS installs its default for the cluster's version, far past
    # v1.14, the first with the network policy agent.
    assert vpc_cni.input("addonVersion", None) is None
    for addon in dev.of_type("aws:eks/addon:Addon"):
        if addon.input("addonName") not in ("vpc-cni", "coredns"):
            assert addon.input("configurationValues", None) is None, addon


def test_coredns_tolerates_the_system_nodes_taint(dev):
    (coredns,) = [addon for addon in dev.of_type("aws:eks/addon:Addon") if addon.input("addonName") == "coredns"]
    assert json.loads(coredns.input("configurationValues")) == {
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
    }


def test_pulumi_eks_signs_in_as_the_aws_provider_does_too():
    # pulumi-eks's own Kubernetes provider (inside its component) takes the same profile and role.
    role = "arn:aws:iam::111122223333:role/deployer"
    recording = run_program("dev", {"aws:profile": "work", "aws:assumeRoles": [{"roleArn": role}]})
    eks = recording.one("eks:index:Cluster")
    assert eks.input("providerCredentialOpts") == {"profileName": "work", "roleArn": role}


def test_without_aws_settings_the_kubeconfig_uses_the_environment(dev):
    assert dev.one("eks:index:Cluster").input("providerCredentialOpts", None) is None


REFUSED_ENDPOINT_CIDRS = [
    ("192.0.2.0/24", "TEST-NET-1"),
    ("198.51.100.0/24", "TEST-NET-2"),
    ("203.0.113.0/24", "TEST-NET-3"),
    ("203.0.113.7/32", "TEST-NET-3"),
    ("0.0.0.0/8", "'this network'"),
    ("127.0.0.1/32", "loopback"),
    ("169.254.169.254/32", "link-local"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("255.255.255.255/32", "reserved"),
    ("10.0.0.0/16", "RFC 1918"),
    ("172.16.0.0/12", "RFC 1918"),
    ("192.168.1.0/24", "RFC 1918"),
    ("100.64.0.0/10", "carrier-grade NAT"),
]


@pytest.mark.parametrize("cidr, named", REFUSED_ENDPOINT_CIDRS)
def test_endpoint_cidrs_that_admit_nobody_are_refused(cidr, named):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"cluster": {"publicAccessCidrs": ["52.94.0.0/22", cidr]}})
    message = str(failure.value)
    assert "`cluster.publicAccessCidrs`" in message and repr(cidr) in message and named in message
    assert "/32" in message and "endpointPublicAccess to false" in message
    assert failure.value.recording.resources == []


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "52.94.0.0/22", "1.1.1.1/32", "192.0.0.0/16", "198.0.0.0/8"])
def test_public_endpoint_cidrs_are_accepted(cidr):
    config = parse_stack_config(
        {"aws:region": "ap-northeast-1", "eks-autoscaling:cluster": json.dumps({"publicAccessCidrs": [cidr]})}
    )
    assert config.cluster.public_access_cidrs == (cidr,)


def _not_public(address: ipaddress.IPv4Address) -> bool:
    """Python's ipaddress registry: not globally reachable, multicast, or reserved."""
    return not address.is_global or address.is_multicast or address.is_reserved


def test_the_refused_ranges_are_the_ones_python_knows_as_not_public():
    for block, _ in NON_PUBLIC_RANGES:
        network = ipaddress.IPv4Network(block)
        assert _not_public(network.network_address) and _not_public(network.broadcast_address), block
    # And addresses of each kind Python's registry knows, sampled, are refused.
    for address in (
        "0.1.2.3",
        "10.9.9.9",
        "100.100.0.1",
        "127.0.0.1",
        "169.254.0.1",
        "172.31.0.1",
        "192.0.0.1",
        "192.0.2.1",
        "192.168.0.1",
        "198.18.0.1",
        "198.51.100.1",
        "203.0.113.1",
        "224.0.0.1",
        "240.0.0.1",
    ):
        assert _not_public(ipaddress.IPv4Address(address)), address
        assert non_public_range(ipaddress.IPv4Network(f"{address}/32")) is not None, address
    assert non_public_range(ipaddress.IPv4Network("52.94.0.0/22")) is None
