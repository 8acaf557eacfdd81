"""Live refresh of the instance-type catalog from the AWS APIs (optional; needs boto3 and credentials).

Instance facts come from EC2 `DescribeInstanceTypes` in the chosen region,
filtered as Karpenter filters them (HVM, x86_64 or arm64). Prices come from
the Price List Query API (`pricing:GetProducts`, served from us-east-1):
on-demand, Linux, shared tenancy, no pre-installed software, in the chosen
region. The refreshed catalog carries prices for that region only.

Permissions needed: ec2:DescribeInstanceTypes and pricing:GetProducts.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping, Optional, Tuple

from sizing.karpenter.catalog import InstanceType, catalog_document, dump_catalog_document, instance_type_from_dict
from sizing.errors import SizingInputError
from sizing.karpenter.pricing import validate_region

PRICING_API_REGION = "us-east-1"
# Same filter as Karpenter's instance-type provider.
DESCRIBE_INSTANCE_TYPES_FILTERS = (
    {"Name": "supported-virtualization-type", "Values": ["hvm"]},
    {"Name": "processor-info.supported-architecture", "Values": ["x86_64", "arm64"]},
)
AWS_TO_KUBERNETES_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
# Karpenter derives category and generation from the name with this pattern.
_CATEGORY_AND_GENERATION = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")


def pricing_filters(region: str) -> list[dict[str, str]]:
    """GetProducts filters selecting on-demand Linux shared-tenancy compute prices in `region`."""
    terms = (
        ("regionCode", region),
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"),
    )
    return [{"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in terms]


def instance_type_from_aws(info: Mapping[str, Any], prices: Mapping[str, float], region: str) -> Optional[InstanceType]:
    """Convert one `InstanceTypeInfo`; None for types the catalog cannot describe."""
    name = info.get("InstanceType", "")
    parts = name.split(".")
    match = _CATEGORY_AND_GENERATION.match(name)
    architectures = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    arch = next((AWS_TO_KUBERNETES_ARCH[a] for a in architectures if a in AWS_TO_KUBERNETES_ARCH), None)
    if len(parts) != 2 or match is None or arch is None:
        return None
    network = info.get("NetworkInfo", {})
    cards = network.get("NetworkCards") or []
    default_card = network.get("DefaultNetworkCardIndex", 0)
    # The VPC CNI only uses the default network card, as Karpenter's ENI-limited pod count does.
    max_enis = next(
        (card.get("MaximumNetworkInterfaces", 0) for card in cards if card.get("NetworkCardIndex") == default_card),
        network.get("MaximumNetworkInterfaces", 0),
    )
    gpus = info.get("GpuInfo", {}).get("Gpus", [])
    obj = {
        "name": name,
        "category": match.group(1),
        "family": parts[0],
        "generation": int(match.group(3)),
        "size": parts[1],
        "arch": arch,
        "hypervisor": info.get("Hypervisor", ""),
        "vcpu": info.get("VCpuInfo", {}).get("DefaultVCpus", 0),
        "memory_mib": info.get("MemoryInfo", {}).get("SizeInMiB", 0),
        "max_enis": max_enis,
        "ipv4_per_eni": network.get("Ipv4AddressesPerInterface", 0),
        "gpu_count": sum(gpu.get("Count", 0) for gpu in gpus),
        "prices": {region: prices[name]} if name in prices else {},
    }
    return instance_type_from_dict(obj, f"DescribeInstanceTypes {name!r}")


def on_demand_prices(price_list: Iterable[str]) -> Mapping[str, float]:
    """Instance type -> USD/hour from GetProducts `PriceList` entries (JSON strings).

    When a type appears more than once the lowest positive price wins, so the
    result does not depend on the order AWS returns them in.
    """
    prices: dict[str, float] = {}
    for entry in price_list:
        product = json.loads(entry) if isinstance(entry, str) else entry
        name = product.get("product", {}).get("attributes", {}).get("instanceType")
        if not name:
            continue
        for term in product.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = dimension.get("pricePerUnit", {}).get("USD")
                if dimension.get("unit") != "Hrs" or usd is None:
                    continue
                price = float(usd)
                if price > 0 and (name not in prices or price < prices[name]):
                    prices[name] = price
    return prices


def _require_boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise SizingInputError(
            "catalog refresh needs boto3, which is not installed: pip install boto3 "
            "(or use the bundled catalog without --refresh)"
        ) from None
    return boto3


def _boto3_session(session: Any) -> Any:
    session = session or _require_boto3().session.Session()
    if session.get_credentials() is None:
        raise SizingInputError(
            "catalog refresh found no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
            "or run where an IAM role is available (or use the bundled catalog without --refresh)"
        )
    return session


def _call_failed(action: str, error: Exception) -> SizingInputError:
    return SizingInputError(f"catalog refresh: {action} failed: {error}")


def refresh_catalog(
    region: str,
    session: Any = None,
    ec2_client: Any = None,
    pricing_client: Any = None,
) -> Tuple[InstanceType, ...]:
    """Instance types of `region` with their on-demand USD/hour there, sorted by name.

    session: a boto3 Session (default: a new one from the environment);
    ec2_client / pricing_client: ready clients, which take precedence.
    """
    validate_region(region)
    _require_boto3()
    if ec2_client is None or pricing_client is None:
        session = _boto3_session(session)
        ec2_client = ec2_client or session.client("ec2", region_name=region)
        pricing_client = pricing_client or session.client("pricing", region_name=PRICING_API_REGION)
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        prices: dict[str, float] = {}
        for page in pricing_client.get_paginator("get_products").paginate(
            ServiceCode="AmazonEC2", Filters=pricing_filters(region)
        ):
            for name, price in on_demand_prices(page.get("PriceList", [])).items():
                prices[name] = min(price, prices.get(name, price))
    except (BotoCoreError, ClientError) as error:
        raise _call_failed(f"pricing GetProducts for {region}", error) from error
    try:
        infos = [
            info
            for page in ec2_client.get_paginator("describe_instance_types").paginate(
                Filters=[dict(f) for f in DESCRIBE_INSTANCE_TYPES_FILTERS]
            )
            for info in page.get("InstanceTypes", [])
        ]
    except (BotoCoreError, ClientError) as error:
        raise _call_failed(f"ec2 DescribeInstanceTypes in {region}", error) from error
    instances = {}
    for info in infos:
        instance = instance_type_from_aws(info, prices, region)
        if instance is not None:
            instances[instance.name] = instance
    if not instances:
        raise SizingInputError(f"catalog refresh: DescribeInstanceTypes returned no usable instance type in {region}")
    return tuple(instances[name] for name in sorted(instances))


def refreshed_catalog_text(instances: Iterable[InstanceType], region: str) -> str:
    """Catalog-file text for a refreshed catalog of `region`."""
    source = (
        f"Refreshed from EC2 DescribeInstanceTypes and the Price List API for {region}. "
        f"Prices: on-demand Linux USD/hour, {region} only."
    )
    return dump_catalog_document(catalog_document(instances, source))
