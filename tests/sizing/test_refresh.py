"""Live catalog refresh with real boto3 clients and stubbed AWS responses (no network)."""

import json
import sys

import pytest

boto3 = pytest.importorskip("boto3", reason="boto3 is optional; the refresh tests need it")
from botocore.stub import Stubber  # noqa: E402

from sizing import cli  # noqa: E402
from sizing.errors import SizingInputError  # noqa: E402
from sizing.karpenter.catalog import catalog_from_document  # noqa: E402
from sizing.karpenter.catalog_refresh import (  # noqa: E402
    DESCRIBE_INSTANCE_TYPES_FILTERS,
    instance_type_from_aws,
    on_demand_prices,
    pricing_filters,
    refresh_catalog,
    refreshed_catalog_text,
)

REGION = "ap-northeast-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


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


def stub_happy_path(ec2, pricing):
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    price_params = {"ServiceCode": "AmazonEC2", "Filters": pricing_filters(REGION)}
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
    filters = [dict(f) for f in DESCRIBE_INSTANCE_TYPES_FILTERS]
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
        {"Filters": filters},
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
        {"Filters": filters, "NextToken": "next"},
    )
    return ec2_stub, pricing_stub


def test_refresh_reads_every_page_and_converts_types():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    with ec2_stub, pricing_stub:
        instances = refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing)
    ec2_stub.assert_no_pending_responses()
    pricing_stub.assert_no_pending_responses()
    by_name = {i.name: i for i in instances}
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


def test_refreshed_catalog_text_loads_back():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    with ec2_stub, pricing_stub:
        instances = refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing)
    document = json.loads(refreshed_catalog_text(instances, REGION))
    assert REGION in document["source"]
    assert [i.to_dict() for i in catalog_from_document(document)] == [i.to_dict() for i in instances]


def test_cli_refresh_writes_the_catalog(tmp_path, capsys, monkeypatch):
    import sizing.karpenter.catalog_refresh as refresh_module

    ec2, pricing = clients()
    ec2_stub, pricing_stub = stub_happy_path(ec2, pricing)
    real_refresh = refresh_module.refresh_catalog
    monkeypatch.setattr(
        refresh_module, "refresh_catalog", lambda region: real_refresh(region, ec2_client=ec2, pricing_client=pricing)
    )
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("sizing.commands.catalog",))
    output = tmp_path / "catalog.json"
    with ec2_stub, pricing_stub:
        code = cli.main(["catalog", "--refresh", "--region", REGION, "--output", str(output)])
    assert code == 0
    assert capsys.readouterr().out == f"wrote {output}: 4 instance types, 3 with on-demand prices for {REGION}\n"
    code = cli.main(["catalog", "--json", "--catalog", str(output), "--region", REGION])
    entries = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {e["name"]: e["price"] for e in entries} == {
        "c5.metal": 5.0,
        "c6g.xlarge": 0.17,
        "m5.large": 0.124,
        "p5.48xlarge": None,
    }


def test_aws_errors_become_one_clear_message():
    ec2, pricing = clients()
    pricing_stub = Stubber(pricing)
    pricing_stub.add_client_error(
        "get_products", service_error_code="AccessDeniedException", service_message="not allowed", http_status_code=403
    )
    with (
        pricing_stub,
        pytest.raises(
            SizingInputError,
            match=r"catalog refresh: pricing GetProducts for ap-northeast-1 failed: .*AccessDeniedException",
        ),
    ):
        refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing)

    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [], "FormatVersion": "aws_v1"})
    ec2_stub.add_client_error(
        "describe_instance_types", service_error_code="UnauthorizedOperation", http_status_code=403
    )
    with (
        ec2_stub,
        pricing_stub,
        pytest.raises(
            SizingInputError, match=r"ec2 DescribeInstanceTypes in ap-northeast-1 failed: .*UnauthorizedOperation"
        ),
    ):
        refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing)


def test_no_usable_type_is_an_error():
    ec2, pricing = clients()
    ec2_stub, pricing_stub = Stubber(ec2), Stubber(pricing)
    pricing_stub.add_response("get_products", {"PriceList": [], "FormatVersion": "aws_v1"})
    ec2_stub.add_response("describe_instance_types", {"InstanceTypes": []})
    with (
        ec2_stub,
        pricing_stub,
        pytest.raises(SizingInputError, match="returned no usable instance type in ap-northeast-1"),
    ):
        refresh_catalog(REGION, ec2_client=ec2, pricing_client=pricing)


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
