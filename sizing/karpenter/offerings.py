"""Offerings: where each instance type can be launched, and at what price, as Karpenter sees it.

Karpenter's AWS provider gives every instance type one offering per zone and capacity type
(aws/karpenter-provider-aws v1.14 `pkg/providers/instancetype/offering/base_resolver.go`). An
offering is available only in the zones `DescribeInstanceTypeOfferings` lists for the type
(`pkg/providers/instancetype/instancetype.go`, `UpdateInstanceTypeOfferings`) and only where a
price is known: on-demand from the Price List API, spot per zone from the spot price history
(`pkg/providers/pricing/pricing.go`). Its scheduler keeps only types with an available offering
compatible with the NodeClaim (kubernetes-sigs/karpenter v1.14
`pkg/controllers/provisioning/scheduling/nodeclaim.go`).

Here, with a catalog that recorded the region's offerings (a refreshed one):

- a type offered in no zone of the region, or in none of the NodePool's zones, is not planned
  for that NodePool; one offered in some of them is planned only there (`node_offerings`, which
  the simulation's NodeClaims honour zone by zone);
- a type a refreshed catalog has no on-demand price for is not planned either (Karpenter has no
  on-demand offering without a price), unless the user prices it;
- a NodePool whose requirements leave no offered type is refused, naming the region and zones.

Without such a record, offerings are not checked, and the plan says so (`OfferingsCheck`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import CatalogInfo, InstanceType
from sizing.karpenter.pricing import SPOT_MARKET, PriceTable

ON_DEMAND = "on-demand"
SPOT = "spot"
# The zone key of an offering priced alike in every zone (the simulation's ANY_ZONE).
ANY_ZONE = ""
# Types named in a refusal, to keep the message short.
_EXAMPLES = 5


@dataclass(frozen=True)
class PoolOfferings:
    """One NodePool against the region's offerings: the types its requirements allow that it
    cannot launch (type -> why), and zones of the NodePool where none of its types is offered."""

    pool: str
    zones: frozenset[str] | None
    excluded: Mapping[str, str] = field(default_factory=dict, hash=False)
    empty_zones: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "excluded", MappingProxyType(dict(sorted(self.excluded.items()))))


@dataclass(frozen=True)
class OfferingsCheck:
    """Whether the plan's types were checked against the region's offerings, and what that removed.

    checked: the catalog recorded the region's offerings (as_of: when); pools: per NodePool."""

    region: str
    checked: bool
    catalog: CatalogInfo
    as_of: str | None = None
    pools: tuple[PoolOfferings, ...] = ()

    def sentence(self) -> str:
        """What the report says about offerings."""
        if not self.checked:
            return (
                f"not checked: {self.catalog.describe()} records no offerings for {self.region}, so a type the "
                f"region or a zone lacks may be planned (python -m sizing catalog refresh --region {self.region} "
                "records them)"
            )
        removed = sum(len(pool.excluded) for pool in self.pools)
        text = f"checked against the offerings {self.catalog.describe()} recorded for {self.region} at {self.as_of}"
        if removed:
            text += f"; {removed} type{'s' if removed != 1 else ''} the requirements allow cannot be launched"
        empty = [f"{zone} (NodePool {pool.pool})" for pool in self.pools for zone in pool.empty_zones]
        if empty:
            text += f"; no type is offered in {', '.join(empty)}"
        return text


def offerings_recorded(info: CatalogInfo, region: str) -> bool:
    """Whether the catalog recorded which zones of `region` each type is offered in."""
    return region in info.offerings_as_of


def _prices_authoritative(info: CatalogInfo, region: str) -> bool:
    # Only a refresh of the region lists every price it has; the bundled table lacks some types.
    return info.refreshed and info.region == region and region in info.prices_as_of


def offered_types(
    instances: Sequence[InstanceType],
    region: str,
    zones: frozenset[str] | None,
    info: CatalogInfo,
    priced: Collection[str],
    pool: str,
    where: str,
) -> tuple[tuple[InstanceType, ...], PoolOfferings]:
    """The types of a NodePool that can be launched in `region` and its `zones` (None: any zone).

    priced: types the user gave an on-demand price. Raises naming the region and zones when
    none is left.
    """
    checked = offerings_recorded(info, region)
    authoritative = _prices_authoritative(info, region)
    kept: list[InstanceType] = []
    excluded: dict[str, str] = {}
    for instance in instances:
        offered = instance.offered_zones(region) if checked else None
        if offered is not None and not offered:
            excluded[instance.name] = f"not offered in {region}"
        elif offered is not None and zones is not None and not zones & set(offered):
            excluded[instance.name] = f"offered only in {', '.join(offered)}, none of the NodePool's zones"
        elif authoritative and instance.price(region) is None and instance.name not in priced:
            excluded[instance.name] = f"no on-demand price in {region}, so Karpenter offers none"
        else:
            kept.append(instance)
    if not kept:
        reasons = "; ".join(f"{name}: {why}" for name, why in list(sorted(excluded.items()))[:_EXAMPLES])
        more = f"; … ({len(excluded)} types)" if len(excluded) > _EXAMPLES else ""
        place = f"{region} zones {', '.join(sorted(zones))}" if zones is not None else region
        raise SizingInputError(
            f"{where}: none of the {len(instances)} instance types the requirements allow can be launched in "
            f"{place}, according to {info.describe()} ({reasons}{more}); widen the requirements or the zones"
        )
    empty: tuple[str, ...] = ()
    if checked and zones is not None:
        offered_somewhere = {zone for instance in kept for zone in instance.offered_zones(region) or ()}
        empty = tuple(sorted(zones - offered_somewhere))
    return tuple(kept), PoolOfferings(pool, zones, excluded, empty)


def node_offerings(
    instance: InstanceType,
    prices: PriceTable,
    zones: frozenset[str] | None,
    capacity_types: Sequence[str],
    checked: bool,
) -> Mapping[str, Mapping[str, float]] | None:
    """A type's offerings for a NodePool: capacity type -> zone -> cost per hour (in the price
    table's unit); zone ANY_ZONE stands for every zone. None when every zone and capacity type
    costs alike (offerings not checked, spot not priced per zone): the simulation then needs none.

    zones: the NodePool's (None: any zone of the region); checked: whether the catalog recorded
    the region's offerings.
    """
    market = prices.spot.source == SPOT_MARKET and SPOT in capacity_types
    if not checked and not market:
        return None
    region = prices.region
    offered: frozenset[str] | None = None
    if checked:
        offered = frozenset(instance.offered_zones(region) or ())
        if zones is not None:
            offered &= zones
    on_demand_cost = prices.cost(instance.name)

    def everywhere(cost: float) -> dict[str, float]:
        return {ANY_ZONE: cost} if offered is None else {zone: cost for zone in offered}

    table: dict[str, dict[str, float]] = {}
    if ON_DEMAND in capacity_types:
        table[ON_DEMAND] = everywhere(on_demand_cost)
    if SPOT in capacity_types:
        uniform = prices.spot.uniform_cost(on_demand_cost)
        if uniform is not None:
            table[SPOT] = everywhere(uniform)
        else:
            by_zone = prices.spot.market.get(instance.name, {})
            allowed = offered if offered is not None else zones
            table[SPOT] = {zone: cost for zone, cost in by_zone.items() if allowed is None or zone in allowed}
    return table
