"""Price tables: USD when every type is priced, capacity units otherwise; overrides and their errors."""

import math

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType, catalog_by_name, load_catalog
from sizing.karpenter.offerings import ANY_ZONE, node_offerings
from sizing.karpenter.pricing import (
    BASIS_CAPACITY,
    BASIS_USD,
    SPOT_AT_ON_DEMAND,
    SPOT_DISCOUNT,
    SPOT_MARKET,
    capacity_units,
    price_table,
    validate_region,
)
from tests.catalogs import refreshed, refreshed_info

CATALOG = load_catalog()
BY_NAME = catalog_by_name(CATALOG)
M5 = [BY_NAME[name] for name in ("m5.large", "m5.xlarge", "m5.2xlarge")]


def test_catalog_prices_in_us_east_1_are_usd():
    table = price_table(M5, "us-east-1")
    assert table.basis == BASIS_USD and table.in_usd and table.unit == "USD/hour"
    assert dict(table.costs) == {"m5.large": 0.096, "m5.xlarge": 0.192, "m5.2xlarge": 0.384}
    assert set(table.sources.values()) == {"catalog"}
    assert table.missing == () and table.note is None


def test_region_without_prices_plans_by_capacity():
    table = price_table(M5, "ap-northeast-1", {})
    assert table.basis == BASIS_CAPACITY and not table.in_usd and table.unit == "vCPU-equivalent"
    # vCPU + GiB / 4: m5.large is 2 vCPU and 8 GiB.
    assert dict(table.costs) == {"m5.large": 4.0, "m5.xlarge": 8.0, "m5.2xlarge": 16.0}
    assert table.missing == ("m5.2xlarge", "m5.large", "m5.xlarge")
    assert "no on-demand prices for ap-northeast-1 in the bundled catalog for 3 of 3 types" in table.note
    assert "capacity units" in table.note and "capacity.priceOverrides" in table.note and "refresh" in table.note


def test_overrides_for_every_type_give_usd():
    overrides = {"m5.large": 0.124, "m5.xlarge": 0.248, "m5.2xlarge": 0.496}
    table = price_table(M5, "ap-northeast-1", overrides)
    assert table.in_usd
    assert dict(table.costs) == overrides
    assert set(table.sources.values()) == {"override"}


def test_partial_overrides_still_fall_back_to_capacity_for_all():
    table = price_table(M5, "ap-northeast-1", {"m5.large": 0.124})
    assert table.basis == BASIS_CAPACITY
    assert table.cost("m5.large") == 4.0, "a lone real price must not mix with capacity units"
    assert table.missing == ("m5.2xlarge", "m5.xlarge")
    assert "for 2 of 3 types" in table.note


def test_override_takes_precedence_over_the_catalog():
    table = price_table(M5, "us-east-1", {"m5.large": 0.05})
    assert table.cost("m5.large") == 0.05 and table.sources["m5.large"] == "override"
    assert table.cost("m5.xlarge") == 0.192 and table.sources["m5.xlarge"] == "catalog"


def test_override_for_a_type_outside_the_instances_is_allowed_and_ignored():
    table = price_table(M5[:1], "us-east-1", {"c5.large": 0.085})
    assert dict(table.costs) == {"m5.large": 0.096}


def test_a_type_without_a_us_east_1_price_switches_to_capacity():
    unpriced = next(i for i in CATALOG if i.price("us-east-1") is None)
    table = price_table(M5 + [unpriced], "us-east-1")
    assert table.basis == BASIS_CAPACITY
    assert table.missing == (unpriced.name,)
    assert table.cost(unpriced.name) == capacity_units(unpriced)
    assert "for 1 of 4 types" in table.note
    assert price_table(M5 + [unpriced], "us-east-1", {unpriced.name: 1.5}).in_usd


def test_note_lists_only_a_few_missing_types():
    table = price_table(CATALOG[:40], "eu-west-1")
    assert "for 40 of 40 types" in table.note
    assert ", …)" in table.note and CATALOG[5].name not in table.note


def test_capacity_units_of_memory_heavy_types():
    assert capacity_units(BY_NAME["r5.large"]) == 2 + 16 / 4
    assert capacity_units(BY_NAME["t3.nano"]) == 2 + 0.5 / 4


def test_hand_made_catalog():
    tiny = InstanceType("x1.large", "x", "x1", 1, "large", "amd64", "nitro", 2, 4096, 3, 10, 0, {"eu-west-1": 0.1})
    table = price_table([tiny], "eu-west-1", {"x1.large": 0.2}, catalog=[tiny])
    assert table.cost("x1.large") == 0.2


@pytest.mark.parametrize(
    "overrides, pattern",
    [
        ({"m5.lage": 0.1}, r"capacity.priceOverrides\['m5.lage'\]: unknown instance type"),
        ({"m5.large": 0}, r"capacity.priceOverrides\['m5.large'\] must be a positive number of USD/hour, got 0"),
        ({"m5.large": -0.1}, r"got -0.1"),
        ({"m5.large": math.nan}, r"got nan"),
        ({"m5.large": math.inf}, r"got inf"),
        ({"m5.large": True}, r"got True"),
        ({"m5.large": "0.1"}, r"got '0.1'"),
        ([("m5.large", 0.1)], r"capacity.priceOverrides must be a mapping of instance type to USD/hour, got list"),
    ],
)
def test_bad_overrides(overrides, pattern):
    with pytest.raises(SizingInputError, match=pattern):
        price_table(M5, "us-east-1", overrides)


def test_error_uses_the_given_field_name():
    with pytest.raises(SizingInputError, match=r"^stack.prices\['nope.large'\]"):
        price_table(M5, "us-east-1", {"nope.large": 1.0}, overrides_field="stack.prices")


@pytest.mark.parametrize("region", ["", "US-EAST-1", "us-east", "useast1", None, 1])
def test_bad_region(region):
    with pytest.raises(SizingInputError, match="region must be an AWS region name such as 'us-east-1'"):
        price_table(M5, region)


def test_valid_regions():
    for region in ("us-east-1", "ap-northeast-1", "us-gov-west-1", "eu-central-2"):
        assert validate_region(region) == region


def test_cost_of_a_type_not_in_the_table():
    with pytest.raises(SizingInputError, match="instance type 'c5.large' is not in the price table for us-east-1"):
        price_table(M5, "us-east-1").cost("c5.large")


def test_tables_are_read_only():
    table = price_table(M5, "us-east-1")
    with pytest.raises(TypeError):
        table.costs["m5.large"] = 0.0


def test_note_names_a_given_catalog_neutrally():
    table = price_table(M5, "sa-east-1", catalog=CATALOG)
    assert "in the catalog for 3 of 3 types" in table.note


# -- spot and offerings ------------------------------------------------------------------------

TOKYO = "ap-northeast-1"
MARKET_INFO = refreshed_info(TOKYO, "tokyo.json")


def tokyo_m5(spot=None, zones=("ap-northeast-1a", "ap-northeast-1c")):
    return refreshed("m5.large", TOKYO, 0.124, spot, zones)


def test_spot_is_priced_at_on_demand_without_market_data_or_a_discount():
    table = price_table(M5, "us-east-1")
    assert table.spot.source == SPOT_AT_ON_DEMAND
    assert table.spot_cost("m5.large") == table.cost("m5.large") == 0.096
    assert "the bundled catalog has no spot prices for us-east-1" in table.spot.sentence("us-east-1")


def test_a_discount_wins_over_market_prices_and_says_so():
    m5 = tokyo_m5({"ap-northeast-1a": 0.04})
    table = price_table([m5], TOKYO, catalog=[m5], catalog_info=MARKET_INFO, spot_discount_percent=50)
    assert table.spot.source == SPOT_DISCOUNT and table.spot_cost("m5.large") == 0.062
    assert "has market prices of 2026-08-03T09:30:00Z, which the discount overrides" in table.spot.sentence(TOKYO)


def test_market_prices_are_per_zone_and_a_zone_without_one_has_no_spot_offering():
    m5 = tokyo_m5({"ap-northeast-1a": 0.04, "ap-northeast-1c": 0.05})
    table = price_table([m5], TOKYO, catalog=[m5], catalog_info=MARKET_INFO)
    assert table.spot.source == SPOT_MARKET and table.sources["m5.large"] == "refresh"
    assert table.spot_cost("m5.large") == 0.04 and table.spot_cost("m5.large", "ap-northeast-1c") == 0.05
    assert table.spot_cost("m5.large", "ap-northeast-1d") is None
    offerings = node_offerings(
        m5, table, frozenset({"ap-northeast-1a", "ap-northeast-1d"}), ("spot", "on-demand"), True
    )
    assert offerings == {"on-demand": {"ap-northeast-1a": 0.124}, "spot": {"ap-northeast-1a": 0.04}}


def test_market_prices_are_not_mixed_with_capacity_units():
    priced, unpriced = tokyo_m5({"ap-northeast-1a": 0.04}), InstanceType(**{**M5[1].to_dict(), "prices": {}})
    table = price_table([priced, unpriced], TOKYO, catalog=[priced, unpriced], catalog_info=MARKET_INFO)
    assert not table.in_usd and table.spot.source == SPOT_AT_ON_DEMAND
    assert "are USD and the on-demand costs are capacity units" in table.spot.sentence(TOKYO)


def test_without_recorded_offerings_or_market_prices_a_type_needs_no_offering_table():
    table = price_table(M5, "us-east-1", spot_discount_percent=30)
    assert node_offerings(M5[0], table, None, ("spot", "on-demand"), checked=False) is None
    checked = node_offerings(M5[0], table, None, ("spot",), checked=False)
    assert checked is None
    uniform = node_offerings(tokyo_m5(), price_table([tokyo_m5()], TOKYO, catalog=[tokyo_m5()]), None, ("spot",), True)
    assert uniform == {"spot": {"ap-northeast-1a": 0.124, "ap-northeast-1c": 0.124}}
    assert ANY_ZONE == ""
