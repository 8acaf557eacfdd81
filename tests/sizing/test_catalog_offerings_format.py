"""Catalog files with spot prices, offerings and dates: the header, the per-type fields, their checks."""

import json

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    CatalogInfo,
    InstanceType,
    bundled_catalog_info,
    catalog_by_name,
    catalog_document,
    dump_catalog_document,
    load_catalog,
    read_catalog,
)
from tests.catalogs import refreshed

REGION = "ap-northeast-1"
M5 = catalog_by_name(load_catalog())["m5.large"]


def refreshed_m5() -> InstanceType:
    zones = ["ap-northeast-1d", "ap-northeast-1a", "ap-northeast-1c"]
    return refreshed("m5.large", REGION, 0.124, {"ap-northeast-1c": 0.05, "ap-northeast-1a": 0.045}, zones)


def test_spot_prices_and_zones_round_trip_through_a_file(tmp_path):
    info = CatalogInfo(
        source="test",
        region=REGION,
        prices_as_of={REGION: "2026-08-01"},
        spot_prices_as_of={REGION: "2026-08-01T10:00:00Z"},
        offerings_as_of={REGION: "2026-08-01T10:00:00Z"},
        gaps=("nothing missing, really",),
    )
    path = tmp_path / "catalog.json"
    path.write_text(dump_catalog_document(catalog_document([refreshed_m5()], "test", info)))
    catalog = read_catalog(path)
    (m5,) = catalog.instance_types
    assert m5.spot_price(REGION, "ap-northeast-1a") == 0.045
    assert m5.spot_price(REGION, "ap-northeast-1d") is None
    assert m5.offered_zones(REGION) == ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"), "sorted"
    assert m5.offered_zones("us-east-1") is None, "no record for a region means not checked"
    assert catalog.info == CatalogInfo(**{**info.__dict__, "path": str(path)})
    assert catalog.info.refreshed and not catalog.info.bundled
    assert catalog.info.describe() == f"catalog file {str(path)!r}"


def test_types_without_spot_prices_or_zones_keep_their_short_line():
    line = json.dumps(M5.to_dict())
    assert "spot_prices" not in line and "zones" not in line


def test_bundled_catalog_info():
    info = bundled_catalog_info()
    assert info.bundled and not info.refreshed and info.region is None
    assert dict(info.prices_as_of) == {"us-east-1": "2026-07-20"}
    assert info.describe() == "the bundled catalog"


def test_a_version_1_file_still_reads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"formatVersion": 1, "source": "old", "instanceTypes": [M5.to_dict()]}))
    catalog = read_catalog(path)
    assert catalog.instance_types == (M5,) and catalog.info.source == "old" and not catalog.info.prices_as_of


def entry(**changes):
    return {**M5.to_dict(), **changes}


@pytest.mark.parametrize(
    "document, pattern",
    [
        (
            {"instanceTypes": [entry(spot_prices={REGION: {"us-east-1a": 0.1}})]},
            r"spot_prices\['ap-northeast-1'\]: 'us-east-1a' is not a zone of ap-northeast-1",
        ),
        (
            {"instanceTypes": [entry(spot_prices={REGION: {"ap-northeast-1a": -1}})]},
            r"spot_prices\['ap-northeast-1'\]\['ap-northeast-1a'\] must be a positive number of USD/hour, got -1",
        ),
        ({"instanceTypes": [entry(spot_prices={"tokyo": {}})]}, r"spot_prices: 'tokyo' is not an AWS region name"),
        ({"instanceTypes": [entry(spot_prices=[1])]}, r"spot_prices must be an object of regions, got list"),
        ({"instanceTypes": [entry(zones={REGION: "ap-northeast-1a"})]}, r"zones\['ap-northeast-1'\] must be a list"),
        (
            {"instanceTypes": [entry(zones={REGION: [f"ap-northeast-1{i}" for i in range(65)]})]},
            r"must be a list of at most 64 zone names",
        ),
        (
            {"instanceTypes": [entry(zones={f"xx-west-{i}": [] for i in range(65)})]},
            r"zones lists 65 regions; at most 64 are allowed",
        ),
        ({"region": "Tokyo", "instanceTypes": [entry()]}, r"region: 'Tokyo' is not an AWS region name"),
        (
            {"pricesAsOf": {REGION: "yesterday"}, "instanceTypes": [entry()]},
            r"pricesAsOf\['ap-northeast-1'\] must be a date such as '2026-07-20'",
        ),
        ({"gaps": "none", "instanceTypes": [entry()]}, r"gaps must be a list of at most 16 short texts"),
        ({"source": "x" * 501, "instanceTypes": [entry()]}, r"source must be a text of at most 500 characters"),
        ({"owner": "me", "instanceTypes": [entry()]}, r"unknown keys \['owner'\]"),
    ],
)
def test_bad_headers_and_fields_are_named(tmp_path, document, pattern):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"formatVersion": 2, **document}))
    with pytest.raises(SizingInputError, match=pattern):
        read_catalog(path)


def test_a_file_that_is_not_text_is_named(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00")
    # Read as every input file is: the reader's one message for bytes that are not UTF-8.
    expected = r"catalog file '.*binary.json' is not a text file \(byte 0 at line 1, column 1 is not UTF-8\); a catalog \(JSON\) is text"
    with pytest.raises(SizingInputError, match=expected):
        read_catalog(path)
