"""Live catalog refresh with real boto3 clients and stubbed AWS responses (no network).

The responses follow the shapes botocore's service models give (and Stubber checks): pages
joined by NextToken, spot records with zone, price text and time, offerings by zone.
"""

import datetime as dt
import json
import sys

import pytest

boto3 = pytest.importorskip("boto3", reason="boto3 is optional; the refresh tests need it")
from botocore.stub import Stubber  # noqa: E402

from sizing import cli  # noqa: E402
from sizing.errors import SizingInputError  # noqa: E402
from sizing.karpenter.catalog import catalog_from_document, read_catalog  # noqa: E402
from sizing.karpenter.catalog_refresh import (  # noqa: E402
    DESCRIBE_INSTANCE_TYPES_FILTERS,
    INSTANCE_TYPES_PAGE,
    OFFERINGS_PAGE,
    PRICING_PAGE,
    SPOT_PAGE,
    SPOT_PRODUCT_DESCRIPTIONS,
    RetryPolicy,
    instance_type_from_aws,
    on_demand_prices,
    pricing_filters,
    refresh_catalog,
)

REGION = "ap-northeast-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
NOW = dt.datetime(2026, 8, 3, 9, 30, tzinfo=dt.UTC)
PRICE_PARAMS = {"ServiceCode": "AmazonEC2", "Filters": pricing_filters(REGION), "MaxResults": PRICING_PAGE}
TYPE_PARAMS = {"Filters": [dict(f) for f in DESCRIBE_INSTANCE_TYPES_FILTERS], "MaxResults": INSTANCE_TYPES_PAGE}
OFFERING_PARAMS = {"LocationType": "availability-zone-id", "MaxResults": OFFERINGS_PAGE}
# The zones of the account the stubs answer for: names as it sees them, and their IDs.
ZONE_IDS = {"ap-northeast-1a": "apne1-az4", "ap-northeast-1c": "apne1-az1", "ap-northeast-1d": "apne1-az2"}
ZONES = {
    "AvailabilityZones": [
        {"ZoneName": name, "ZoneId": zone_id, "RegionName": REGION, "State": "available"}
        for name, zone_id in ZONE_IDS.items()
    ]
}
SPOT_PARAMS = {"ProductDescriptions": list(SPOT_PRODUCT_DESCRIPTIONS), "StartTime": NOW, "MaxResults": SPOT_PAGE}


class Sleeps(list):
    """Records the waits asked for instead of sleeping."""

    def __call__(self, seconds):
        self.append(seconds)


def refresh(ec2, pricing, **options):
    options.setdefault("sleep", Sleeps())
    return refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing, now=NOW, **options)


def info(name, arch="x86_64", vcpu=2, memory=8192, enis=3, ips=10, hypervisor="nitro", gpus=None, cards=None):
    network = {"MaximumNetworkInterfaces": enis, "Ipv4AddressesPerInterface": ips}
    if cards is not None:
        network.update(cards)
    obj = {
        "InstanceType": name,
        "ProcessorInfo": {"SupportedArchitectures": [arch]},
        "VCpuInfo": {"DefaultVCpus": vcpu},
        "MemoryInfo": {"SizeInMiB": memory},
        "NetworkInfo": network,
    }
    if hypervisor:
        obj["Hypervisor"] = hypervisor
    if gpus:
        obj["GpuInfo"] = {
            "Gpus": [{"Name": "H100", "Manufacturer": "NVIDIA", "Count": gpus, "MemoryInfo": {"SizeInMiB": 81920}}]
        }
    return obj


def price_entry(name, usd, unit="Hrs"):
    return json.dumps(
        {
            "product": {"attributes": {"instanceType": name, "regionCode": REGION, "operatingSystem": "Linux"}},
            "terms": {
                "OnDemand": {
                    f"SKU{name}.JRTCKXETXF": {
                        "priceDimensions": {
                            f"SKU{name}.JRTCKXETXF.6YS6EN2CT7": {"unit": unit, "pricePerUnit": {"USD": usd}}
                        }
                    }
                }
            },
        }
    )


def clients():
    ec2 = boto3.client("ec2", region_name=REGION, **FAKE_CREDENTIALS)
    pricing = boto3.client("pricing", region_name="us-east-1", **FAKE_CREDENTIALS)
    return ec2, pricing


def offering(name, zone, by_id=True):
    """An offering of `name` in zone `zone` (a name), located by its zone ID as the refresh asks."""
    if by_id:
        # A zone of another region is located by an ID the account's map lacks.
        return {
            "InstanceType": name,
            "LocationType": "availability-zone-id",
            "Location": ZONE_IDS.get(zone, "use1-az1"),
        }
    return {"InstanceType": name, "LocationType": "availability-zone", "Location": zone}


def stub_zones(ec2_stub):
    ec2_stub.add_response("describe_availability_zones", ZONES, {})


def spot_record(name, zone, price, minutes_ago=5, product="Linux/UNIX"):
    return {
        "AvailabilityZone": zone,
        "InstanceType": name,
        "ProductDescription": product,
        "SpotPrice": price,
        "Timestamp": NOW - dt.timedelta(minutes=minutes_ago),
    }


def stub_offerings_and_spot(ec2_stub):
    stub_zones(ec2_stub)
    ec2_stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                offering("m5.large", "ap-northeast-1a"),
                offering("m5.large", "ap-northeast-1c"),
                offering("c6g.xlarge", "ap-northeast-1a"),
            ],
            "NextToken": "offerings-2",
        },
        OFFERING_PARAMS,
    )
    ec2_stub.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                offering("m5.large", "ap-northeast-1d"),
                offering("c5.metal", "ap-northeast-1d"),
                offering("m5.large", "us-east-1a"),
            ]
        },
        {**OFFERING_PARAMS, "NextToken": "offerings-2"},
    )
    ec2_stub.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                spot_record("m5.large", "ap-northeast-1a", "0.047000"),
                spot_record("m5.large", "ap-northeast-1a", "0.051000", minutes_ago=60),
                spot_record("m5.large", "ap-northeast-1c", "0.052000", product="Linux/UNIX (Amazon VPC)"),
            ],
            "NextToken": "spot-2",
        },
        SPOT_PARAMS,
    )
    ec2_stub.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                spot_record("m5.large", "ap-northeast-1c", "0.049000"),
                spot_record("c6g.xlarge", "ap-northeast-1a", "0.060000"),
                spot_record("m5.large", "ap-northeast-1d", "not a price"),
            ],
            "NextToken": "",
        },
        {**SPOT_PARAMS, "NextToken": "spot-2"},
    )


def stub_happy_path(ec2, pricing):
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    price_params = PRICE_PARAMS
    pricing_stub.add_response(
        "get_products",
        {
            "PriceList": [price_entry("m5.large", "0.1240000000"), price_entry("c6g.xlarge", "0.1700000000")],
            "NextToken": "page2",
            "FormatVersion": "aws_v1",
        },
        price_params,
    )
    pricing_stub.add_response(
        "get_products",
        {
            "PriceList": [price_entry("m5.large", "0.1300000000"), price_entry("c5.metal", "5.0")],
            "FormatVersion": "aws_v1",
        },
        {**price_params, "NextToken": "page2"},
    )
    ec2_stub.add_response(
        "describe_instance_types",
        {
            "InstanceTypes": [
                info("m5.large"),
                info("c6g.xlarge", arch="arm64", vcpu=4, enis=4, ips=15),
                info("mac1.metal", arch="x86_64_mac", vcpu=12, memory=32768, hypervisor=None),
            ],
            "NextToken": "next",
        },
        TYPE_PARAMS,
    )
    ec2_stub.add_response(
        "describe_instance_types",
        {
            "InstanceTypes": [
                info("c5.metal", vcpu=96, memory=196608, enis=15, ips=50, hypervisor=None),
                info(
                    "p5.48xlarge",
                    vcpu=192,
                    memory=2097152,
                    enis=64,
                    ips=50,
                    gpus=8,
                    cards={
                        "DefaultNetworkCardIndex": 0,
                        "NetworkCards": [
                            {"NetworkCardIndex": 0, "MaximumNetworkInterfaces": 2},
                            {"NetworkCardIndex": 1, "MaximumNetworkInterfaces": 2},
                        ],
                    },
                ),
            ]
        },
        {**TYPE_PARAMS, "NextToken": "next"},
    )
    stub_offerings_and_spot(ec2_stub)
    return ec2_stub, pricing_stub


def test_refresh_reads_every_page_and_converts_types():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    with ec2_stub, pricing_stub:
        refreshed = refresh(ec2, pricing)
    ec2_stub.assert_no_pending_responses()
    pricing_stub.assert_no_pending_responses()
    by_name = {i.name: i for i in refreshed.instance_types}
    assert list(by_name) == ["c5.metal", "c6g.xlarge", "m5.large", "p5.48xlarge"], "mac types are skipped"
    m5 = by_name["m5.large"]
    assert (m5.category, m5.family, m5.generation, m5.size, m5.arch, m5.hypervisor) == (
        "m",
        "m5",
        5,
        "large",
        "amd64",
        "nitro",
    )
    assert dict(m5.prices) == {REGION: 0.124}, "the lowest of duplicate prices wins"
    assert by_name["c6g.xlarge"].arch == "arm64" and by_name["c6g.xlarge"].max_enis == 4
    assert by_name["c5.metal"].hypervisor == "" and dict(by_name["c5.metal"].prices) == {REGION: 5.0}
    p5 = by_name["p5.48xlarge"]
    assert (p5.gpu_count, p5.max_enis, dict(p5.prices)) == (8, 2, {}), "ENIs of the default card; no price found"


def test_refresh_records_spot_prices_per_zone_and_offerings():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    with ec2_stub, pricing_stub:
        refreshed = refresh(ec2, pricing)
    by_name = {i.name: i for i in refreshed.instance_types}
    m5 = by_name["m5.large"]
    assert dict(m5.spot_prices[REGION]) == {"ap-northeast-1a": 0.047, "ap-northeast-1c": 0.049}, (
        "the latest record per zone wins, whichever product and page it is on; an unreadable price is skipped"
    )
    assert m5.offered_zones(REGION) == ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"), (
        "offerings over both pages, other regions' zones ignored"
    )
    assert by_name["c5.metal"].offered_zones(REGION) == ("ap-northeast-1d",)
    assert by_name["p5.48xlarge"].offered_zones(REGION) == (), "a type without an offering is offered nowhere"
    assert dict(by_name["p5.48xlarge"].spot_prices) == {}
    header = refreshed.info
    assert header.region == REGION and header.gaps == ()
    assert dict(header.prices_as_of) == {REGION: "2026-08-03"}
    assert dict(header.spot_prices_as_of) == dict(header.offerings_as_of) == {REGION: "2026-08-03T09:30:00Z"}
    assert refreshed.summary() == (
        "4 instance types, 3 with on-demand prices, 2 with spot prices, offerings in 3 zones "
        "(ap-northeast-1a (apne1-az4), ap-northeast-1c (apne1-az1), ap-northeast-1d (apne1-az2)) for ap-northeast-1"
    )


def test_refreshed_catalog_text_loads_back(tmp_path):
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    with ec2_stub, pricing_stub:
        refreshed = refresh(ec2, pricing)
    document = json.loads(refreshed.text())
    assert REGION in document["source"] and document["region"] == REGION
    assert [i.to_dict() for i in catalog_from_document(document)] == [i.to_dict() for i in refreshed.instance_types]
    path = tmp_path / "catalog.json"
    path.write_text(refreshed.text())
    assert read_catalog(path).info.offerings_as_of == refreshed.info.offerings_as_of


def test_the_refreshed_file_keys_zones_by_id_with_the_accounts_map(tmp_path):
    ec2, pricing = clients()
    sts = boto3.client("sts", region_name=REGION, **FAKE_CREDENTIALS)
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    sts_stub = Stubber(sts)
    sts_stub.add_response("get_caller_identity", {"Account": "111122223333"}, {})
    with ec2_stub, pricing_stub, sts_stub:
        refreshed = refresh(ec2, pricing, sts_client=sts)
    # Stubber checked the offerings were asked by zone ID (OFFERING_PARAMS).
    ec2_stub.assert_no_pending_responses()
    sts_stub.assert_no_pending_responses()
    document = json.loads(refreshed.text())
    assert document["formatVersion"] == 3 and document["account"] == "111122223333"
    assert document["zones"] == [{"id": zone_id, "name": name} for name, zone_id in sorted(ZONE_IDS.items())]
    m5 = next(t for t in document["instanceTypes"] if t["name"] == "m5.large")
    assert m5["zones"] == {REGION: ["apne1-az1", "apne1-az2", "apne1-az4"]}
    # EC2 gives spot prices by zone name; the file has them by the account's zone ID.
    assert m5["spot_prices"] == {REGION: {"apne1-az1": 0.049, "apne1-az4": 0.047}}
    assert "Zones keyed by zone ID; `zones` gives the names of account 111122223333." in document["source"]
    path = tmp_path / "catalog.json"
    path.write_text(refreshed.text())
    loaded = read_catalog(path)
    assert [t.to_dict() for t in loaded.instance_types] == [t.to_dict() for t in refreshed.instance_types]
    assert loaded.info.zone_ids == refreshed.info.zone_ids and loaded.info.account == "111122223333"


def test_spot_records_and_offerings_of_zones_the_account_map_lacks_are_left_out():
    from sizing.karpenter.catalog_refresh import offered_zones, spot_prices

    records = [spot_record("m5.large", "ap-northeast-1a", "0.05"), spot_record("m5.large", "ap-northeast-1b", "0.04")]
    assert spot_prices(records, REGION, {"ap-northeast-1a": "apne1-az4"}) == {"m5.large": {"ap-northeast-1a": 0.05}}
    offerings = [offering("m5.large", "ap-northeast-1a"), offering("m5.large", "ap-northeast-1c")]
    assert offered_zones(offerings, REGION, {"ap-northeast-1a": "apne1-az4"}) == {"m5.large": ["ap-northeast-1a"]}


def refresh_with(monkeypatch, ec2, pricing):
    """The CLI's refresh, made with these stubbed clients at NOW."""
    import sizing.karpenter.catalog_refresh as refresh_module

    real_refresh = refresh_module.refresh_catalog
    monkeypatch.setattr(
        refresh_module,
        "refresh_catalog",
        lambda region: real_refresh(region, ec2_client=ec2, pricing_client=pricing, now=NOW),
    )
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("sizing.commands.catalog",))


def test_cli_refresh_writes_the_catalog(tmp_path, capsys, monkeypatch):
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    refresh_with(monkeypatch, ec2, pricing)
    monkeypatch.chdir(tmp_path)
    with ec2_stub, pricing_stub:
        code = cli.main(["catalog", "refresh", "--region", REGION])
    output = tmp_path / f"catalog-{REGION}.json"
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote catalog-{REGION}.json: 4 instance types, 3 with on-demand prices, 2 with spot")
    assert (
        "zones keyed by zone ID; the names of this account: ap-northeast-1a (apne1-az4), ap-northeast-1c (apne1-az1), "
        "ap-northeast-1d (apne1-az2)\n"
    ) in out
    code = cli.main(["catalog", "--json", "--catalog", str(output)])
    entries = json.loads(capsys.readouterr().out)
    assert code == 0, "the region defaults to the refreshed catalog's own"
    assert {e["name"]: e["price"] for e in entries} == {
        "c5.metal": 5.0,
        "c6g.xlarge": 0.17,
        "m5.large": 0.124,
        "p5.48xlarge": None,
    }
    m5 = next(e for e in entries if e["name"] == "m5.large")
    assert m5["spotPrices"] == {"ap-northeast-1a": 0.047, "ap-northeast-1c": 0.049}
    assert m5["zones"] == ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]
    code = cli.main(["catalog", "--catalog", str(output)])
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[-3:] == ["SPOT", "USD/h", "ZONES"]
    assert table[-1].startswith("4 instance types (1 without a price for ap-northeast-1, 1 offered in no zone)")
    code = cli.main(["catalog", "--catalog", str(output), "--region", "us-east-1"])
    assert code == 2
    assert "was refreshed for ap-northeast-1, but the plan is for us-east-1 (--region)" in capsys.readouterr().err


def test_a_denied_listing_of_types_stops_the_refresh_naming_the_permission():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [], "FormatVersion": "aws_v1"}, PRICE_PARAMS)
    ec2_stub.add_client_error(
        "describe_instance_types", service_error_code="UnauthorizedOperation", http_status_code=403
    )
    with (
        ec2_stub,
        pricing_stub,
        pytest.raises(
            SizingInputError,
            match=r"DescribeInstanceTypes was denied \(UnauthorizedOperation\) in ap-northeast-1: the credentials "
            r"lack the IAM permission ec2:DescribeInstanceTypes; the refresh cannot list",
        ),
    ):
        refresh(ec2, pricing)


@pytest.mark.parametrize(
    "denied, code, permission",
    [
        ("get_products", "AccessDeniedException", "pricing:GetProducts"),
        ("describe_instance_type_offerings", "UnauthorizedOperation", "ec2:DescribeInstanceTypeOfferings"),
        ("describe_spot_price_history", "UnauthorizedOperation", "ec2:DescribeSpotPriceHistory"),
        ("describe_availability_zones", "UnauthorizedOperation", "ec2:DescribeAvailabilityZones"),
    ],
)
def test_a_denied_optional_call_leaves_its_part_out_and_names_the_permission(denied, code, permission):
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)

    def answer(stub, operation, response, params):
        if operation == denied:
            stub.add_client_error(operation, service_error_code=code, http_status_code=403)
        else:
            stub.add_response(operation, response, params)

    answer(pricing_stub, "get_products", {"PriceList": [price_entry("m5.large", "0.124")]}, PRICE_PARAMS)
    ec2_stub.add_response("describe_instance_types", {"InstanceTypes": [info("m5.large")]}, TYPE_PARAMS)
    answer(ec2_stub, "describe_availability_zones", ZONES, {})
    # Without the account's zone IDs, offerings are asked and kept by zone name.
    by_id = denied != "describe_availability_zones"
    offerings = {"InstanceTypeOfferings": [offering("m5.large", "ap-northeast-1a", by_id)]}
    params = OFFERING_PARAMS if by_id else {**OFFERING_PARAMS, "LocationType": "availability-zone"}
    answer(ec2_stub, "describe_instance_type_offerings", offerings, params)
    spot = {"SpotPriceHistory": [spot_record("m5.large", "ap-northeast-1a", "0.05")]}
    answer(ec2_stub, "describe_spot_price_history", spot, SPOT_PARAMS)
    with ec2_stub, pricing_stub:
        refreshed = refresh(ec2, pricing)
    ec2_stub.assert_no_pending_responses()
    (gap,) = refreshed.info.gaps
    assert permission in gap and "was denied" in gap
    (m5,) = refreshed.instance_types
    header = refreshed.info
    assert (REGION in header.prices_as_of) == (m5.price(REGION) is not None) == (denied != "get_products")
    assert (REGION in header.offerings_as_of) == (denied != "describe_instance_type_offerings")
    assert (m5.offered_zones(REGION) is None) == (denied == "describe_instance_type_offerings")
    assert (REGION in header.spot_prices_as_of) == bool(m5.spot_prices) == (denied != "describe_spot_price_history")
    assert (dict(header.zone_ids) == ZONE_IDS) == by_id
    if not by_id:
        assert gap.startswith("zone IDs (zones are keyed by this account's zone names)")
        assert m5.offered_zones(REGION) == ("ap-northeast-1a",)
        assert json.loads(refreshed.text())["formatVersion"] == 2, "a file keyed by name keeps format version 2"


def test_a_throttled_page_is_retried_with_backoff_and_pagination_resumes_there():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [price_entry("m5.large", "0.124")]}, PRICE_PARAMS)
    ec2_stub.add_response("describe_instance_types", {"InstanceTypes": [info("m5.large")]}, TYPE_PARAMS)
    stub_zones(ec2_stub)
    ec2_stub.add_response(
        "describe_instance_type_offerings",
        {"InstanceTypeOfferings": [offering("m5.large", "ap-northeast-1a")], "NextToken": "page-2"},
        OFFERING_PARAMS,
    )
    for _ in range(3):
        ec2_stub.add_client_error(
            "describe_instance_type_offerings",
            service_error_code="RequestLimitExceeded",
            http_status_code=503,
            expected_params={**OFFERING_PARAMS, "NextToken": "page-2"},
        )
    ec2_stub.add_response(
        "describe_instance_type_offerings",
        {"InstanceTypeOfferings": [offering("m5.large", "ap-northeast-1c")]},
        {**OFFERING_PARAMS, "NextToken": "page-2"},
    )
    ec2_stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []}, SPOT_PARAMS)
    sleeps = Sleeps()
    with ec2_stub, pricing_stub:
        refreshed = refresh(ec2, pricing, sleep=sleeps, retry=RetryPolicy(attempts=4, base_seconds=0.5))
    ec2_stub.assert_no_pending_responses()
    assert sleeps == [0.5, 1.0, 2.0], "exponential backoff, and no real sleep"
    assert refreshed.instance_types[0].offered_zones(REGION) == ("ap-northeast-1a", "ap-northeast-1c")


def test_throttling_that_does_not_stop_gives_up_after_the_last_attempt():
    ec2, pricing = clients()
    pricing_stub = Stubber(pricing)
    for _ in range(3):
        pricing_stub.add_client_error("get_products", service_error_code="ThrottlingException", http_status_code=400)
    sleeps = Sleeps()
    with (
        pricing_stub,
        pytest.raises(SizingInputError, match=r"GetProducts in ap-northeast-1 was still throttled .* after 3 attempts"),
    ):
        refresh(ec2, pricing, sleep=sleeps, retry=RetryPolicy(attempts=3, base_seconds=1, cap_seconds=1.5))
    assert sleeps == [1.0, 1.5], "capped"


def test_other_aws_errors_stop_the_refresh_naming_the_call():
    ec2, pricing = clients()
    pricing_stub = Stubber(pricing)
    pricing_stub.add_client_error("get_products", service_error_code="InvalidParameterException", http_status_code=400)
    with pricing_stub, pytest.raises(SizingInputError, match=r"GetProducts failed in ap-northeast-1: .*InvalidParam"):
        refresh(ec2, pricing)


def test_a_page_token_seen_twice_stops_the_listing():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": []}, PRICE_PARAMS)
    ec2_stub.add_response(
        "describe_instance_types", {"InstanceTypes": [info("m5.large")], "NextToken": "again"}, TYPE_PARAMS
    )
    ec2_stub.add_response(
        "describe_instance_types",
        {"InstanceTypes": [info("m5.large")], "NextToken": "again"},
        {**TYPE_PARAMS, "NextToken": "again"},
    )
    with (
        ec2_stub,
        pricing_stub,
        pytest.raises(SizingInputError, match="DescribeInstanceTypes in ap-northeast-1 returned a page token twice"),
    ):
        refresh(ec2, pricing)


def test_no_usable_type_is_an_error():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [], "FormatVersion": "aws_v1"})
    ec2_stub.add_response("describe_instance_types", {"InstanceTypes": []})
    stub_zones(ec2_stub)
    ec2_stub.add_response("describe_instance_type_offerings", {"InstanceTypeOfferings": []})
    ec2_stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []})
    with (
        ec2_stub,
        pricing_stub,
        pytest.raises(SizingInputError, match="returned no usable instance type in ap-northeast-1"),
    ):
        refresh(ec2, pricing)


def test_missing_credentials(monkeypatch, tmp_path):
    for name in list(__import__("os").environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(SizingInputError, match="catalog refresh found no AWS credentials"):
        refresh_catalog(REGION)


def test_missing_boto3(monkeypatch):
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(SizingInputError, match="catalog refresh needs boto3, which is not installed"):
        refresh_catalog(REGION)


def test_bad_region_is_rejected_before_any_call():
    with pytest.raises(SizingInputError, match="region must be an AWS region name"):
        refresh_catalog("tokyo")


def test_price_parsing_ignores_non_hourly_and_zero_prices():
    prices = on_demand_prices(
        [
            price_entry("m5.large", "0.096"),
            price_entry("m5.large", "0.0000000000"),
            price_entry("t3.micro", "7.5", unit="Quantity"),
            json.dumps({"product": {}}),
        ]
    )
    assert prices == {"m5.large": 0.096}


def test_types_the_catalog_cannot_describe_are_skipped():
    assert instance_type_from_aws(info("m5.large", arch="i386"), {}, REGION) is None
    assert instance_type_from_aws(info("weird"), {}, REGION) is None
    generation_with_memory_suffix = instance_type_from_aws(
        info("u-6tb1.112xlarge", vcpu=448, memory=6291456), {}, REGION
    )
    assert (generation_with_memory_suffix.category, generation_with_memory_suffix.generation) == ("u", 1)


def test_pricing_filters_select_on_demand_linux_shared_tenancy():
    fields = {f["Field"]: f["Value"] for f in pricing_filters("eu-west-1")}
    assert fields == {
        "regionCode": "eu-west-1",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "marketoption": "OnDemand",
    }


def test_cli_refresh_warns_about_a_denied_part_naming_the_permission(tmp_path, capsys, monkeypatch):
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [price_entry("m5.large", "0.124")]}, PRICE_PARAMS)
    ec2_stub.add_response("describe_instance_types", {"InstanceTypes": [info("m5.large")]}, TYPE_PARAMS)
    stub_zones(ec2_stub)
    offerings = {"InstanceTypeOfferings": [offering("m5.large", "ap-northeast-1a")]}
    ec2_stub.add_response("describe_instance_type_offerings", offerings, OFFERING_PARAMS)
    ec2_stub.add_client_error("describe_spot_price_history", "UnauthorizedOperation", http_status_code=403)
    refresh_with(monkeypatch, ec2, pricing)
    output = tmp_path / "tokyo.json"
    with ec2_stub, pricing_stub:
        code = cli.main(["catalog", "refresh", "--region", REGION, "--output", str(output)])
    captured = capsys.readouterr()
    assert code == 0 and captured.out.startswith(f"wrote {output}: 1 instance type, 1 with on-demand prices, 0 with")
    assert captured.err == (
        "warning: spot prices: DescribeSpotPriceHistory was denied; grant ec2:DescribeSpotPriceHistory and "
        "refresh again\n"
    )
    assert read_catalog(output).info.gaps == (captured.err[len("warning: ") :].strip(),)


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing folder"])
def test_cli_refresh_refuses_an_output_it_cannot_write_before_calling_aws(tmp_path, capsys, monkeypatch, kind):
    import os

    import sizing.karpenter.catalog_refresh as refresh_module

    def no_aws(region):
        raise AssertionError("AWS was called before --output was checked")

    monkeypatch.setattr(refresh_module, "refresh_catalog", no_aws)
    output = tmp_path / "catalog.json"
    if kind == "fifo":
        os.mkfifo(output)  # opening it with no reader would wait forever
    elif kind == "folder":
        output.mkdir()
    else:
        output = tmp_path / "absent" / "catalog.json"
    code = cli.main(["catalog", "refresh", "--region", REGION, "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: --output {str(output)!r}") and err.count("\n") == 1
    expected = {"fifo": "is not a regular file", "folder": "is a folder", "missing folder": "cannot be written"}
    assert expected[kind] in err


def test_cli_refresh_replaces_a_catalog_it_wrote_before(tmp_path, capsys, monkeypatch):
    import os

    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    refresh_with(monkeypatch, ec2, pricing)
    output = tmp_path / "catalog.json"
    output.write_text("an older catalog")
    with ec2_stub, pricing_stub:
        assert cli.main(["catalog", "refresh", "--region", REGION, "--output", str(output)]) == 0
    assert read_catalog(output).info.region == REGION
    assert [path.name for path in tmp_path.iterdir()] == ["catalog.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert output.stat().st_mode & 0o777 == 0o666 & ~umask, "the mode of any new file, not a private one"


def test_cli_refresh_writes_through_a_symbolic_link(tmp_path, capsys, monkeypatch):
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    refresh_with(monkeypatch, ec2, pricing)
    target = tmp_path / "catalogs" / "catalog.json"
    target.parent.mkdir()
    target.write_text("an older catalog")
    link = tmp_path / "catalog.json"
    link.symlink_to(target)
    with ec2_stub, pricing_stub:
        assert cli.main(["catalog", "refresh", "--region", REGION, "--output", str(link)]) == 0
    assert link.is_symlink(), "the link stays"
    assert read_catalog(target).info.region == REGION
    assert [path.name for path in target.parent.iterdir()] == ["catalog.json"]
