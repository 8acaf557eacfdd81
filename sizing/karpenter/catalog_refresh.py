"""Live refresh of the instance-type catalog for one region from the AWS APIs (needs boto3 and credentials).

What a refresh fetches, as Karpenter's AWS provider (aws/karpenter-provider-aws v1.14) does:

- instance facts: EC2 `DescribeInstanceTypes` in the region, filtered as Karpenter filters them
  (HVM, x86_64 or arm64; `pkg/providers/instancetype/instancetype.go`);
- on-demand prices: the Price List Query API (`pricing:GetProducts`, served from us-east-1),
  on-demand, Linux, shared tenancy, no pre-installed software, in the region;
- spot prices: EC2 `DescribeSpotPriceHistory` from now on, Linux/UNIX, per type and zone, the
  latest record of each (`pkg/providers/pricing/pricing.go`, `UpdateSpotPricing`);
- offerings: EC2 `DescribeInstanceTypeOfferings`, the zones each type is offered in
  (`UpdateInstanceTypeOfferings`). Karpenter marks an offering available only in those zones and
  only where it knows a price (`pkg/providers/instancetype/offering/base_resolver.go`);
- zone IDs: EC2 `DescribeAvailabilityZones`, the signed-in account's zone names and IDs. A zone
  name (us-east-1a) is a different physical zone in each account, a zone ID (use1-az1) is not, so
  offerings are asked by zone ID, spot prices (which EC2 gives by name) are turned into IDs with
  this map, and the file keys both by ID and carries the map (format version 3); the account's ID
  comes from STS `GetCallerIdentity`, when it answers. Without the map (the call denied), the file
  keys zones by this account's names, as format version 2 does, and its `gaps` says so.

Every call is paginated by NextToken, page by page; a throttled page is retried with exponential
backoff (`RetryPolicy`, the wait is injectable so tests never sleep), on top of botocore's own
retries. Instance types are required. When the call for prices, spot prices or offerings is
denied, the catalog is written without that part: the file's `gaps` names the IAM permission that
was missing, and plans read from it say what they could not check.

Permissions: ec2:DescribeInstanceTypes, ec2:DescribeInstanceTypeOfferings,
ec2:DescribeSpotPriceHistory, ec2:DescribeAvailabilityZones, pricing:GetProducts.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    MAX_ZONES_PER_REGION,
    CatalogInfo,
    InstanceType,
    catalog_document,
    dump_catalog_document,
    instance_type_from_dict,
)
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


def instance_type_from_aws(
    info: Mapping[str, Any],
    prices: Mapping[str, float],
    region: str,
    spot: Mapping[str, Mapping[str, float]] | None = None,
    zones: Mapping[str, Iterable[str]] | None = None,
) -> InstanceType | None:
    """Convert one `InstanceTypeInfo`; None for types the catalog cannot describe.

    prices: type -> on-demand USD/hour; spot: type -> zone -> spot USD/hour; zones: type ->
    the zones it is offered in (None: offerings not fetched, so none recorded).
    """
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
    if spot and spot.get(name):
        obj["spot_prices"] = {region: dict(spot[name])}
    if zones is not None:
        obj["zones"] = {region: sorted(zones.get(name, ()))}
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


def spot_prices(
    records: Iterable[Mapping[str, Any]], region: str, zone_ids: Mapping[str, str] | None = None
) -> dict[str, dict[str, float]]:
    """Type -> zone name -> USD/hour from `SpotPriceHistory` records: per type and zone the latest
    record (the lower price of two equally recent ones, so AWS's order does not matter); records
    of other regions' zones, without a time, or with an unreadable or non-positive price are skipped.
    zone_ids: the account's zone name -> zone ID; with it, records of a zone it lacks (one the
    account has not enabled) are skipped too, so that every zone kept has an ID."""
    latest: dict[tuple[str, str], tuple[dt.datetime, float]] = {}
    for record in records:
        name, zone, when = record.get("InstanceType"), record.get("AvailabilityZone"), record.get("Timestamp")
        if not name or not isinstance(zone, str) or not zone.startswith(region) or not isinstance(when, dt.datetime):
            continue
        if zone_ids is not None and zone not in zone_ids:
            continue
        try:
            price = float(record.get("SpotPrice", ""))
        except ValueError:
            continue
        if not price > 0 or price == float("inf"):
            continue
        key = (name, zone)
        when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
        held = latest.get(key)
        if held is None or when > held[0] or (when == held[0] and price < held[1]):
            latest[key] = (when, price)
    result: dict[str, dict[str, float]] = {}
    for (name, zone), (_, price) in sorted(latest.items()):
        result.setdefault(name, {})[zone] = price
    return result


def offered_zones(
    offerings: Iterable[Mapping[str, Any]], region: str, zone_ids: Mapping[str, str] | None = None
) -> dict[str, list[str]]:
    """Type -> sorted zone names from `InstanceTypeOfferings` records.

    zone_ids: the account's zone name -> zone ID, for records of location type availability-zone-id
    (whose `Location` is a zone ID, named here with the map; an ID the map lacks is skipped);
    None for records of location type availability-zone (a zone name, kept if of `region`)."""
    names = {zone_id: name for name, zone_id in (zone_ids or {}).items()}
    zones: dict[str, set[str]] = {}
    for offering in offerings:
        name, zone = offering.get("InstanceType"), offering.get("Location")
        if zone_ids is not None:
            zone = names.get(zone) if isinstance(zone, str) else None
        if name and isinstance(zone, str) and zone.startswith(region):
            zones.setdefault(name, set()).add(zone)
    return {name: sorted(found) for name, found in sorted(zones.items())}


# -- calling AWS ------------------------------------------------------------------------------

PERMISSIONS = {
    "DescribeInstanceTypes": "ec2:DescribeInstanceTypes",
    "DescribeInstanceTypeOfferings": "ec2:DescribeInstanceTypeOfferings",
    "DescribeSpotPriceHistory": "ec2:DescribeSpotPriceHistory",
    "DescribeAvailabilityZones": "ec2:DescribeAvailabilityZones",
    "GetProducts": "pricing:GetProducts",
}
# Error codes AWS answers a call the caller's policies do not allow with (EC2, the Price List API, STS).
DENIED_CODES = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedException", "Forbidden"}
)
# Error codes of a request refused for its rate, worth retrying after a wait (botocore's list of throttling codes).
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "EC2ThrottledException",
        "SlowDown",
        "PriorRequestNotComplete",
        "BandwidthLimitExceeded",
    }
)
SPOT_PRODUCT_DESCRIPTIONS = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
# What a catalog without the account's zone map keys its zones by.
BY_NAME = "zones are keyed by this account's zone names"
# Page sizes: the most each API returns per page.
INSTANCE_TYPES_PAGE = 100
OFFERINGS_PAGE = 1000
SPOT_PAGE = 1000
PRICING_PAGE = 100
# A region has a few thousand records per call; a listing longer than this is a fault, not data.
MAX_PAGES = 5000


@dataclass(frozen=True)
class RetryPolicy:
    """How a throttled page is retried: up to `attempts` tries, waiting base * 2**n seconds
    (at most `cap_seconds`) before try n + 1."""

    attempts: int = 6
    base_seconds: float = 1.0
    cap_seconds: float = 20.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base_seconds < 0 or self.cap_seconds < 0:
            raise ValueError("a retry policy needs at least one attempt and non-negative waits")

    def delay(self, retry: int) -> float:
        return float(min(self.cap_seconds, self.base_seconds * 2**retry))


class PermissionDenied(SizingInputError):
    """An AWS call was refused for lack of an IAM permission."""

    def __init__(self, operation: str, region: str, code: str):
        self.operation = operation
        self.permission = PERMISSIONS[operation]
        super().__init__(
            f"catalog refresh: {operation} was denied ({code}) in {region}: the credentials lack the IAM "
            f"permission {self.permission}"
        )


def _error_code(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, Mapping):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _pages(
    call: Callable[..., Mapping[str, Any]],
    operation: str,
    params: Mapping[str, Any],
    region: str,
    retry: RetryPolicy,
    sleep: Callable[[float], None],
) -> Iterator[Mapping[str, Any]]:
    """Every page of a NextToken-paginated call; a throttled page is retried, then given up on."""
    from botocore.exceptions import BotoCoreError, ClientError

    token: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        request = dict(params) if token is None else {**params, "NextToken": token}
        page: Mapping[str, Any] = {}
        for attempt in range(retry.attempts):
            try:
                page = call(**request)
                break
            except ClientError as error:
                code = _error_code(error)
                if code in DENIED_CODES:
                    raise PermissionDenied(operation, region, code) from None
                if code not in THROTTLING_CODES:
                    raise SizingInputError(f"catalog refresh: {operation} failed in {region}: {error}") from None
                if attempt + 1 == retry.attempts:
                    raise SizingInputError(
                        f"catalog refresh: {operation} in {region} was still throttled ({code}) after "
                        f"{retry.attempts} attempts; try again later"
                    ) from None
                sleep(retry.delay(attempt))
            except BotoCoreError as error:
                raise SizingInputError(f"catalog refresh: {operation} failed in {region}: {error}") from None
        yield page
        token = page.get("NextToken") or None
        if token is None:
            return
        if token in seen:
            raise SizingInputError(f"catalog refresh: {operation} in {region} returned a page token twice; stopping")
        seen.add(token)
    raise SizingInputError(f"catalog refresh: {operation} in {region} went on for more than {MAX_PAGES} pages")


def _require_boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise SizingInputError(
            "catalog refresh needs boto3, which is not installed: pip install boto3 (or plan with the bundled catalog)"
        ) from None
    return boto3


def _boto3_session(session: Any) -> Any:
    session = session or _require_boto3().session.Session()
    if session.get_credentials() is None:
        raise SizingInputError(
            "catalog refresh found no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
            "or run where an IAM role is available (or plan with the bundled catalog)"
        )
    return session


@dataclass(frozen=True)
class RefreshedCatalog:
    """A refresh's result: the region's types sorted by name, and the catalog header (dates, gaps)."""

    instance_types: tuple[InstanceType, ...]
    info: CatalogInfo

    @property
    def region(self) -> str:
        return self.info.region or ""

    def text(self) -> str:
        """The catalog file's text."""
        return dump_catalog_document(catalog_document(self.instance_types, self.info.source, self.info))

    def summary(self) -> str:
        """One line: how many types, prices, spot prices and zones the catalog holds."""
        region = self.region
        types = self.instance_types
        priced = sum(1 for i in types if i.price(region) is not None)
        spot = sum(1 for i in types if i.spot_prices.get(region))
        ids = self.info.zone_ids
        zones = [
            f"{zone} ({ids[zone]})" if zone in ids else zone
            for zone in sorted({zone for i in types for zone in i.zones.get(region, ())})
        ]
        parts = [
            f"{len(types)} instance type{'s' if len(types) != 1 else ''}",
            f"{priced} with on-demand prices",
            f"{spot} with spot prices",
        ]
        if region in self.info.offerings_as_of:
            parts.append(f"offerings in {len(zones)} zones ({', '.join(zones) or 'none'})")
        else:
            parts.append("no offerings")
        return f"{', '.join(parts)} for {region}"


def refresh_catalog(
    region: str,
    session: Any = None,
    ec2_client: Any = None,
    pricing_client: Any = None,
    now: dt.datetime | None = None,
    sleep: Callable[[float], None] = time.sleep,
    retry: RetryPolicy = RetryPolicy(),
    sts_client: Any = None,
) -> RefreshedCatalog:
    """The catalog of `region`: its instance types with on-demand prices, spot prices and offerings,
    zones keyed by the signed-in account's zone IDs (see the module docstring).

    session: a boto3 Session (default: a new one from the environment); ec2_client /
    pricing_client / sts_client: ready clients, which take precedence (without an STS client
    given beside ready EC2 and Price List clients, the account is not recorded); now: the time the
    spot history starts at and the catalog is dated (default: the current UTC time); sleep / retry:
    the wait between attempts at a throttled page.
    """
    validate_region(region)
    _require_boto3()
    if ec2_client is None or pricing_client is None:
        from botocore.config import Config

        session = _boto3_session(session)
        config = Config(retries={"mode": "standard", "max_attempts": 3})
        ec2_client = ec2_client or session.client("ec2", region_name=region, config=config)
        pricing_client = pricing_client or session.client("pricing", region_name=PRICING_API_REGION, config=config)
        sts_client = sts_client or session.client("sts", region_name=region, config=config)
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(microsecond=0)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    gaps: list[str] = []

    def optional(fetch: Callable[[], Any], part: str) -> Any:
        try:
            return fetch()
        except PermissionDenied as denied:
            gaps.append(f"{part}: {denied.operation} was denied; grant {denied.permission} and refresh again")
            return None

    def fetch_prices() -> dict[str, float]:
        prices: dict[str, float] = {}
        params = {"ServiceCode": "AmazonEC2", "Filters": pricing_filters(region), "MaxResults": PRICING_PAGE}
        for page in _pages(pricing_client.get_products, "GetProducts", params, region, retry, sleep):
            for name, price in on_demand_prices(page.get("PriceList", [])).items():
                prices[name] = min(price, prices.get(name, price))
        return prices

    def fetch_types() -> list[Mapping[str, Any]]:
        params = {"Filters": [dict(f) for f in DESCRIBE_INSTANCE_TYPES_FILTERS], "MaxResults": INSTANCE_TYPES_PAGE}
        pages = _pages(ec2_client.describe_instance_types, "DescribeInstanceTypes", params, region, retry, sleep)
        return [info for page in pages for info in page.get("InstanceTypes", [])]

    def fetch_zone_ids() -> dict[str, str] | None:
        found = zone_ids_by_name(ec2_client, region, retry, sleep)
        if len(found) > MAX_ZONES_PER_REGION:
            raise SizingInputError(
                f"catalog refresh: DescribeAvailabilityZones listed {len(found)} zones of {region}; a catalog file "
                f"holds at most {MAX_ZONES_PER_REGION}"
            )
        if not found:
            gaps.append(f"zone IDs: DescribeAvailabilityZones listed no zone of {region}; {BY_NAME}")
        return found or None

    def fetch_offerings() -> dict[str, list[str]]:
        # By zone ID where the account's map can name them, as the file keys them.
        location = "availability-zone-id" if zone_ids else "availability-zone"
        params = {"LocationType": location, "MaxResults": OFFERINGS_PAGE}
        call = ec2_client.describe_instance_type_offerings
        pages = _pages(call, "DescribeInstanceTypeOfferings", params, region, retry, sleep)
        offerings = (o for page in pages for o in page.get("InstanceTypeOfferings", []))
        return offered_zones(offerings, region, zone_ids)

    def fetch_spot() -> dict[str, dict[str, float]]:
        params = {
            "ProductDescriptions": list(SPOT_PRODUCT_DESCRIPTIONS),
            "StartTime": moment,
            "MaxResults": SPOT_PAGE,
        }
        call = ec2_client.describe_spot_price_history
        pages = _pages(call, "DescribeSpotPriceHistory", params, region, retry, sleep)
        return spot_prices((r for page in pages for r in page.get("SpotPriceHistory", [])), region, zone_ids)

    prices = optional(fetch_prices, "on-demand prices")
    try:
        infos = fetch_types()
    except PermissionDenied as denied:
        raise SizingInputError(f"{denied}; the refresh cannot list the region's instance types without it") from None
    zone_ids = optional(fetch_zone_ids, f"zone IDs ({BY_NAME})")
    zones = optional(fetch_offerings, "offerings")
    spot = optional(fetch_spot, "spot prices")
    instances = {}
    for described in infos:
        instance = instance_type_from_aws(described, prices or {}, region, spot, zones)
        if instance is not None:
            instances[instance.name] = instance
    if not instances:
        raise SizingInputError(f"catalog refresh: DescribeInstanceTypes returned no usable instance type in {region}")
    fetched = [
        name
        for name, part in (("the Price List API", prices), ("offerings", zones), ("spot prices", spot))
        if part is not None
    ]
    account = caller_account(sts_client) if zone_ids and sts_client is not None else None
    whose = f"account {account}" if account else "the refreshing account"
    keyed = f" Zones keyed by zone ID; `zones` gives the names of {whose}." if zone_ids else ""
    info = CatalogInfo(
        source=(
            f"Refreshed from EC2 DescribeInstanceTypes and {', '.join(fetched) or 'nothing else'} for {region} at "
            f"{stamp}. Prices: on-demand and spot Linux USD/hour, {region} only.{keyed}"
        ),
        zone_ids=zone_ids or {},
        account=account,
        region=region,
        prices_as_of={region: moment.date().isoformat()} if prices is not None else {},
        spot_prices_as_of={region: stamp} if spot is not None else {},
        offerings_as_of={region: stamp} if zones is not None else {},
        gaps=tuple(gaps),
    )
    return RefreshedCatalog(tuple(instances[name] for name in sorted(instances)), info)


# -- signing in as a stack does, and the account's zone IDs -------------------------------------

# A role session lasts this long: the refresh takes a minute or two.
ROLE_SESSION_NAME = "eks-autoscaling-catalog"


@dataclass(frozen=True)
class AwsSignIn:
    """How a refresh signs in: as a stack's AWS provider does, with its profile, the role it
    assumes and the AWS CLI's files (None: as the environment says)."""

    profile: str | None = None
    role_arn: str | None = None
    config_file: str | None = None
    credentials_file: str | None = None

    def describe(self) -> str:
        parts = [
            f"{label} {value}"
            for label, value in (
                ("profile", self.profile),
                ("role", self.role_arn),
                ("config file", self.config_file),
                ("credentials file", self.credentials_file),
            )
            if value
        ]
        return ", ".join(parts) or "the environment's credentials"


def aws_session(sign_in: AwsSignIn, sts_client: Any = None) -> Any:
    """A boto3 Session that signs in as `sign_in` says; SizingInputError for a profile the files
    lack, or a role that cannot be assumed. sts_client: a ready STS client (tests)."""
    boto3 = _require_boto3()
    import os

    import botocore.session
    from botocore.exceptions import BotoCoreError, ClientError, ProfileNotFound

    core = botocore.session.Session()
    for variable, path in (("config_file", sign_in.config_file), ("credentials_file", sign_in.credentials_file)):
        if path:
            core.set_config_variable(variable, os.path.expanduser(path))
    try:
        session = boto3.session.Session(botocore_session=core, profile_name=sign_in.profile)
    except ProfileNotFound:
        raise SizingInputError(
            f"catalog refresh: profile {sign_in.profile!r} is in none of the AWS CLI's files "
            f"({sign_in.config_file or '~/.aws/config'}, {sign_in.credentials_file or '~/.aws/credentials'})"
        ) from None
    if not sign_in.role_arn:
        return session
    try:
        sts = sts_client or session.client("sts")
        credentials = sts.assume_role(RoleArn=sign_in.role_arn, RoleSessionName=ROLE_SESSION_NAME)["Credentials"]
    except (ClientError, BotoCoreError) as error:
        raise SizingInputError(f"catalog refresh: cannot assume role {sign_in.role_arn}: {error}") from None
    return boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


def zone_ids_by_name(
    ec2_client: Any, region: str, retry: RetryPolicy = RetryPolicy(), sleep: Callable[[float], None] = time.sleep
) -> dict[str, str]:
    """Zone name -> zone ID of the region's zones the signed-in account has enabled (Availability,
    Local and Wavelength Zones alike): names map to different physical zones in each account, IDs
    (use1-az1) to the same one. PermissionDenied when DescribeAvailabilityZones is denied."""
    pages = _pages(ec2_client.describe_availability_zones, "DescribeAvailabilityZones", {}, region, retry, sleep)
    return {
        str(zone["ZoneName"]): str(zone["ZoneId"])
        for page in pages
        for zone in page.get("AvailabilityZones", [])
        if str(zone.get("ZoneName", "")).startswith(region) and zone.get("ZoneId")
    }


def caller_account(sts_client: Any) -> str | None:
    """The signed-in account's ID from STS GetCallerIdentity (which needs no permission), or None
    when STS does not answer: the catalog then names "the refreshing account"."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        account = sts_client.get_caller_identity().get("Account")
    except (ClientError, BotoCoreError):
        return None
    return account if isinstance(account, str) and re.fullmatch(r"[0-9]{12}", account) else None
