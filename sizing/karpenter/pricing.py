"""Per-region hourly cost of instance types, or a capacity-unit stand-in when prices are missing.

Rule: when every instance type considered has an on-demand price for the
region (from the catalog or an override), costs are USD/hour. Otherwise the
whole table switches to capacity units, so that costs stay comparable with
each other: a type costs its size in vCPU-equivalents, vCPU + memory GiB / 4
(the 1 vCPU : 4 GiB ratio of general-purpose types), and a note says so.
Mixing real prices with stand-ins would make the cheapest choice meaningless.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import CatalogInfo, InstanceType, catalog_by_name, load_catalog

BASIS_USD = "usd"
BASIS_CAPACITY = "capacity"
SOURCE_CATALOG = "catalog"
SOURCE_OVERRIDE = "override"
SOURCE_CAPACITY = "capacity"
MIB_PER_GIB = 1024
GIB_PER_VCPU_EQUIVALENT = 4
DEFAULT_OVERRIDES_FIELD = "capacity.priceOverrides"
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")
_MISSING_EXAMPLES_SHOWN = 5


@dataclass(frozen=True)
class PriceTable:
    """Cost per instance type for one region.

    basis: "usd" (costs are on-demand USD/hour) or "capacity" (costs are
    vCPU-equivalents, see `capacity_units`); sources: per type, "catalog",
    "override" or "capacity"; missing: types without a USD price, sorted;
    note: a sentence explaining a capacity basis, else None.
    """

    region: str
    basis: str
    costs: Mapping[str, float]
    sources: Mapping[str, str]
    missing: tuple[str, ...] = ()
    note: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "costs", MappingProxyType(dict(self.costs)))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    @property
    def in_usd(self) -> bool:
        """True when every cost is USD/hour."""
        return self.basis == BASIS_USD

    @property
    def unit(self) -> str:
        """The unit of `costs`: "USD/hour" or "vCPU-equivalent"."""
        return "USD/hour" if self.in_usd else "vCPU-equivalent"

    def cost(self, instance_name: str) -> float:
        """Cost of one node of the type per hour, in `unit`."""
        try:
            return self.costs[instance_name]
        except KeyError:
            raise SizingInputError(
                f"instance type {instance_name!r} is not in the price table for {self.region}"
            ) from None


def capacity_units(instance: InstanceType) -> float:
    """Size of a type in vCPU-equivalents: vCPU + memory GiB / 4."""
    return instance.vcpu + instance.memory_mib / MIB_PER_GIB / GIB_PER_VCPU_EQUIVALENT


def validate_region(region: object) -> str:
    """Return `region` if it looks like an AWS region name (e.g. "us-east-1")."""
    if not isinstance(region, str) or not _REGION.match(region):
        raise SizingInputError(f"region must be an AWS region name such as 'us-east-1', got {region!r}")
    return region


def check_catalog_region(info: CatalogInfo, region: str, catalog_field: str, region_field: str) -> None:
    """Refuse a refreshed catalog of another region than the one planned, naming both.

    A refreshed catalog holds one region's prices, spot prices and offerings: planning another
    region with it would silently price and filter with the wrong region's facts.
    """
    if info.region is not None and info.region != region:
        raise SizingInputError(
            f"{catalog_field}: {info.describe()} was refreshed for {info.region}, but the plan is for {region} "
            f"({region_field}); refresh a catalog for {region} (python -m sizing catalog refresh --region {region}) "
            f"or plan for {info.region}"
        )


def validate_price_overrides(
    overrides: Mapping[str, object],
    known_names: Iterable[str],
    field_name: str = DEFAULT_OVERRIDES_FIELD,
) -> Mapping[str, float]:
    """Check that every override names a known type and is a positive, finite USD/hour."""
    if not isinstance(overrides, Mapping):
        raise SizingInputError(
            f"{field_name} must be a mapping of instance type to USD/hour, got {type(overrides).__name__}"
        )
    known = set(known_names)
    checked = {}
    for name, price in overrides.items():
        if name not in known:
            raise SizingInputError(
                f"{field_name}[{name!r}]: unknown instance type; use a name from the catalog such as 'm5.large'"
            )
        if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price) or price <= 0:
            raise SizingInputError(f"{field_name}[{name!r}] must be a positive number of USD/hour, got {price!r}")
        checked[name] = float(price)
    return checked


def price_table(
    instances: Sequence[InstanceType],
    region: str,
    overrides: Mapping[str, float] | None = None,
    catalog: Sequence[InstanceType] | None = None,
    overrides_field: str = DEFAULT_OVERRIDES_FIELD,
) -> PriceTable:
    """Costs of `instances` in `region`: USD/hour if all are priced, else capacity units.

    overrides: instance type -> USD/hour, taking precedence over the catalog;
    every key must be a type of `catalog` (the bundled catalog by default).
    overrides_field names the overrides in error messages and the note.
    """
    validate_region(region)
    known = catalog_by_name(catalog if catalog is not None else load_catalog())
    checked = validate_price_overrides(overrides or {}, list(known) + [i.name for i in instances], overrides_field)
    usd: dict[str, float] = {}
    sources: dict[str, str] = {}
    missing = []
    for instance in instances:
        catalog_price = instance.price(region)
        if instance.name in checked:
            usd[instance.name], sources[instance.name] = checked[instance.name], SOURCE_OVERRIDE
        elif catalog_price is not None:
            usd[instance.name], sources[instance.name] = catalog_price, SOURCE_CATALOG
        else:
            missing.append(instance.name)
    if not missing:
        return PriceTable(region=region, basis=BASIS_USD, costs=usd, sources=sources)
    missing = sorted(set(missing))
    names = {instance.name for instance in instances}
    examples = ", ".join(missing[:_MISSING_EXAMPLES_SHOWN]) + (", …" if len(missing) > _MISSING_EXAMPLES_SHOWN else "")
    source = "the bundled catalog" if catalog is None else "the catalog"
    note = (
        f"no on-demand prices for {region} in {source} for {len(missing)} of {len(names)} types "
        f"({examples}); costs below are in capacity units (vCPU + memory GiB / {GIB_PER_VCPU_EQUIVALENT}), "
        f"not USD; set {overrides_field} or refresh the catalog"
    )
    return PriceTable(
        region=region,
        basis=BASIS_CAPACITY,
        costs={instance.name: capacity_units(instance) for instance in instances},
        sources={instance.name: SOURCE_CAPACITY for instance in instances},
        missing=tuple(missing),
        note=note,
    )
