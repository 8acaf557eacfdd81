"""Whether the VPC's private subnets can hold the planned peak, and whether the fleet fits the
account's usual default vCPU quotas.

With the Amazon VPC CNI (the EKS default, without prefix delegation) every pod that does not use
the host network takes an address of its node's subnet. A node holds whole ENIs, and every address
of an attached ENI is taken from the subnet, used or not: its primary address plus
`ipv4_per_eni - 1` secondary addresses for pods. With the CNI's default WARM_ENI_TARGET=1 a node
keeps one spare ENI attached beyond those its pods need, up to the type's `max_enis`. So a node
with p pods takes `min(max_enis, ceil(p / (ipv4_per_eni - 1)) + 1) * ipv4_per_eni` addresses.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.karpenter.catalog import InstanceType, catalog_by_name, load_catalog

# AWS keeps the first four and the last address of every subnet.
RESERVED_PER_SUBNET = 5
# EKS asks for at least six free addresses in each cluster subnet for its control-plane ENIs.
EKS_FREE_PER_SUBNET = 6
# The VPC's subnet specs: public and private in every zone (components/network.py).
SUBNETS_PER_ZONE = 2

# The default value ("AWS default quota value", what a new account starts with) of the Service
# Quotas quota "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances" (L-1216C47A) is
# 5 vCPUs: `aws service-quotas get-aws-default-service-quota --service-code ec2 --quota-code
# L-1216C47A` answers "Value": 5.0 (the AWS CLI's own example of that command,
# github.com/aws/aws-cli awscli/examples/service-quotas/get-aws-default-service-quota.rst). The spot
# quota "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests" (L-34B43A08) is taken to
# start at the same value. An account's applied value is often higher (AWS raises it with use, and
# on request), which only the account can tell: hence a warning that says how to ask, not an error.
DEFAULT_STANDARD_VCPU_QUOTA = 5
QUOTA_NAMES = {
    "on-demand": "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
    "spot": "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests",
}
QUOTA_CODES = {"on-demand": "L-1216C47A", "spot": "L-34B43A08"}
# Families whose first letter is a standard one but that count against a quota of their own.
_NON_STANDARD_PREFIXES = ("inf", "trn", "dl", "hpc", "mac", "u-", "vt")
_STANDARD_LETTERS = set("acdhimrtz")


def private_subnet_sizes(cidr: str, zone_count: int) -> list[int]:
    """Addresses in each private subnet, as awsx's Auto strategy lays them out: the VPC split
    evenly over the zones (a power of two), each zone's range split evenly over its subnets."""
    vpc = ipaddress.IPv4Network(cidr)
    zone_bits = math.ceil(math.log2(zone_count)) if zone_count > 1 else 0
    subnet_bits = math.ceil(math.log2(SUBNETS_PER_ZONE))
    prefix = vpc.prefixlen + zone_bits + subnet_bits
    return [2 ** (32 - prefix)] * zone_count


def node_addresses(instance: InstanceType, pods: int) -> int:
    """Subnet addresses a node of this type takes with `pods` pods on the VPC network."""
    per_eni = instance.ipv4_per_eni
    needed = math.ceil(pods / max(per_eni - 1, 1)) if pods else 1
    return min(instance.max_enis, needed + 1) * per_eni


@dataclass(frozen=True)
class AddressDemand:
    nodes: int
    pods: int
    addresses: int


def _types(catalog: Sequence[InstanceType] | None) -> Mapping[str, InstanceType]:
    """The bundled catalog's types, with those of the plan's own catalog (a refreshed one) over them."""
    return {**catalog_by_name(load_catalog()), **catalog_by_name(catalog or ())}


def fleet_demand(nodes: Iterable[tuple[str, int]], catalog: Sequence[InstanceType] | None = None) -> AddressDemand:
    """(instance type, pods on the VPC network) of each node -> the addresses they take.
    catalog: the plan's catalog, when it is not the bundled one."""
    catalog_types = _types(catalog)
    count = pods_total = addresses = 0
    for instance_type, pods in nodes:
        count += 1
        pods_total += pods
        addresses += node_addresses(catalog_types[instance_type], pods)
    return AddressDemand(count, pods_total, addresses)


def usable_addresses(cidr: str, zone_count: int) -> int:
    return sum(size - RESERVED_PER_SUBNET - EKS_FREE_PER_SUBNET for size in private_subnet_sizes(cidr, zone_count))


def check_pods_fit(config: Any, zone_count: int, peak_pods: int) -> None:
    """Before planning: the peak's pods alone, one address each, must fit in the private subnets."""
    usable = usable_addresses(config.network.cidr, zone_count)
    if peak_pods > usable:
        raise ValueError(
            f"the planned peak has {peak_pods} pods (app.hpa.maxReplicas with its surge, plus capacity.workloads), "
            f"but the private subnets of network.cidr {config.network.cidr} over {zone_count} zones hold "
            f"{usable} pod addresses; with the VPC CNI every pod takes one. Lower app.hpa.maxReplicas "
            f"or the workloads{_larger_block(config.network.cidr)}"
        )


def check_fleet_fits(config: Any, zone_count: int, demand: AddressDemand) -> None:
    """After planning: the peak fleet's nodes, their pods and the CNI's warm ENIs must fit."""
    usable = usable_addresses(config.network.cidr, zone_count)
    if demand.addresses > usable:
        raise ValueError(
            f"the planned peak needs about {demand.addresses} VPC addresses ({demand.nodes} nodes with "
            f"{demand.pods} pods, each node holding the ENIs its pods need plus one warm ENI, as the VPC CNI's "
            f"WARM_ENI_TARGET=1 does), but the private subnets of network.cidr {config.network.cidr} over "
            f"{zone_count} zones hold {usable}. Lower app.hpa.maxReplicas or the workloads"
            f"{_larger_block(config.network.cidr)}"
        )


def _larger_block(cidr: str) -> str:
    if ipaddress.IPv4Network(cidr).prefixlen > 16:
        return ", or give network.cidr a larger block (up to /16)"
    return " (network.cidr is already /16, the largest block allowed)"


def quota_warnings(
    nodes: Sequence[tuple[str, str]], region: str | None = None, catalog: Sequence[InstanceType] | None = None
) -> list[str]:
    """(instance type, capacity type) of each node at peak -> warnings where the fleet exceeds the
    default vCPU quota of its class (standard families, on-demand and spot separately). region:
    the stack's, for the command that reads the account's applied value; catalog: the plan's."""
    catalog_types = _types(catalog)
    standard: dict[str, int] = {}
    other: dict[tuple[str, str], int] = {}
    for instance_type, capacity_type in nodes:
        instance = catalog_types[instance_type]
        if _is_standard(instance):
            standard[capacity_type] = standard.get(capacity_type, 0) + instance.vcpu
        else:
            key = (instance.family, capacity_type)
            other[key] = other.get(key, 0) + instance.vcpu
    in_region = f" --region {region}" if region else ""
    warnings = [
        _standard_quota_warning(capacity_type, vcpus, in_region)
        for capacity_type, vcpus in sorted(standard.items())
        if vcpus > DEFAULT_STANDARD_VCPU_QUOTA
    ]
    warnings += [
        f"the planned peak runs {vcpus} {capacity_type} vCPUs of {family}, a family with a vCPU quota of its own "
        "(often 0 for new accounts); find it with `aws service-quotas list-service-quotas --service-code ec2"
        f"{in_region}`"
        for (family, capacity_type), vcpus in sorted(other.items())
    ]
    return warnings


def _standard_quota_warning(capacity_type: str, vcpus: int, in_region: str) -> str:
    quota = f'"{QUOTA_NAMES.get(capacity_type, capacity_type)}"'
    code = QUOTA_CODES.get(capacity_type)
    check = (
        f"check it with `aws service-quotas get-service-quota --service-code ec2 --quota-code {code}{in_region}`"
        if code
        else f"find it with `aws service-quotas list-service-quotas --service-code ec2{in_region}`"
    )
    return (
        f"the planned peak runs {vcpus} {capacity_type} vCPUs of standard instance families, above "
        f"{DEFAULT_STANDARD_VCPU_QUOTA}, the default value for new accounts of the quota {quota}"
        f"{f' ({code})' if code else ''}; an account's applied value is often higher: {check} "
        "and request an increase if it is below the peak"
    )


def _is_standard(instance: InstanceType) -> bool:
    family = instance.family
    return family[:1] in _STANDARD_LETTERS and not family.startswith(_NON_STANDARD_PREFIXES)
