"""The Karpenter NodePool and EC2NodeClass as plain dicts (karpenter.sh/v1, karpenter.k8s.aws/v1).

The objects start from the YAML files in `manifests/karpenter/`, which hold
the reference values and can be applied with kubectl as they are. The values
that the stack configuration or the program decides are then written over them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from stackconfig.ami import check_ami_alias
from stackconfig.foundation import check_node_class_tags
from stackconfig.nodepool import ZONE_KEY, NodePoolConfig
from stackconfig.nodepool_presets import NODEPOOL_PRESETS
from stackobjects.app import load_manifest

MANIFEST_DIR = Path(__file__).resolve().parent.parent / "manifests" / "karpenter"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
NODE_CLASS_KIND = "EC2NodeClass"
DEFAULT_NODE_CLASS_NAME = "default"
DISCOVERY_TAG = "karpenter.sh/discovery"

# Karpenter's CRD pattern for resource quantities in `spec.limits`.
_LIMIT_QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
# From Karpenter's own AL2023 root volume size up to the largest gp3 volume (16 TiB).
ROOT_VOLUME_GI_RANGE = (20, 16384)
KUBELET_FIELDS = (
    "clusterDNS",
    "maxPods",
    "podsPerCore",
    "systemReserved",
    "kubeReserved",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMaxPodGracePeriod",
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "cpuCFSQuota",
)


def node_pool(
    config: NodePoolConfig,
    *,
    zones: Sequence[str],
    limits: Mapping[str, str],
    node_class_name: str,
) -> dict:
    """The NodePool of `config`.

    zones: the zones its nodes may use (`nodePool.zones`, or else the VPC's zones).
    limits: the resource limits (e.g. {"cpu": "8", "memory": "32Gi"}) the program computed.
    node_class_name: the EC2NodeClass its nodes are launched with.
    """
    _check_zones(zones)
    if not zones:
        raise ValueError(f"zones must be a non-empty list of zone names, got {zones!r}")
    if not limits:
        raise ValueError("limits is empty; a NodePool without limits could launch nodes without bound")
    return _node_pool_object(config, zones, limits, node_class_name)


def node_pool_to_plan(config: NodePoolConfig, *, zones: Sequence[str], node_class_name: str) -> dict:
    """The NodePool as the capacity plan reads it: the one `node_pool` builds before its limits
    are known. `spec.limits` holds `nodePool.limits` when they are set (the plan checks them
    against the peak) and is left out otherwise (the plan computes them).

    zones: as for `node_pool`; empty when they are not known (a plan made without the region's
    zones), which leaves the zone requirement out.
    """
    _check_zones(zones)
    limits = {} if config.limits is None else config.limits.given()
    return _node_pool_object(config, zones, limits, node_class_name)


def _check_zones(zones: Sequence[str]) -> None:
    if isinstance(zones, str) or not all(isinstance(zone, str) and zone for zone in zones):
        raise ValueError(f"zones must be a non-empty list of zone names, got {zones!r}")
    if len(set(zones)) != len(zones):
        raise ValueError(f"zones {list(zones)} lists a zone twice")


def _node_pool_object(
    config: NodePoolConfig, zones: Sequence[str], limits: Mapping[str, str], node_class_name: str
) -> dict:
    for resource, quantity in limits.items():
        if not isinstance(quantity, str) or not _LIMIT_QUANTITY.match(quantity):
            raise ValueError(f"limits.{resource} {quantity!r} is not a Kubernetes quantity such as 8 or 32Gi")
    if not node_class_name:
        raise ValueError("node_class_name is empty; pass the EC2NodeClass's name")

    requirements = config.requirements if config.requirements is not None else NODEPOOL_PRESETS[config.preset]
    obj = load_manifest(MANIFEST_DIR / "nodepool.yaml")
    obj["metadata"]["name"] = config.name
    spec = obj["spec"]
    template_spec = spec["template"]["spec"]
    template_spec["nodeClassRef"] = {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": node_class_name}
    zone_requirement = [{"key": ZONE_KEY, "operator": "In", "values": list(zones)}] if zones else []
    template_spec["requirements"] = [requirement.to_dict() for requirement in requirements] + zone_requirement
    template_spec["expireAfter"] = config.expire_after
    spec["disruption"] = {
        "consolidationPolicy": config.consolidation_policy,
        "consolidateAfter": config.consolidate_after,
        "budgets": [budget.to_dict() for budget in config.budgets],
    }
    if limits:
        spec["limits"] = dict(limits)
    else:
        del spec["limits"]
    if config.weight is not None:
        spec["weight"] = config.weight
    return obj


def ec2_node_class(
    *,
    name: str,
    role_name: str,
    cluster_name: str,
    ami_alias: str,
    tags: Mapping[str, str],
    kubelet: Mapping[str, object] | None = None,
    volume_size_gi: int = 20,
    subnet_ids: Sequence[str] | None = None,
) -> dict:
    """The EC2NodeClass: node role, AMI, subnets and security groups, root volume and tags.

    Subnets and security groups are found by the tag `karpenter.sh/discovery: <cluster_name>`.
    subnet_ids: subnets to launch into by id instead, for a VPC whose subnets do not carry that tag.
    role_name: the node IAM role; Karpenter manages the instance profile for it.
    kubelet: optional kubelet settings (camelCase, as in the EC2NodeClass `spec.kubelet`).
    """
    if not name or not role_name or not cluster_name:
        raise ValueError("name, role_name and cluster_name must not be empty")
    check_ami_alias(ami_alias)
    check_node_class_tags(tags)
    low, high = ROOT_VOLUME_GI_RANGE
    if isinstance(volume_size_gi, bool) or not isinstance(volume_size_gi, int) or not low <= volume_size_gi <= high:
        raise ValueError(f"volume_size_gi must be a whole number of GiB from {low} to {high}, got {volume_size_gi!r}")

    obj = load_manifest(MANIFEST_DIR / "ec2nodeclass.yaml")
    obj["metadata"]["name"] = name
    spec = obj["spec"]
    spec["role"] = role_name
    spec["amiSelectorTerms"] = [{"alias": ami_alias}]
    if subnet_ids is not None:
        if isinstance(subnet_ids, str) or not subnet_ids or not all(isinstance(i, str) and i for i in subnet_ids):
            raise ValueError(f"subnet_ids must be a non-empty list of subnet ids, got {subnet_ids!r}")
        spec["subnetSelectorTerms"] = [{"id": subnet_id} for subnet_id in subnet_ids]
    else:
        spec["subnetSelectorTerms"] = [{"tags": {DISCOVERY_TAG: cluster_name}}]
    spec["securityGroupSelectorTerms"] = [{"tags": {DISCOVERY_TAG: cluster_name}}]
    (root_volume,) = spec["blockDeviceMappings"]
    root_volume["ebs"]["volumeSize"] = f"{volume_size_gi}Gi"
    spec["tags"] = dict(tags)
    if kubelet is not None:
        unknown = sorted(set(kubelet) - set(KUBELET_FIELDS))
        if unknown:
            raise ValueError(f"kubelet: unknown fields {unknown}; allowed fields are {list(KUBELET_FIELDS)}")
        spec["kubelet"] = copy.deepcopy(dict(kubelet))
    return obj
