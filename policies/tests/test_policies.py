"""Each policy of the pack, called with crafted resources: one that breaks it, one that complies."""

from __future__ import annotations

import copy
import json

import pytest
from policy_calls import validate
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

EKS_COMPONENT = "eks:index:Cluster"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
ROLE = "aws:iam/role:Role"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"

ISSUER = "oidc.eks.eu-west-3.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
PROVIDER_ARN = f"arn:aws:iam::111122223333:oidc-provider/{ISSUER}"
KEY_ARN = "arn:aws:kms:eu-west-3:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"

# A pulumi-eks component as the program passes it: private access on, public endpoint
# limited to a documentation range, the baseline logs, no public node addresses.
COMPONENT = {
    "name": "demo",
    "endpointPrivateAccess": True,
    "endpointPublicAccess": True,
    "publicAccessCidrs": ["203.0.113.0/24"],
    "enabledClusterLogTypes": ["api", "audit", "authenticator"],
    "nodeAssociatePublicIpAddress": False,
    "tags": {"eks-autoscaling:cluster": "demo"},
}
# The aws.eks.Cluster pulumi-eks creates from those inputs in a real run.
CLUSTER = {
    "name": "demo",
    "vpcConfig": {
        "endpointPrivateAccess": True,
        "endpointPublicAccess": True,
        "publicAccessCidrs": ["203.0.113.0/24"],
        "subnetIds": ["subnet-1", "subnet-2"],
    },
    "enabledClusterLogTypes": ["api", "audit", "authenticator"],
    "tags": {"Name": "demo-eksCluster", "eks-autoscaling:cluster": "demo"},
}


DELETE = object()


def changed(base: dict, **changes) -> dict:
    """A deep copy of `base` with `a__b=value` setting base["a"]["b"] (DELETE removes the key)."""
    result = copy.deepcopy(base)
    for path, value in changes.items():
        target = result
        *parents, last = path.split("__")
        for key in parents:
            target = target.setdefault(key, {})
        if value is DELETE:
            target.pop(last, None)
        else:
            target[last] = value
    return result


def irsa_trust(condition: dict) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": PROVIDER_ARN},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": condition,
                }
            ],
        }
    )


def pod_identity_trust(principal: dict, actions: list) -> str:
    return json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": principal, "Action": actions}]}
    )


PINNED = {
    "StringEquals": {
        f"{ISSUER}:sub": "system:serviceaccount:kube-system:karpenter",
        f"{ISSUER}:aud": "sts.amazonaws.com",
    }
}


# eks-cluster-endpoint-restricted

ENDPOINT = "eks-cluster-endpoint-restricted"


def test_endpoint_limited_to_own_addresses_passes():
    assert validate(ENDPOINT, EKS_COMPONENT, COMPONENT) == []
    assert validate(ENDPOINT, EKS_CLUSTER, CLUSTER) == []


def test_endpoint_open_to_the_internet_is_refused():
    (violation,) = validate(ENDPOINT, EKS_COMPONENT, changed(COMPONENT, publicAccessCidrs=["0.0.0.0/0"]))
    assert "open to 0.0.0.0/0" in violation and "eks-autoscaling:cluster.acknowledgeOpenEndpoint=true" in violation


def test_an_aws_cluster_without_cidrs_is_open_by_default():
    (violation,) = validate(ENDPOINT, EKS_CLUSTER, changed(CLUSTER, vpcConfig__publicAccessCidrs=DELETE))
    assert "0.0.0.0/0 (default)" in violation


def test_an_acknowledged_open_endpoint_passes_unless_the_pack_refuses_it():
    acknowledged = changed(
        COMPONENT,
        publicAccessCidrs=["0.0.0.0/0"],
        clusterTags={"eks-autoscaling:cluster.acknowledgeOpenEndpoint": "true"},
    )
    assert validate(ENDPOINT, EKS_COMPONENT, acknowledged) == []
    refused = validate(ENDPOINT, EKS_COMPONENT, acknowledged, {"allowAcknowledgedOpenEndpoint": False})
    assert len(refused) == 1 and "refuses acknowledged open endpoints" in refused[0]
    aws_acknowledged = changed(CLUSTER, vpcConfig__publicAccessCidrs=["0.0.0.0/0"])
    aws_acknowledged["tags"]["eks-autoscaling:cluster.acknowledgeOpenEndpoint"] = "true"
    assert validate(ENDPOINT, EKS_CLUSTER, aws_acknowledged) == []


def test_a_public_endpoint_needs_private_access():
    (violation,) = validate(ENDPOINT, EKS_CLUSTER, changed(CLUSTER, vpcConfig__endpointPrivateAccess=False))
    assert "without private access" in violation


def test_a_private_endpoint_passes_whatever_its_cidrs():
    private = changed(COMPONENT, endpointPublicAccess=False, publicAccessCidrs=DELETE)
    assert validate(ENDPOINT, EKS_COMPONENT, private) == []


def test_a_component_whose_inputs_are_not_visible_is_left_to_its_children():
    assert validate(ENDPOINT, EKS_COMPONENT, {}) == []


def test_other_resource_types_are_not_judged():
    assert validate(ENDPOINT, "aws:s3/bucket:Bucket", {"publicAccessCidrs": ["0.0.0.0/0"]}) == []


# eks-cluster-audit-logging-enabled

AUDIT = "eks-cluster-audit-logging-enabled"


def test_audit_api_and_authenticator_logs_pass():
    assert validate(AUDIT, EKS_COMPONENT, COMPONENT) == []
    assert validate(AUDIT, EKS_CLUSTER, CLUSTER) == []


def test_missing_audit_log_is_refused():
    (violation,) = validate(AUDIT, EKS_COMPONENT, changed(COMPONENT, enabledClusterLogTypes=["api", "authenticator"]))
    assert "control plane logs audit are not enabled" in violation


def test_a_cluster_without_logs_is_refused():
    (violation,) = validate(AUDIT, EKS_CLUSTER, changed(CLUSTER, enabledClusterLogTypes=DELETE))
    assert "api, audit, authenticator are not enabled" in violation


def test_the_required_log_types_are_configurable():
    (violation,) = validate(AUDIT, EKS_CLUSTER, CLUSTER, {"requiredLogTypes": ["audit", "scheduler"]})
    assert "scheduler" in violation and "audit" not in violation.split("are not enabled")[0]


# iam-service-account-trust-scoped

TRUST = "iam-service-account-trust-scoped"


def test_irsa_trust_with_sub_and_aud_passes():
    assert validate(TRUST, ROLE, {"assumeRolePolicy": irsa_trust(PINNED)}) == []


def test_irsa_trust_without_aud_is_refused():
    condition = {"StringEquals": {f"{ISSUER}:sub": "system:serviceaccount:kube-system:karpenter"}}
    (violation,) = validate(TRUST, ROLE, {"assumeRolePolicy": irsa_trust(condition)})
    assert "statement 0" in violation and "<issuer>:aud" in violation


def test_irsa_trust_for_any_service_account_is_refused():
    condition = {"StringLike": {f"{ISSUER}:sub": "system:serviceaccount:*", f"{ISSUER}:aud": "sts.amazonaws.com"}}
    assert validate(TRUST, ROLE, {"assumeRolePolicy": irsa_trust(condition)}) != []


def test_pod_identity_trust_passes():
    trust = pod_identity_trust({"Service": "pods.eks.amazonaws.com"}, ["sts:AssumeRole", "sts:TagSession"])
    assert validate(TRUST, ROLE, {"assumeRolePolicy": trust}) == []


def test_pod_identity_trust_shared_with_another_principal_is_refused():
    trust = pod_identity_trust(
        {"Service": ["pods.eks.amazonaws.com", "ec2.amazonaws.com"]}, ["sts:AssumeRole", "sts:TagSession"]
    )
    (violation,) = validate(TRUST, ROLE, {"assumeRolePolicy": trust})
    assert "pods.eks.amazonaws.com alone" in violation


def test_pod_identity_trust_with_extra_actions_is_refused():
    trust = pod_identity_trust({"Service": "pods.eks.amazonaws.com"}, ["sts:*"])
    (violation,) = validate(TRUST, ROLE, {"assumeRolePolicy": trust})
    assert "only sts:AssumeRole and sts:TagSession" in violation


def test_roles_that_trust_no_service_account_are_not_judged():
    node_trust = pod_identity_trust({"Service": "ec2.amazonaws.com"}, ["sts:AssumeRole"])
    assert validate(TRUST, ROLE, {"assumeRolePolicy": node_trust}) == []


def test_a_trust_given_as_an_object_is_read_too():
    document = json.loads(irsa_trust({"StringEquals": {f"{ISSUER}:sub": "system:serviceaccount:a:b"}}))
    assert validate(TRUST, ROLE, {"assumeRolePolicy": document}) != []


def test_a_trust_that_is_not_json_is_refused():
    (violation,) = validate(TRUST, ROLE, {"assumeRolePolicy": "{not json"})
    assert "not JSON" in violation


def test_a_trust_unknown_during_preview_is_not_judged_on_a_guess():
    with pytest.raises(UnknownValueError):
        validate(TRUST, ROLE, {"assumeRolePolicy": UNKNOWN_STRING_VALUE})


# eks-nodes-require-imdsv2

IMDS = "eks-nodes-require-imdsv2"


def test_managed_node_group_with_imdsv2_passes():
    assert validate(IMDS, MANAGED_NODE_GROUP, {"enableIMDSv2": True, "instanceTypes": ["m5.large"]}) == []


def test_managed_node_group_without_imdsv2_is_refused():
    (violation,) = validate(IMDS, MANAGED_NODE_GROUP, {"instanceTypes": ["m5.large"]})
    assert "enableIMDSv2 is not true" in violation


def test_a_launch_template_must_require_tokens():
    required = {"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1, "httpEndpoint": "enabled"}}
    assert validate(IMDS, LAUNCH_TEMPLATE, required) == []
    (violation,) = validate(IMDS, LAUNCH_TEMPLATE, changed(required, metadataOptions__httpTokens="optional"))
    assert "'optional', not 'required'" in violation
    assert validate(IMDS, LAUNCH_TEMPLATE, {"imageId": "ami-1"}) != []


def test_a_launch_template_keeps_pods_from_the_metadata_service():
    two_hops = {"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2}}
    (violation,) = validate(IMDS, LAUNCH_TEMPLATE, two_hops)
    assert "httpPutResponseHopLimit is 2" in violation
    # Unset, EC2 answers one hop away.
    assert validate(IMDS, LAUNCH_TEMPLATE, {"metadataOptions": {"httpTokens": "required"}}) == []


def test_a_node_group_needs_a_launch_template():
    assert validate(IMDS, NODE_GROUP, {"launchTemplate": {"id": "lt-1", "version": "1"}}) == []
    (violation,) = validate(IMDS, NODE_GROUP, {"clusterName": "demo"})
    assert "no launch template" in violation


def test_ec2nodeclass_defaults_and_explicit_settings():
    assert validate(IMDS, EC2_NODE_CLASS, {"spec": {"role": "nodes"}}) == []
    hardened = {"spec": {"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1}}}
    assert validate(IMDS, EC2_NODE_CLASS, hardened) == []
    violations = validate(
        IMDS, EC2_NODE_CLASS, {"spec": {"metadataOptions": {"httpTokens": "optional", "httpPutResponseHopLimit": 2}}}
    )
    assert len(violations) == 2
    assert "httpTokens is 'optional'" in violations[0] and "httpPutResponseHopLimit is 2" in violations[1]


# eks-nodes-no-public-ip

PUBLIC_IP = "eks-nodes-no-public-ip"


def test_cluster_nodes_without_public_addresses_pass():
    assert validate(PUBLIC_IP, EKS_COMPONENT, COMPONENT) == []
    (violation,) = validate(PUBLIC_IP, EKS_COMPONENT, changed(COMPONENT, nodeAssociatePublicIpAddress=True))
    assert "nodeAssociatePublicIpAddress is true" in violation


def test_launch_template_interfaces_get_no_public_address():
    assert validate(PUBLIC_IP, LAUNCH_TEMPLATE, {"networkInterfaces": [{"associatePublicIpAddress": "false"}]}) == []
    (violation,) = validate(PUBLIC_IP, LAUNCH_TEMPLATE, {"networkInterfaces": [{"associatePublicIpAddress": "true"}]})
    assert "networkInterfaces[0]" in violation


def test_ec2nodeclass_gets_no_public_address():
    assert validate(PUBLIC_IP, EC2_NODE_CLASS, {"spec": {"role": "nodes"}}) == []
    (violation,) = validate(PUBLIC_IP, EC2_NODE_CLASS, {"spec": {"associatePublicIPAddress": True}})
    assert "Karpenter's nodes would get public IP addresses" in violation


# eks-cluster-secrets-encrypted-with-kms

SECRETS = "eks-cluster-secrets-encrypted-with-kms"
KMS_TAG = {"eks-autoscaling:cluster.secretsEncryption.enabled": "true"}


def test_a_requested_key_that_is_passed_passes():
    requested = changed(COMPONENT, clusterTags=KMS_TAG, encryptionConfigKeyArn=KEY_ARN)
    assert validate(SECRETS, EKS_COMPONENT, requested) == []
    aws_requested = changed(CLUSTER, encryptionConfig={"provider": {"keyArn": KEY_ARN}, "resources": ["secrets"]})
    aws_requested["tags"].update(KMS_TAG)
    assert validate(SECRETS, EKS_CLUSTER, aws_requested) == []


def test_a_requested_key_that_is_missing_is_refused():
    (violation,) = validate(SECRETS, EKS_COMPONENT, changed(COMPONENT, clusterTags=KMS_TAG))
    assert "not encrypted with a KMS key although the cluster carries" in violation
    aws_requested = copy.deepcopy(CLUSTER)
    aws_requested["tags"].update(KMS_TAG)
    assert validate(SECRETS, EKS_CLUSTER, aws_requested) != []


def test_no_key_is_fine_unless_requested_or_required_by_the_pack():
    assert validate(SECRETS, EKS_COMPONENT, COMPONENT) == []
    (violation,) = validate(SECRETS, EKS_COMPONENT, COMPONENT, {"requireSecretsEncryption": True})
    assert "the pack's configuration requires it" in violation


def test_a_key_must_be_a_kms_arn_covering_secrets():
    (violation,) = validate(SECRETS, EKS_COMPONENT, changed(COMPONENT, encryptionConfigKeyArn="my-key"))
    assert "is not a KMS key or alias ARN" in violation
    (violation,) = validate(
        SECRETS, EKS_CLUSTER, changed(CLUSTER, encryptionConfig={"provider": {"keyArn": KEY_ARN}, "resources": []})
    )
    assert "not secrets" in violation


# ingress-not-open-to-internet

OPEN_INGRESS = "ingress-not-open-to-internet"
INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"


def _ingress(**annotations):
    return {"metadata": {"name": "test-app", "annotations": dict(annotations)}}


def test_an_open_internet_facing_alb_needs_the_acknowledgement():
    scheme = {"alb.ingress.kubernetes.io/scheme": "internet-facing"}
    (violation,) = validate(OPEN_INGRESS, INGRESS, _ingress(**scheme))
    assert "open to 0.0.0.0/0" in violation and "unset" in violation
    assert validate(
        OPEN_INGRESS, INGRESS, _ingress(**scheme, **{"alb.ingress.kubernetes.io/inbound-cidrs": "0.0.0.0/0"})
    )
    acknowledged = {**scheme, "eks-autoscaling/app.ingress.acknowledgeOpenToInternet": "true"}
    assert validate(OPEN_INGRESS, INGRESS, _ingress(**acknowledged)) == []
    limited = {**scheme, "alb.ingress.kubernetes.io/inbound-cidrs": "198.51.100.7/32"}
    assert validate(OPEN_INGRESS, INGRESS, _ingress(**limited)) == []
    # Without a scheme the controller makes an internal ALB.
    assert validate(OPEN_INGRESS, INGRESS, _ingress()) == []
