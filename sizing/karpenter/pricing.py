"""Per-region hourly cost of instance types, on-demand and spot, and where each price comes from.

On-demand rule: when every instance type considered has an on-demand price for
the region (from the catalog or an override), costs are USD/hour. Otherwise the
whole table switches to capacity units, so that costs stay comparable with
each other: a type costs its size in vCPU-equivalents, vCPU + memory GiB / 4
(the 1 vCPU : 4 GiB ratio of general-purpose types), and a note says so.
Mixing real prices with stand-ins would make the cheapest choice meaningless.

Sources of an on-demand price: "catalog" (the bundled catalog, or a catalog file
not written by a refresh), "refresh" (a catalog file `catalog refresh` wrote for
the region), "override" (the user's price) or "capacity" (the stand-in).

Spot is priced one way for the whole plan (`SpotPricing`), in this order:
1. a user-set expected discount below on-demand (`capacity.spotDiscountPercent`,
   `plan --spot-discount`), which wins over market data because the user chose it;
2. the market prices of a refreshed catalog, per type and zone (USD costs only): a
   type without one in a zone has no spot offering there, as in Karpenter, whose
   spot offerings are available only where it knows a price
   (aws/karpenter-provider-aws v1.14 `pkg/providers/instancetype/offering/base_resolver.go`);
3. otherwise spot is priced at on-demand: an upper bound on the spot bill.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from sizing.errors import SizingInputError, echo
from sizing.karpenter.catalog import CatalogInfo, InstanceType, catalog_by_name, load_catalog, read_catalog

BASIS_USD = "usd"
BASIS_CAPACITY = "capacity"
SOURCE_CATALOG = "catalog"
SOURCE_REFRESH = "refresh"
SOURCE_OVERRIDE = "override"
SOURCE_CAPACITY = "capacity"
SPOT_MARKET = "spot-market"
SPOT_DISCOUNT = "spot-discount"
SPOT_AT_ON_DEMAND = "spot-at-on-demand"
SPOT_SOURCES = (SPOT_MARKET, SPOT_DISCOUNT, SPOT_AT_ON_DEMAND)
DEFAULT_DISCOUNT_FIELD = "capacity.spotDiscountPercent"
MAX_DISCOUNT_PERCENT = 99.0
MIB_PER_GIB = 1024
GIB_PER_VCPU_EQUIVALENT = 4
DEFAULT_OVERRIDES_FIELD = "capacity.priceOverrides"
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")
_MISSING_EXAMPLES_SHOWN = 5


@dataclass(frozen=True)
class SpotPricing:
    """How spot nodes are priced in one plan.

    source: SPOT_DISCOUNT, SPOT_MARKET or SPOT_AT_ON_DEMAND; discount_percent and
    discount_field: the user's expected discount below on-demand and the setting it came
    from; as_of: when the market prices were taken; market: type -> zone -> spot cost per
    hour (SPOT_MARKET only: a type or zone missing there has no spot offering); passed_over:
    why the catalog's market prices, if any, were not used.
    """

    source: str
    discount_percent: float | None = None
    discount_field: str | None = None
    as_of: str | None = None
    market: Mapping[str, Mapping[str, float]] = field(default_factory=dict, hash=False)
    passed_over: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SPOT_SOURCES:
            raise SizingInputError(f"spot price source must be one of {list(SPOT_SOURCES)}, got {self.source!r}")
        market = {name: MappingProxyType(dict(by_zone)) for name, by_zone in self.market.items()}
        object.__setattr__(self, "market", MappingProxyType(market))

    def uniform_cost(self, on_demand_cost: float) -> float | None:
        """A type's spot cost in every zone, from its on-demand cost; None for market prices (per zone)."""
        if self.source == SPOT_DISCOUNT and self.discount_percent is not None:
            return on_demand_cost * (1 - self.discount_percent / 100)
        if self.source == SPOT_AT_ON_DEMAND:
            return on_demand_cost
        return None

    @property
    def tag(self) -> str:
        """A short label a report puts next to every spot cost."""
        if self.source == SPOT_DISCOUNT:
            return f"spot {self.discount_percent:g} % below on-demand ({self.discount_field})"
        if self.source == SPOT_MARKET:
            return f"spot at market prices of {self.as_of}"
        return "spot priced at on-demand: an upper bound"

    def sentence(self, region: str) -> str:
        """What drives the price of a spot node, for the report's price section."""
        if self.source == SPOT_DISCOUNT:
            text = (
                f"a user-set expected discount of {self.discount_percent:g} % below the on-demand price "
                f"({self.discount_field}), the same for every type and zone"
            )
        elif self.source == SPOT_MARKET:
            text = (
                f"market prices per type and zone in {region} taken at {self.as_of} "
                "(a type without one in a zone has no spot offering there); spot prices move, refresh to follow them"
            )
        else:
            text = "priced at on-demand: an upper bound on the spot bill"
        return text + (f"; {self.passed_over}" if self.passed_over else "")


@dataclass(frozen=True)
class PriceTable:
    """Cost per instance type for one region.

    basis: "usd" (costs are on-demand USD/hour) or "capacity" (costs are
    vCPU-equivalents, see `capacity_units`); sources: per type, "catalog",
    "refresh", "override" or "capacity"; missing: types without a USD price, sorted;
    note: a sentence explaining a capacity basis, else None; catalog: the catalog
    the prices come from; spot: how spot is priced (in the same unit as `costs`).
    """

    region: str
    basis: str
    costs: Mapping[str, float]
    sources: Mapping[str, str]
    missing: tuple[str, ...] = ()
    note: str | None = None
    catalog: CatalogInfo = field(default_factory=CatalogInfo, hash=False)
    spot: SpotPricing = SpotPricing(SPOT_AT_ON_DEMAND)
    overrides_field: str = DEFAULT_OVERRIDES_FIELD

    def __post_init__(self) -> None:
        object.__setattr__(self, "costs", MappingProxyType(dict(self.costs)))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    def source_of(self, instance_name: str, capacity_type: str) -> str:
        """Where the price of a node of this type and capacity type comes from: a spot source for
        spot nodes, else the type's on-demand source."""
        if capacity_type == "spot":
            return self.spot.source
        return self.sources.get(instance_name, SOURCE_CAPACITY if not self.in_usd else SOURCE_CATALOG)

    def describe_source(self, source: str) -> str:
        """A source tag in words, with the catalog's name, region and date where they apply."""
        info = self.catalog
        date = info.prices_as_of.get(self.region)
        if source == SOURCE_OVERRIDE:
            return f"the user's price overrides ({self.overrides_field})"
        if source == SOURCE_CAPACITY:
            return f"capacity units (vCPU + memory GiB / {GIB_PER_VCPU_EQUIVALENT}), not USD"
        if source == SOURCE_REFRESH:
            return f"{info.describe()}, refreshed for {self.region}" + (f" on {date}" if date else "")
        if source in SPOT_SOURCES:
            return self.spot.sentence(self.region)
        return info.describe() + (f", {self.region} prices of {date}" if date else "")

    def spot_cost(self, instance_name: str, zone: str | None = None) -> float | None:
        """Spot cost per hour of one node of the type (in `unit`): in `zone`, or in its cheapest
        zone when None; None where it has no spot offering (market prices only)."""
        uniform = self.spot.uniform_cost(self.cost(instance_name))
        if uniform is not None:
            return uniform
        by_zone = self.spot.market.get(instance_name, {})
        if zone is not None:
            return by_zone.get(zone)
        return min(by_zone.values()) if by_zone else None

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
        raise SizingInputError(f"region must be an AWS region name such as 'us-east-1', got {echo(region)}")
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
                f"{field_name}[{echo(name)}]: unknown instance type; use a name from the catalog such as 'm5.large'"
            )
        if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price) or price <= 0:
            raise SizingInputError(
                f"{field_name}[{echo(name)}] must be a positive number of USD/hour, got {echo(price)}"
            )
        checked[name] = float(price)
    return checked


def validate_spot_discount(value: object, field_name: str = DEFAULT_DISCOUNT_FIELD) -> float:
    """A spot discount in percent below on-demand: a number from 0 to 99."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= MAX_DISCOUNT_PERCENT
    ):
        raise SizingInputError(
            f"{field_name} must be a percentage below the on-demand price from 0 to {MAX_DISCOUNT_PERCENT:g} "
            f"(such as 60), got {echo(value)}"
        )
    return float(value)


@dataclass(frozen=True)
class SpotDiscount:
    """A user's expected spot discount: `percent` below on-demand, set by `set_by` (a config key or option)."""

    percent: float
    set_by: str = DEFAULT_DISCOUNT_FIELD

    def __post_init__(self) -> None:
        object.__setattr__(self, "percent", validate_spot_discount(self.percent, self.set_by))


def spot_pricing(
    instances: Sequence[InstanceType],
    region: str,
    info: CatalogInfo,
    in_usd: bool,
    discount_percent: float | None = None,
    discount_field: str = DEFAULT_DISCOUNT_FIELD,
) -> SpotPricing:
    """How spot is priced for `instances` in `region` (see the module docstring for the order)."""
    market_as_of = info.spot_prices_as_of.get(region)
    if discount_percent is not None:
        discount = validate_spot_discount(discount_percent, discount_field)
        passed_over = (
            f"{info.describe()} has market prices of {market_as_of}, which the discount overrides"
            if market_as_of
            else None
        )
        return SpotPricing(SPOT_DISCOUNT, discount, discount_field, passed_over=passed_over)
    if market_as_of and in_usd:
        market = {i.name: dict(i.spot_prices[region]) for i in instances if i.spot_prices.get(region)}
        return SpotPricing(SPOT_MARKET, as_of=market_as_of, market=market)
    if market_as_of:
        reason = f"the market prices of {info.describe()} are USD and the on-demand costs are capacity units"
    else:
        reason = f"{info.describe()} has no spot prices for {region}"
        reason += "".join(f" ({gap})" for gap in info.gaps if gap.startswith("spot prices"))
    return SpotPricing(
        SPOT_AT_ON_DEMAND,
        passed_over=f"{reason}; set an expected discount ({discount_field}) or refresh the catalog "
        f"(python -m sizing catalog refresh --region {region})",
    )


def on_demand_source(info: CatalogInfo, region: str) -> str:
    """The source tag of a catalog's on-demand price in `region`: "refresh" for a refreshed catalog of it."""
    return SOURCE_REFRESH if info.refreshed and info.region == region else SOURCE_CATALOG


def price_table(
    instances: Sequence[InstanceType],
    region: str,
    overrides: Mapping[str, float] | None = None,
    catalog: Sequence[InstanceType] | None = None,
    overrides_field: str = DEFAULT_OVERRIDES_FIELD,
    catalog_info: CatalogInfo | None = None,
    spot_discount_percent: float | None = None,
    spot_discount_field: str = DEFAULT_DISCOUNT_FIELD,
) -> PriceTable:
    """Costs of `instances` in `region`: USD/hour if all are priced, else capacity units; and spot.

    overrides: instance type -> USD/hour, taking precedence over the catalog;
    every key must be a type of `catalog` (the bundled catalog by default).
    overrides_field names the overrides in error messages and the note.
    catalog_info: the header of the catalog the types come from (default: the bundled
    catalog's when `catalog` is None); spot_discount_percent: the user's expected spot
    discount, named `spot_discount_field` in messages.
    """
    validate_region(region)
    known = catalog_by_name(catalog if catalog is not None else load_catalog())
    info = catalog_info if catalog_info is not None else (read_catalog().info if catalog is None else CatalogInfo())
    checked = validate_price_overrides(overrides or {}, list(known) + [i.name for i in instances], overrides_field)
    catalog_source = on_demand_source(info, region)
    usd: dict[str, float] = {}
    sources: dict[str, str] = {}
    missing = []
    for instance in instances:
        catalog_price = instance.price(region)
        if instance.name in checked:
            usd[instance.name], sources[instance.name] = checked[instance.name], SOURCE_OVERRIDE
        elif catalog_price is not None:
            usd[instance.name], sources[instance.name] = catalog_price, catalog_source
        else:
            missing.append(instance.name)

    def spot(in_usd: bool) -> SpotPricing:
        return spot_pricing(instances, region, info, in_usd, spot_discount_percent, spot_discount_field)

    if not missing:
        return PriceTable(
            region=region,
            basis=BASIS_USD,
            costs=usd,
            sources=sources,
            catalog=info,
            spot=spot(in_usd=True),
            overrides_field=overrides_field,
        )
    missing = sorted(set(missing))
    names = {instance.name for instance in instances}
    examples = ", ".join(missing[:_MISSING_EXAMPLES_SHOWN]) + (", …" if len(missing) > _MISSING_EXAMPLES_SHOWN else "")
    source = (
        info.describe() if catalog_info is not None else ("the bundled catalog" if catalog is None else "the catalog")
    )
    note = (
        f"no on-demand prices for {region} in {source} for {len(missing)} of {len(names)} types "
        f"({examples}); costs below are in capacity units (vCPU + memory GiB / {GIB_PER_VCPU_EQUIVALENT}), "
        f"not USD; set {overrides_field} or refresh the catalog (python -m sizing catalog refresh --region {region})"
    )
    return PriceTable(
        region=region,
        basis=BASIS_CAPACITY,
        costs={instance.name: capacity_units(instance) for instance in instances},
        sources={instance.name: SOURCE_CAPACITY for instance in instances},
        missing=tuple(missing),
        note=note,
        catalog=info,
        spot=spot(in_usd=False),
        overrides_field=overrides_field,
    )
