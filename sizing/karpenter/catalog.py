"""The EC2 instance-type catalog: facts per type, as Karpenter sees them.

The catalog bundled in `sizing/karpenter/data/catalog.json` is generated offline (see
`scripts/generate_catalog.py` and `sizing/karpenter/data/README.md`); a catalog file of
the same format can be written by a live refresh (`sizing.karpenter.catalog_refresh`).
Memory is in MiB, prices in USD/hour (on-demand, Linux, shared tenancy; spot per zone).

Besides the types, a catalog file says what it knows and since when (`CatalogInfo`): the
region a refreshed file describes, and per region the date of its on-demand prices, the time
of its spot prices and of its offerings (the zones each type is offered in). A region without
an offerings record means offerings were not checked for it, not that nothing is offered.

Zone names (us-east-1a) map to different physical zones in each AWS account; zone IDs (use1-az1)
do not. A refreshed file of format version 3 keys spot prices and offerings by zone ID and carries
the refreshing account's map of its zones (`zones`: name and ID of each, and `account` when
known); on reading, the IDs are turned into that account's names once, so everything downstream
works with names, and `CatalogInfo.zone_note` says whose names they are. Files of versions 1 and 2
key zones by name and carry no map.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sizing.errors import SizingInputError, echo
from sizing.kube.safe_yaml import read_text

BUNDLED_CATALOG_PATH = Path(__file__).resolve().parent / "data" / "catalog.json"
CATALOG_FORMAT_VERSION = 2
# Version 3: zones keyed by zone ID, with the refreshing account's map of names to IDs; written only
# when a catalog has that map, so that name-keyed files keep version 2.
ZONE_ID_FORMAT_VERSION = 3
# Version 1 files (no spot prices, offerings or dates) still read: they are version 2 without them.
READABLE_FORMAT_VERSIONS = (1, 2, 3)
ARCHITECTURES = ("amd64", "arm64")
HYPERVISORS = ("", "nitro", "xen")

LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_OS = "kubernetes.io/os"
LABEL_CATEGORY = "karpenter.k8s.aws/instance-category"
LABEL_FAMILY = "karpenter.k8s.aws/instance-family"
LABEL_GENERATION = "karpenter.k8s.aws/instance-generation"
LABEL_SIZE = "karpenter.k8s.aws/instance-size"
LABEL_CPU = "karpenter.k8s.aws/instance-cpu"
LABEL_MEMORY = "karpenter.k8s.aws/instance-memory"
LABEL_HYPERVISOR = "karpenter.k8s.aws/instance-hypervisor"
LABEL_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"

_NAME_PATTERN = re.compile(r"^[a-z0-9-]+\.[a-z0-9-]+$")
_REGION_PATTERN = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")
# A date (2026-07-20) or a UTC time (2026-07-20T09:30:00Z), as the refresh writes them.
# An AWS zone ID: use1-az1, apne1-az4, a Local Zone's usw2-lax1-az1.
_ZONE_ID_PATTERN = re.compile(r"^[a-z]{2,8}[0-9]{1,2}(-[a-z0-9]{1,12}){1,4}$")
_ACCOUNT_PATTERN = re.compile(r"^[0-9]{12}$")
_AS_OF_PATTERN = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?$")
# Bounds on what one file may list, so that a malformed file cannot make the planner loop or hoard memory.
MAX_REGIONS = 64
MAX_ZONES_PER_REGION = 64
MAX_GAPS = 16
MAX_TEXT = 500
# EC2 offers about 1,000 types in all; the planner tries each type per node it launches.
MAX_INSTANCE_TYPES = 5_000


@dataclass(frozen=True)
class InstanceType:
    """One EC2 instance type.

    vcpu: default vCPU count; memory_mib: memory as EC2 reports it, in MiB;
    max_enis / ipv4_per_eni: network interfaces of the default network card
    and IPv4 addresses per interface (0 ENIs means no pod networking data);
    hypervisor: "nitro", "xen", or "" for bare metal;
    prices: region -> on-demand Linux USD/hour, possibly empty;
    spot_prices: region -> zone -> spot Linux USD/hour (a refresh's market prices), possibly empty;
    zones: region -> the zones the type is offered in, for regions whose offerings were recorded.
    """

    name: str
    category: str
    family: str
    generation: int
    size: str
    arch: str
    hypervisor: str
    vcpu: int
    memory_mib: int
    max_enis: int
    ipv4_per_eni: int
    gpu_count: int
    prices: Mapping[str, float] = field(default_factory=dict, hash=False)
    spot_prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict, hash=False)
    zones: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # Read-only views keep the frozen dataclass honest about its prices and zones.
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))
        spot = {region: MappingProxyType(dict(by_zone)) for region, by_zone in self.spot_prices.items()}
        object.__setattr__(self, "spot_prices", MappingProxyType(spot))
        zones = {region: tuple(sorted(set(names))) for region, names in self.zones.items()}
        object.__setattr__(self, "zones", MappingProxyType(zones))

    def labels(self) -> Mapping[str, str]:
        """The well-known node labels Karpenter v1 puts on a node of this type.

        As in Karpenter, `instance-gpu-count` exists only on types with GPUs,
        and bare-metal types carry `instance-hypervisor` with an empty value.
        """
        labels = {
            LABEL_INSTANCE_TYPE: self.name,
            LABEL_ARCH: self.arch,
            LABEL_OS: "linux",
            LABEL_CATEGORY: self.category,
            LABEL_FAMILY: self.family,
            LABEL_GENERATION: str(self.generation),
            LABEL_SIZE: self.size,
            LABEL_CPU: str(self.vcpu),
            LABEL_MEMORY: str(self.memory_mib),
            LABEL_HYPERVISOR: self.hypervisor,
        }
        if self.gpu_count > 0:
            labels[LABEL_GPU_COUNT] = str(self.gpu_count)
        return MappingProxyType(labels)

    def price(self, region: str) -> float | None:
        """On-demand Linux USD/hour in `region`, or None when the catalog has none."""
        return self.prices.get(region)

    def spot_price(self, region: str, zone: str) -> float | None:
        """Spot Linux USD/hour in `zone` of `region` from the catalog's market prices, or None."""
        return self.spot_prices.get(region, {}).get(zone)

    def offered_zones(self, region: str) -> tuple[str, ...] | None:
        """The zones of `region` the type is offered in, or None when the catalog did not record them."""
        return self.zones.get(region)

    def to_dict(self, zone_ids: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The catalog-file form of this type (see `instance_type_from_dict`); zone_ids: zone name ->
        zone ID, to key its spot prices and offerings by ID (a zone the map lacks keeps its name)."""
        ids = zone_ids or {}
        obj: dict[str, Any] = {
            "name": self.name,
            "category": self.category,
            "family": self.family,
            "generation": self.generation,
            "size": self.size,
            "arch": self.arch,
            "hypervisor": self.hypervisor,
            "vcpu": self.vcpu,
            "memory_mib": self.memory_mib,
            "max_enis": self.max_enis,
            "ipv4_per_eni": self.ipv4_per_eni,
            "gpu_count": self.gpu_count,
            "prices": {region: self.prices[region] for region in sorted(self.prices)},
        }
        # Written only when known, so that the bundled catalog keeps one short line per type.
        if self.spot_prices:
            obj["spot_prices"] = {
                region: dict(sorted((ids.get(zone, zone), price) for zone, price in by_zone.items()))
                for region, by_zone in sorted(self.spot_prices.items())
            }
        if self.zones:
            obj["zones"] = {
                region: sorted(ids.get(zone, zone) for zone in self.zones[region]) for region in sorted(self.zones)
            }
        return obj


_INT_FIELDS = ("generation", "vcpu", "memory_mib", "max_enis", "ipv4_per_eni", "gpu_count")
_STR_FIELDS = ("name", "category", "family", "size", "arch", "hypervisor")


def instance_type_from_dict(
    obj: Any, where: str = "instance type", zone_names: Mapping[str, str] | None = None
) -> InstanceType:
    """Build an InstanceType from its catalog-file form, validating every field.

    zone_names: zone ID -> zone name, for a file that keys zones by ID (None: keyed by name)."""
    if not isinstance(obj, Mapping):
        raise SizingInputError(f"{where}: expected an object, got {type(obj).__name__}")
    expected = set(_INT_FIELDS) | set(_STR_FIELDS) | {"prices"}
    optional = {"spot_prices", "zones"}
    missing = sorted(expected - set(obj))
    unknown = sorted(set(obj) - expected - optional)
    if missing or unknown:
        raise SizingInputError(
            f"{where}: missing fields {missing}, unknown fields {unknown}; allowed fields are "
            f"{sorted(expected | optional)}"
        )
    name = obj["name"]
    where = f"{where} {name!r}" if isinstance(name, str) else where
    for key in _STR_FIELDS:
        if not isinstance(obj[key], str):
            raise SizingInputError(f"{where}: {key} must be a string, got {echo(obj[key])}")
    for key in _INT_FIELDS:
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SizingInputError(f"{where}: {key} must be a non-negative integer, got {echo(value)}")
    if not _NAME_PATTERN.match(name):
        raise SizingInputError(f"{where}: name must look like 'family.size', got {echo(name)}")
    if obj["arch"] not in ARCHITECTURES:
        raise SizingInputError(f"{where}: arch must be one of {list(ARCHITECTURES)}, got {echo(obj['arch'])}")
    if obj["hypervisor"] not in HYPERVISORS:
        raise SizingInputError(f"{where}: hypervisor must be one of {list(HYPERVISORS)}, got {echo(obj['hypervisor'])}")
    if obj["vcpu"] < 1 or obj["memory_mib"] < 1:
        raise SizingInputError(
            f"{where}: vcpu and memory_mib must be at least 1, got {obj['vcpu']} and {obj['memory_mib']}"
        )
    prices = obj["prices"]
    if not isinstance(prices, Mapping):
        raise SizingInputError(f"{where}: prices must be an object region -> USD/hour, got {echo(prices)}")
    for region, price in prices.items():
        if (
            not isinstance(region, str)
            or isinstance(price, bool)
            or not isinstance(price, (int, float))
            or not math.isfinite(price)
            or price <= 0
        ):
            raise SizingInputError(
                f"{where}: prices[{echo(region)}] must be a positive number of USD/hour, got {echo(price)}"
            )
    spot_prices = _spot_prices_from(obj.get("spot_prices", {}), where, zone_names)
    zones = _zones_from(obj.get("zones", {}), where, zone_names)
    return InstanceType(
        name=name,
        category=obj["category"],
        family=obj["family"],
        generation=obj["generation"],
        size=obj["size"],
        arch=obj["arch"],
        hypervisor=obj["hypervisor"],
        vcpu=obj["vcpu"],
        memory_mib=obj["memory_mib"],
        max_enis=obj["max_enis"],
        ipv4_per_eni=obj["ipv4_per_eni"],
        gpu_count=obj["gpu_count"],
        prices={region: float(price) for region, price in prices.items()},
        spot_prices=spot_prices,
        zones=zones,
    )


def _region_key(region: object, where: str) -> str:
    if not isinstance(region, str) or not _REGION_PATTERN.match(region):
        raise SizingInputError(f"{where}: {str(region)[:80]!r} is not an AWS region name such as 'us-east-1'")
    return region


def _zone_name(zone: object, region: str, where: str, zone_names: Mapping[str, str] | None = None) -> str:
    """A zone key of the file as a zone name: the key itself, or with zone_names (ID -> name) the
    name of the zone ID it is."""
    if zone_names is not None:
        if not isinstance(zone, str) or zone not in zone_names:
            raise SizingInputError(
                f"{where}: {str(zone)[:80]!r} is not a zone ID of the file's `zones` map "
                f"({', '.join(sorted(zone_names)) or 'empty'}); a file of formatVersion {ZONE_ID_FORMAT_VERSION} keys "
                "zones by the IDs its map lists"
            )
        zone = zone_names[zone]
    # Availability Zones and Local Zones alike are named after their region (ap-northeast-1a, us-west-2-lax-1a).
    if not isinstance(zone, str) or not re.match(rf"^{re.escape(region)}[a-z0-9-]{{1,20}}$", zone):
        if isinstance(zone, str) and _ZONE_ID_PATTERN.match(zone):
            raise SizingInputError(
                f"{where}: {zone!r} is a zone ID, but the file has no `zones` map to name it with; zone IDs are "
                f"allowed only in a file of formatVersion {ZONE_ID_FORMAT_VERSION} whose `zones` lists each zone's "
                f"name and ID (as `sizing catalog refresh` writes), else zones are names such as '{region}a'"
            )
        raise SizingInputError(f"{where}: {str(zone)[:80]!r} is not a zone of {region} such as '{region}a'")
    return zone


def _bounded(mapping: object, limit: int, where: str, what: str) -> Mapping[Any, Any]:
    if not isinstance(mapping, Mapping):
        raise SizingInputError(f"{where} must be an object of {what}, got {type(mapping).__name__}")
    if len(mapping) > limit:
        raise SizingInputError(f"{where} lists {len(mapping)} {what}; at most {limit} are allowed")
    return mapping


def _spot_prices_from(
    value: object, where: str, zone_names: Mapping[str, str] | None = None
) -> dict[str, dict[str, float]]:
    result: dict[str, dict[str, float]] = {}
    for region, by_zone in _bounded(value, MAX_REGIONS, f"{where}: spot_prices", "regions").items():
        region = _region_key(region, f"{where}: spot_prices")
        at = f"{where}: spot_prices[{region!r}]"
        result[region] = {}
        for zone, price in _bounded(by_zone, MAX_ZONES_PER_REGION, at, "zones").items():
            zone = _zone_name(zone, region, at, zone_names)
            if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price) or price <= 0:
                raise SizingInputError(f"{at}[{zone!r}] must be a positive number of USD/hour, got {echo(price)}")
            result[region][zone] = float(price)
    return result


def _zones_from(value: object, where: str, zone_names: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    result: dict[str, tuple[str, ...]] = {}
    for region, names in _bounded(value, MAX_REGIONS, f"{where}: zones", "regions").items():
        region = _region_key(region, f"{where}: zones")
        at = f"{where}: zones[{region!r}]"
        if not isinstance(names, list) or len(names) > MAX_ZONES_PER_REGION:
            raise SizingInputError(
                f"{at} must be a list of at most {MAX_ZONES_PER_REGION} zone names, got {names!r:.80}"
            )
        result[region] = tuple(sorted({_zone_name(name, region, at, zone_names) for name in names}))
    return result


@dataclass(frozen=True)
class CatalogInfo:
    """What a catalog knows beyond its types, and where it was read from.

    source: the file's own description; path: the file read, None for the bundled catalog;
    region: the one region a refreshed file describes (None: a catalog of several regions' prices,
    such as the bundled one); prices_as_of / spot_prices_as_of / offerings_as_of: region -> date
    or UTC time the on-demand prices, the spot prices and the offerings were taken; gaps: what a
    refresh could not fetch and why (a permission it lacked); zone_ids: zone name -> zone ID in the
    account that refreshed the file, whose names the types' zones are (empty: the file keys zones by
    name and has no map); account: that account's ID, when the refresh recorded it.
    """

    source: str = ""
    path: str | None = None
    region: str | None = None
    prices_as_of: Mapping[str, str] = field(default_factory=dict, hash=False)
    spot_prices_as_of: Mapping[str, str] = field(default_factory=dict, hash=False)
    offerings_as_of: Mapping[str, str] = field(default_factory=dict, hash=False)
    gaps: tuple[str, ...] = ()
    zone_ids: Mapping[str, str] = field(default_factory=dict, hash=False)
    account: str | None = None

    def __post_init__(self) -> None:
        for name in ("prices_as_of", "spot_prices_as_of", "offerings_as_of", "zone_ids"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def bundled(self) -> bool:
        return self.path is None

    @property
    def refreshed(self) -> bool:
        """Whether the file was written by a refresh (it then describes one region)."""
        return self.region is not None

    def describe(self) -> str:
        """How a report names the catalog: "the bundled catalog" or "catalog file 'x.json'"."""
        return "the bundled catalog" if self.bundled else f"catalog file {self.path!r}"

    def zone_note(self) -> str | None:
        """What a report says of a catalog whose zones were read by zone ID (None for one keyed by name)."""
        if not self.zone_ids:
            return None
        whose = f"account {self.account}, which refreshed it" if self.account else "the refreshing account"
        shown = ", ".join(f"{name}={self.zone_ids[name]}" for name in sorted(self.zone_ids))
        return (
            f"zones of {self.describe()} were read by zone ID and named with the map of {whose} "
            f"({shown}); in another account a zone name may be another physical zone, so compare "
            "zones by ID"
        )

    def header(self) -> dict[str, Any]:
        """The header keys of the catalog file (see `catalog_document`)."""
        header: dict[str, Any] = {"source": self.source}
        if self.zone_ids:
            header["zones"] = [{"id": self.zone_ids[name], "name": name} for name in sorted(self.zone_ids)]
        if self.account is not None:
            header["account"] = self.account
        if self.region is not None:
            header["region"] = self.region
        for key, value in (
            ("pricesAsOf", self.prices_as_of),
            ("spotPricesAsOf", self.spot_prices_as_of),
            ("offeringsAsOf", self.offerings_as_of),
        ):
            if value:
                header[key] = dict(sorted(value.items()))
        if self.gaps:
            header["gaps"] = list(self.gaps)
        return header


@dataclass(frozen=True)
class Catalog:
    """A catalog file read: its types sorted by name, and what it says about them."""

    instance_types: tuple[InstanceType, ...]
    info: CatalogInfo


def _as_of(value: object, where: str) -> dict[str, str]:
    result = {}
    for region, when in _bounded(value, MAX_REGIONS, where, "regions").items():
        region = _region_key(region, where)
        if not isinstance(when, str) or not _AS_OF_PATTERN.match(when):
            raise SizingInputError(
                f"{where}[{region!r}] must be a date such as '2026-07-20' or a UTC time such as "
                f"'2026-07-20T09:30:00Z', got {str(when)[:80]!r}"
            )
        result[region] = when
    return result


def catalog_info_from_document(document: Mapping[str, Any], where: str, path: str | None = None) -> CatalogInfo:
    """The header of a parsed catalog file, validated."""
    known = {
        "formatVersion",
        "zones",
        "account",
        "instanceTypes",
        "source",
        "region",
        "pricesAsOf",
        "spotPricesAsOf",
        "offeringsAsOf",
        "gaps",
    }
    unknown = sorted(str(key)[:40] for key in document if key not in known)
    if unknown:
        raise SizingInputError(f"{where}: unknown keys {unknown}; allowed keys are {sorted(known)}")
    source = document.get("source", "")
    if not isinstance(source, str) or len(source) > MAX_TEXT:
        raise SizingInputError(f"{where}: source must be a text of at most {MAX_TEXT} characters")
    region = document.get("region")
    if region is not None:
        region = _region_key(region, f"{where}: region")
    gaps = document.get("gaps", [])
    if (
        not isinstance(gaps, list)
        or len(gaps) > MAX_GAPS
        or not all(isinstance(gap, str) and len(gap) <= MAX_TEXT for gap in gaps)
    ):
        raise SizingInputError(f"{where}: gaps must be a list of at most {MAX_GAPS} short texts")
    account = document.get("account")
    if account is not None and (not isinstance(account, str) or not _ACCOUNT_PATTERN.match(account)):
        raise SizingInputError(f"{where}: account must be a 12-digit AWS account ID, got {echo(account)}")
    return CatalogInfo(
        zone_ids=zone_map(document, where),
        account=account,
        source=source,
        path=path,
        region=region,
        prices_as_of=_as_of(document.get("pricesAsOf", {}), f"{where}: pricesAsOf"),
        spot_prices_as_of=_as_of(document.get("spotPricesAsOf", {}), f"{where}: spotPricesAsOf"),
        offerings_as_of=_as_of(document.get("offeringsAsOf", {}), f"{where}: offeringsAsOf"),
        gaps=tuple(gaps),
    )


def zone_map(document: Mapping[str, Any], where: str) -> dict[str, str]:
    """Zone name -> zone ID from a catalog file's `zones` list, validated: required in a file of
    formatVersion 3 and allowed only there, each name and each ID listed once, at most
    MAX_ZONES_PER_REGION zones, all of the file's `region`."""
    version = document.get("formatVersion")
    if "zones" not in document:
        if version == ZONE_ID_FORMAT_VERSION:
            raise SizingInputError(
                f"{where}: formatVersion {ZONE_ID_FORMAT_VERSION} keys zones by zone ID and needs `zones`, the list "
                'of the refreshing account\'s zones ({"name": "us-east-1a", "id": "use1-az1"}, …); add it or '
                "refresh the catalog again"
            )
        return {}
    if version != ZONE_ID_FORMAT_VERSION:
        raise SizingInputError(
            f"{where}: `zones` (zone names and IDs) is allowed only with formatVersion {ZONE_ID_FORMAT_VERSION}, "
            f"whose zones are keyed by ID; got formatVersion {echo(version)}"
        )
    region = document.get("region")
    if not isinstance(region, str):
        raise SizingInputError(f"{where}: a file with `zones` needs `region`, the region its zones are of")
    region = _region_key(region, f"{where}: region")
    at = f"{where}: zones"
    entries = document["zones"]
    if not isinstance(entries, list) or len(entries) > MAX_ZONES_PER_REGION:
        raise SizingInputError(
            f'{at} must be a list of at most {MAX_ZONES_PER_REGION} objects {{"name": zone name, "id": zone ID}}, '
            f"got {str(entries)[:80]!r}"
        )
    ids: dict[str, str] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or set(entry) != {"name", "id"}:
            raise SizingInputError(f'{at}[{index}] must be an object with exactly "name" and "id", got {echo(entry)}')
        name = _zone_name(entry["name"], region, f"{at}[{index}].name")
        zone_id = entry["id"]
        if not isinstance(zone_id, str) or not _ZONE_ID_PATTERN.match(zone_id):
            raise SizingInputError(f"{at}[{index}].id must be a zone ID such as 'use1-az1', got {echo(zone_id)}")
        if name in ids:
            raise SizingInputError(f"{at}: zone name {name!r} is listed twice; each zone is listed once")
        if zone_id in ids.values():
            raise SizingInputError(f"{at}: zone ID {zone_id!r} is listed twice; each zone is listed once")
        ids[name] = zone_id
    return ids


def catalog_from_document(document: Any, where: str = "catalog") -> tuple[InstanceType, ...]:
    """Validate a parsed catalog file and return its types sorted by name."""
    if not isinstance(document, Mapping) or not isinstance(document.get("instanceTypes"), list):
        raise SizingInputError(f"{where}: expected an object with an 'instanceTypes' list")
    version = document.get("formatVersion")
    if isinstance(version, bool) or version not in READABLE_FORMAT_VERSIONS:
        raise SizingInputError(
            f"{where}: formatVersion must be one of {list(READABLE_FORMAT_VERSIONS)}, got {echo(version)}"
        )
    if len(document["instanceTypes"]) > MAX_INSTANCE_TYPES:
        raise SizingInputError(
            f"{where}: instanceTypes lists {len(document['instanceTypes']):,} types; at most {MAX_INSTANCE_TYPES:,} "
            "are allowed (EC2 offers about 1,000)"
        )
    # A file keyed by zone ID is read with its own map, once: the types carry zone names.
    ids = zone_map(document, where)
    zone_names = {zone_id: name for name, zone_id in ids.items()} if version == ZONE_ID_FORMAT_VERSION else None
    instances = [
        instance_type_from_dict(obj, f"{where}: instanceTypes[{index}]", zone_names)
        for index, obj in enumerate(document["instanceTypes"])
    ]
    duplicates = sorted(name for name, count in Counter(instance.name for instance in instances).items() if count > 1)
    if duplicates:
        raise SizingInputError(f"{where}: instance types listed more than once: {duplicates}")
    if not instances:
        raise SizingInputError(f"{where}: instanceTypes is empty; a catalog needs at least one type")
    return tuple(sorted(instances, key=lambda instance: instance.name))


def catalog_document(instances: Iterable[InstanceType], source: str, info: CatalogInfo | None = None) -> dict[str, Any]:
    """The catalog-file document for `instances` (sorted by name); info gives the header (its source wins)."""
    header = CatalogInfo(source=source) if info is None else info
    ids = dict(header.zone_ids)
    return {
        # A catalog with the refreshing account's zone map keys its zones by ID (version 3).
        "formatVersion": ZONE_ID_FORMAT_VERSION if ids else CATALOG_FORMAT_VERSION,
        **header.header(),
        "instanceTypes": [instance.to_dict(ids or None) for instance in sorted(instances, key=lambda i: i.name)],
    }


def dump_catalog_document(document: Mapping[str, Any]) -> str:
    """Stable text of a catalog document: header keys, then one line per type."""
    header = {key: value for key, value in document.items() if key != "instanceTypes"}
    lines = ["{"]
    for key in sorted(header):
        lines.append(f"  {json.dumps(key)}: {json.dumps(header[key], sort_keys=True)},")
    lines.append('  "instanceTypes": [')
    # Field order is the order of InstanceType.to_dict, which reads better than sorted keys.
    rows = [json.dumps(obj, separators=(", ", ": ")) for obj in document["instanceTypes"]]
    lines.extend(f"    {row}," for row in rows[:-1])
    if rows:
        lines.append(f"    {rows[-1]}")
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def _bundled() -> Catalog:
    return _read(BUNDLED_CATALOG_PATH, bundled=True)


def _read(path: Path, bundled: bool = False) -> Catalog:
    # Read as every input file is: a regular UTF-8 text file of bounded size.
    where = f"catalog file {str(path)!r}"
    text = read_text(path, where, kind="a catalog (JSON)")
    return catalog_from_text(text, where, None if bundled else str(path))


def catalog_from_text(text: str, where: str, path: str | None) -> Catalog:
    """The catalog of a catalog file's text (`where` names it in messages, `path` in its header)."""
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as error:
        raise SizingInputError(
            f"{where}: key {echo(error.key)} appears twice in one object; JSON readers would keep "
            "only the second, so remove one"
        ) from None
    except json.JSONDecodeError as error:
        raise SizingInputError(f"{where}: not valid JSON ({error})") from error
    except RecursionError:
        raise SizingInputError(f"{where}: not a catalog (its JSON nests too deep)") from None
    instances = catalog_from_document(document, where=where)
    return Catalog(instances, catalog_info_from_document(document, where, path))


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (json keeps the last of a key given twice)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def read_catalog(path: Path | None = None) -> Catalog:
    """A catalog file with its header; without `path`, the catalog bundled with the package (read once)."""
    if path is None:
        return _bundled()
    return _read(Path(path))


def load_catalog(path: Path | None = None) -> tuple[InstanceType, ...]:
    """The instance types of a catalog file, sorted by name.

    Without `path`, the catalog bundled with the package (loaded once).
    """
    return read_catalog(path).instance_types


def bundled_catalog_info() -> CatalogInfo:
    """The header of the bundled catalog: its source and the date of its prices."""
    return _bundled().info


def catalog_by_name(catalog: Iterable[InstanceType]) -> Mapping[str, InstanceType]:
    """Index the catalog by instance-type name."""
    return MappingProxyType({instance.name: instance for instance in catalog})
