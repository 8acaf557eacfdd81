"""The rules of the policy pack as plain functions over `(resource_type, props, config)`.

Each rule returns the violations it finds as messages; an empty list means the resource
complies or the rule does not apply to it. Nothing here imports pulumi_policy, so the same
functions run inside the pack (eks_autoscaling_policies.py wraps them) and, in the project's
own environment, over the resources the offline evaluation records.

Two views of the same infrastructure reach these rules. The offline evaluation records the
inputs of pulumi-eks components (`eks:index:Cluster`, `eks:index:ManagedNodeGroup`). In a
real `pulumi up`, pulumi-eks builds those components inside its provider process, and the
policy engine sees their children instead: `aws:eks/cluster:Cluster`,
`aws:ec2/launchTemplate:LaunchTemplate`, `aws:eks/nodeGroup:NodeGroup`. Every rule therefore
checks both; a component whose inputs are not visible (empty props) is left to its children.

Property names are the wire names both sides use (camelCase).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from security.iam_checks import service_account_trust_problems

EKS_COMPONENT = "eks:index:Cluster"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
MANAGED_NODE_GROUP_COMPONENT = "eks:index:ManagedNodeGroup"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
IAM_ROLE = "aws:iam/role:Role"
INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"

# Cluster tags by which the program passes two decisions of its stack configuration on to the
# rules, each named after the setting it carries and set to "true" when that setting is true:
# an endpoint open to the internet that the stack acknowledges, and secrets encryption with a
# KMS key that the stack asks for. They stay visible on the cluster in AWS as well.
OPEN_ENDPOINT_TAG = "eks-autoscaling:cluster.acknowledgeOpenEndpoint"
SECRETS_ENCRYPTION_TAG = "eks-autoscaling:cluster.secretsEncryption.enabled"
TAG_TRUE = "true"
# The same for an Ingress, as an annotation: an internet-facing ALB open to every address that
# the stack accepts (app.ingress.acknowledgeOpenToInternet).
OPEN_TO_INTERNET_ANNOTATION = "eks-autoscaling/app.ingress.acknowledgeOpenToInternet"
# The AWS Load Balancer Controller's annotations. Without them it makes an internal ALB, and an
# ALB that admits 0.0.0.0/0 (and ::/0 when dual-stack).
ALB_SCHEME = "alb.ingress.kubernetes.io/scheme"
ALB_INBOUND_CIDRS = "alb.ingress.kubernetes.io/inbound-cidrs"

# EKS best practices ("Enable audit logs"): at least these control plane log types.
DEFAULT_REQUIRED_LOG_TYPES = ("api", "audit", "authenticator")
KMS_KEY_OR_ALIAS_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/\S+$")

Check = Callable[[str, Mapping[str, Any], Mapping[str, Any]], list[str]]


@dataclass(frozen=True)
class Rule:
    """name: the policy's name in the pack; check(resource_type, props, config) -> violations.

    config_schema: JSON-schema properties of the rule's pack configuration, each with the
    default the rule uses when the pack is run without configuration.
    """

    name: str
    description: str
    resource_types: tuple[str, ...]
    check: Check
    remediation: str
    config_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def defaults(self) -> dict[str, Any]:
        return {key: schema["default"] for key, schema in self.config_schema.items()}

    def violations(
        self, resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any] | None = None
    ) -> list[str]:
        if resource_type not in self.resource_types:
            return []
        return self.check(resource_type, props, {**self.defaults(), **dict(config or {})})


# The endpoint


def endpoint_restricted(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """A public endpoint needs private access too, and is open to 0.0.0.0/0 only if acknowledged."""
    if resource_type == EKS_COMPONENT:
        if not props:
            return []
        public = props.get("endpointPublicAccess", True)
        private = props.get("endpointPrivateAccess", False)
        cidrs = props.get("publicAccessCidrs")
    else:
        vpc = _mapping(props.get("vpcConfig"))
        public = vpc.get("endpointPublicAccess", True)
        private = vpc.get("endpointPrivateAccess", False)
        cidrs = vpc.get("publicAccessCidrs")
    if public is False:
        return []
    violations = []
    if private is not True:
        violations.append(
            "the API endpoint is public without private access: nodes in private subnets would reach it through "
            "NAT and the internet; set endpointPrivateAccess to true"
        )
    # EKS opens a public endpoint to 0.0.0.0/0 when no CIDRs are given.
    open_cidrs = [c for c in _strings(cidrs) if _is_whole_internet(c)] if _strings(cidrs) else ["0.0.0.0/0 (default)"]
    if open_cidrs:
        acknowledged = _cluster_tags(resource_type, props).get(OPEN_ENDPOINT_TAG) == TAG_TRUE
        if not (acknowledged and config["allowAcknowledgedOpenEndpoint"]):
            reason = (
                "the pack's configuration refuses acknowledged open endpoints"
                if acknowledged
                else f"the cluster does not carry the tag {OPEN_ENDPOINT_TAG}={TAG_TRUE}"
            )
            violations.append(
                f"the public API endpoint is open to {', '.join(open_cidrs)} and {reason}; list your own CIDRs in "
                "cluster.publicAccessCidrs, or set cluster.acknowledgeOpenEndpoint: true for a short-lived cluster"
            )
    return violations


# Audit logging


def audit_logging_enabled(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if resource_type == EKS_COMPONENT and not props:
        return []
    enabled = set(_strings(props.get("enabledClusterLogTypes")))
    missing = [log_type for log_type in config["requiredLogTypes"] if log_type not in enabled]
    if missing:
        return [
            f"control plane logs {', '.join(missing)} are not enabled (enabled: {', '.join(sorted(enabled)) or 'none'}); "
            "add them to cluster.logTypes"
        ]
    return []


# Service-account trust


def service_account_trust_scoped(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    text = props.get("assumeRolePolicy")
    if text is None:
        return []
    try:
        document = json.loads(text) if isinstance(text, str) else _plain(text)
    except json.JSONDecodeError as error:
        return [f"assumeRolePolicy is not JSON: {error}"]
    if not isinstance(document, Mapping):
        return ["assumeRolePolicy is not a policy document (a JSON object)"]
    return service_account_trust_problems(document)


# IMDSv2


def nodes_require_imdsv2(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if resource_type == MANAGED_NODE_GROUP_COMPONENT:
        # A custom launch template excludes enableIMDSv2; the template is checked on its own.
        if not props or props.get("launchTemplate") is not None:
            return []
        if props.get("enableIMDSv2") is not True:
            return ["enableIMDSv2 is not true: the node group's launch template would not require IMDSv2 tokens"]
        return []
    if resource_type == NODE_GROUP:
        if props.get("launchTemplate") is None:
            return [
                "the managed node group has no launch template, so its instances take the AMI's metadata defaults; "
                "give it one that requires IMDSv2 (pulumi-eks: enableIMDSv2)"
            ]
        return []
    if resource_type == LAUNCH_TEMPLATE:
        metadata = _mapping(props.get("metadataOptions"))
        tokens = metadata.get("httpTokens")
        found = []
        if tokens != "required":
            found.append(f"metadataOptions.httpTokens is {tokens!r}, not 'required': instances would accept IMDSv1")
        # Unset, EC2 answers one hop away; more lets a pod reach the node role's credentials.
        template_hops = metadata.get("httpPutResponseHopLimit", 1)
        if not isinstance(template_hops, (int, float)) or template_hops > 1:
            found.append(
                f"metadataOptions.httpPutResponseHopLimit is {template_hops!r}; 1 keeps pods from the node's IMDS "
                "credentials"
            )
        return found
    # EC2NodeClass: Karpenter defaults to httpTokens required and a hop limit of 1, which keeps
    # pods (one hop further) away from the node role's credentials.
    options = _mapping(_mapping(props.get("spec")).get("metadataOptions"))
    violations = []
    if options.get("httpTokens", "required") != "required":
        violations.append(f"spec.metadataOptions.httpTokens is {options['httpTokens']!r}, not 'required'")
    hop_limit = options.get("httpPutResponseHopLimit", 1)
    if not isinstance(hop_limit, (int, float)) or hop_limit > 1:
        violations.append(
            f"spec.metadataOptions.httpPutResponseHopLimit is {hop_limit!r}; 1 keeps pods from the node's IMDS credentials"
        )
    return violations


# Ingress


def ingress_not_open_to_internet(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """An internet-facing ALB admits only listed addresses, unless the stack accepts it open to all."""
    annotations = _mapping(_mapping(props.get("metadata")).get("annotations"))
    if annotations.get(ALB_SCHEME) != "internet-facing":
        return []
    cidrs = [cidr.strip() for cidr in str(annotations.get(ALB_INBOUND_CIDRS, "0.0.0.0/0")).split(",")]
    open_to = [cidr for cidr in cidrs if _is_whole_internet(cidr)]
    if not open_to or annotations.get(OPEN_TO_INTERNET_ANNOTATION) == TAG_TRUE:
        return []
    return [
        f"the Ingress makes an internet-facing ALB open to {', '.join(open_to)} (annotation {ALB_INBOUND_CIDRS} "
        f"{'unset' if ALB_INBOUND_CIDRS not in annotations else repr(annotations[ALB_INBOUND_CIDRS])}) without the "
        f"annotation {OPEN_TO_INTERNET_ANNOTATION}=true"
    ]


# Public IPs


def nodes_without_public_ips(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if resource_type == EKS_COMPONENT:
        if props.get("nodeAssociatePublicIpAddress") is True:
            return ["nodeAssociatePublicIpAddress is true: nodes would get public IP addresses"]
        return []
    if resource_type == LAUNCH_TEMPLATE:
        return [
            f"networkInterfaces[{index}].associatePublicIpAddress is true: instances would get public IP addresses"
            for index, interface in enumerate(_sequence(props.get("networkInterfaces")))
            if str(_mapping(interface).get("associatePublicIpAddress")).lower() == "true"
        ]
    if _mapping(props.get("spec")).get("associatePublicIPAddress") is True:
        return ["spec.associatePublicIPAddress is true: Karpenter's nodes would get public IP addresses"]
    return []


# Secrets encryption


def secrets_encrypted_with_kms(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if resource_type == EKS_COMPONENT:
        if not props:
            return []
        key_arn = props.get("encryptionConfigKeyArn")
        resources = ["secrets"] if key_arn is not None else []
    else:
        encryption = props.get("encryptionConfig")
        # One block; accepted as a one-item list too, the shape of the underlying MaxItems=1 list.
        if isinstance(encryption, Sequence) and not isinstance(encryption, str):
            encryption = encryption[0] if encryption else None
        encryption = _mapping(encryption)
        key_arn = _mapping(encryption.get("provider")).get("keyArn")
        resources = _strings(encryption.get("resources"))
    requested = _cluster_tags(resource_type, props).get(SECRETS_ENCRYPTION_TAG) == TAG_TRUE
    if key_arn is None:
        if requested or config["requireSecretsEncryption"]:
            why = (
                f"the cluster carries {SECRETS_ENCRYPTION_TAG}={TAG_TRUE}"
                if requested
                else "the pack's configuration requires it"
            )
            return [f"secrets are not encrypted with a KMS key although {why}; pass the key as encryptionConfigKeyArn"]
        return []
    violations = []
    if not isinstance(key_arn, str) or not KMS_KEY_OR_ALIAS_ARN.match(key_arn):
        violations.append(f"the secrets encryption key {key_arn!r} is not a KMS key or alias ARN")
    if "secrets" not in resources:
        violations.append(f"the encryption config covers {resources or 'no resources'}, not secrets")
    return violations


RULES: tuple[Rule, ...] = (
    Rule(
        name="eks-cluster-endpoint-restricted",
        description=(
            "The EKS API endpoint is private, or public with private access on and open to 0.0.0.0/0 only "
            "when the stack acknowledges it."
        ),
        resource_types=(EKS_COMPONENT, EKS_CLUSTER),
        check=endpoint_restricted,
        remediation=(
            "List the addresses that may reach the API in cluster.publicAccessCidrs, or set "
            "cluster.endpointPublicAccess: false. A short-lived test cluster may keep 0.0.0.0/0 with "
            "cluster.acknowledgeOpenEndpoint: true."
        ),
        config_schema={
            "allowAcknowledgedOpenEndpoint": {
                "type": "boolean",
                "default": True,
                "description": f"Accept an open endpoint on a cluster tagged {OPEN_ENDPOINT_TAG}={TAG_TRUE}.",
            }
        },
    ),
    Rule(
        name="eks-cluster-audit-logging-enabled",
        description="The EKS control plane sends its audit, API and authenticator logs to CloudWatch.",
        resource_types=(EKS_COMPONENT, EKS_CLUSTER),
        check=audit_logging_enabled,
        remediation="Add the missing types to cluster.logTypes.",
        config_schema={
            "requiredLogTypes": {
                "type": "array",
                "items": {
                    "type": "string",
                    "enum": ["api", "audit", "authenticator", "controllerManager", "scheduler"],
                },
                "default": list(DEFAULT_REQUIRED_LOG_TYPES),
                "description": "Control plane log types every cluster must enable.",
            }
        },
    ),
    Rule(
        name="iam-service-account-trust-scoped",
        description=(
            "A role for a Kubernetes service account trusts one service account through IRSA (sub and aud "
            "conditions) or pods.eks.amazonaws.com alone (Pod Identity)."
        ),
        resource_types=(IAM_ROLE,),
        check=service_account_trust_scoped,
        remediation="Build the trust with iam.trust.irsa_trust_policy or iam.trust.pod_identity_trust_policy.",
    ),
    Rule(
        name="eks-nodes-require-imdsv2",
        description="Every node (managed node group and Karpenter's EC2NodeClass) requires IMDSv2 tokens.",
        resource_types=(MANAGED_NODE_GROUP_COMPONENT, NODE_GROUP, LAUNCH_TEMPLATE, EC2_NODE_CLASS),
        check=nodes_require_imdsv2,
        remediation=(
            "Keep enable_imd_sv2=True on the managed node group, or give it a launch template with "
            "httpTokens: required and httpPutResponseHopLimit: 1, and leave the EC2NodeClass's metadataOptions at "
            "httpTokens: required, httpPutResponseHopLimit: 1."
        ),
    ),
    Rule(
        name="ingress-not-open-to-internet",
        description=(
            "An Ingress that makes an internet-facing ALB limits who reaches it (inbound-cidrs), unless its stack "
            "accepts an ALB open to every address."
        ),
        resource_types=(INGRESS,),
        check=ingress_not_open_to_internet,
        remediation=(
            "Set app.ingress.inboundCidrs to the addresses that need the app, or app.ingress.scheme: internal, or "
            "deployTestApp: false; or accept it with app.ingress.acknowledgeOpenToInternet: true."
        ),
    ),
    Rule(
        name="eks-nodes-no-public-ip",
        description="Nodes get no public IP addresses (cluster node settings, launch templates, EC2NodeClass).",
        resource_types=(EKS_COMPONENT, LAUNCH_TEMPLATE, EC2_NODE_CLASS),
        check=nodes_without_public_ips,
        remediation="Keep nodes in private subnets without public addresses; the ALB is the only public entry.",
    ),
    Rule(
        name="eks-cluster-secrets-encrypted-with-kms",
        description=(
            "Kubernetes secrets are envelope-encrypted with a KMS key when the stack asks for it (or the pack "
            "requires it), and a configured key is a KMS key that covers secrets."
        ),
        resource_types=(EKS_COMPONENT, EKS_CLUSTER),
        check=secrets_encrypted_with_kms,
        remediation="Set cluster.secretsEncryption.enabled (and optionally kmsKeyArn) in the stack configuration.",
        config_schema={
            "requireSecretsEncryption": {
                "type": "boolean",
                "default": False,
                "description": "Require a KMS key on every cluster, whatever its stack decides.",
            }
        },
    ),
)


def violations_of(
    resource_type: str, props: Mapping[str, Any], config: Mapping[str, Mapping[str, Any]] | None = None
) -> list[tuple[str, str]]:
    """(rule name, message) for every rule the resource breaks; config maps rule names to their settings."""
    config = config or {}
    return [
        (rule.name, message)
        for rule in RULES
        for message in rule.violations(resource_type, props, config.get(rule.name))
    ]


def _cluster_tags(resource_type: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """The tags the EKS cluster gets: pulumi-eks merges `clusterTags` and `tags` into the cluster's tags."""
    if resource_type == EKS_COMPONENT:
        return {**dict(_mapping(props.get("clusterTags"))), **dict(_mapping(props.get("tags")))}
    return dict(_mapping(props.get("tags")))


def _is_whole_internet(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen == 0
    except ValueError:
        return False


def _plain(value: Any) -> Any:
    """Plain dicts and lists from mappings and sequences (the pack hands its props over as read-only views)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(item) for item in value]
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, Sequence) and not isinstance(value, str) else ()


def _strings(value: Any) -> list[str]:
    return [str(item) for item in _sequence(value)]
