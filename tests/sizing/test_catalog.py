"""The bundled catalog: contents, labels, file format, validation and regeneration from the source CSV."""

import json
from pathlib import Path

import pytest

from scripts.generate_catalog import main as generate_main
from scripts.generate_catalog import read_instance_types_csv, render_catalog
from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    BUNDLED_CATALOG_PATH,
    InstanceType,
    catalog_by_name,
    catalog_document,
    dump_catalog_document,
    load_catalog,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_CSV = REPO_ROOT.parent / "shared" / "data" / "instance-types.csv"
CATALOG = load_catalog()
BY_NAME = catalog_by_name(CATALOG)


def require_source_csv():
    if not SOURCE_CSV.exists():
        pytest.skip(f"source CSV {SOURCE_CSV} is not available (reference data outside the repository)")


def test_bundled_catalog_contents():
    assert len(CATALOG) == 1363
    assert [i.name for i in CATALOG] == sorted(i.name for i in CATALOG)
    assert len(BY_NAME) == len(CATALOG)
    assert load_catalog() is CATALOG, "the bundled catalog is loaded once"
    m5 = BY_NAME["m5.large"]
    assert (m5.category, m5.family, m5.generation, m5.size, m5.arch, m5.hypervisor) == (
        "m",
        "m5",
        5,
        "large",
        "amd64",
        "nitro",
    )
    assert (m5.vcpu, m5.memory_mib, m5.max_enis, m5.ipv4_per_eni, m5.gpu_count) == (2, 8192, 3, 10, 0)
    assert dict(m5.prices) == {"us-east-1": 0.096} and m5.price("ap-northeast-1") is None
    assert BY_NAME["c6g.xlarge"].arch == "arm64"
    assert sum(1 for i in CATALOG if not i.prices) == 18


def test_labels_as_karpenter_sets_them():
    assert dict(BY_NAME["m5.large"].labels()) == {
        "node.kubernetes.io/instance-type": "m5.large",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "karpenter.k8s.aws/instance-category": "m",
        "karpenter.k8s.aws/instance-family": "m5",
        "karpenter.k8s.aws/instance-generation": "5",
        "karpenter.k8s.aws/instance-size": "large",
        "karpenter.k8s.aws/instance-cpu": "2",
        "karpenter.k8s.aws/instance-memory": "8192",
        "karpenter.k8s.aws/instance-hypervisor": "nitro",
    }
    gpu = BY_NAME["p5.48xlarge"].labels()
    assert gpu["karpenter.k8s.aws/instance-gpu-count"] == "8"
    assert BY_NAME["c5.metal"].labels()["karpenter.k8s.aws/instance-hypervisor"] == ""


def test_instance_types_are_immutable():
    m5 = BY_NAME["m5.large"]
    with pytest.raises(AttributeError):
        m5.vcpu = 4
    with pytest.raises(TypeError):
        m5.prices["us-east-1"] = 0.0


def test_file_round_trip(tmp_path):
    subset = [BY_NAME["m5.large"], BY_NAME["c5.metal"], BY_NAME["a1.medium"]]
    path = tmp_path / "catalog.json"
    path.write_text(dump_catalog_document(catalog_document(subset, "test")))
    loaded = load_catalog(path)
    assert [i.name for i in loaded] == ["a1.medium", "c5.metal", "m5.large"]
    assert [i.to_dict() for i in loaded] == [i.to_dict() for i in sorted(subset, key=lambda i: i.name)]


def test_file_format_is_one_line_per_type():
    lines = BUNDLED_CATALOG_PATH.read_text().splitlines()
    type_lines = [line for line in lines if line.startswith('    {"name": ')]
    assert len(type_lines) == len(CATALOG)
    document = json.loads(BUNDLED_CATALOG_PATH.read_text())
    assert document["formatVersion"] == 2
    assert document["pricesAsOf"] == {"us-east-1": "2026-07-20"}, "the bundled prices say how old they are"
    assert "region" not in document and "offeringsAsOf" not in document and "spotPricesAsOf" not in document


def test_generated_catalog_equals_the_committed_file():
    require_source_csv()
    assert render_catalog(read_instance_types_csv(SOURCE_CSV)) == BUNDLED_CATALOG_PATH.read_text()


def test_generator_script_writes_the_same_bytes(tmp_path, capsys):
    require_source_csv()
    output = tmp_path / "catalog.json"
    assert generate_main([str(SOURCE_CSV), "--output", str(output)]) == 0
    assert output.read_bytes() == BUNDLED_CATALOG_PATH.read_bytes()
    assert "1363 instance types" in capsys.readouterr().out


CSV_HEADER = (
    "instance_type,category,family,generation,size,arch,hypervisor,vcpu,memory_mib,"
    "max_enis,ipv4_per_eni,gpu_count,od_price_usd_hr_us_east_1\n"
)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "m5.large,m,m5,five,large,amd64,nitro,2,8192,3,10,0,0.096\n",
            "CSV line 2: generation must be an integer, got 'five'",
        ),
        (
            "m5.large,m,m5,5,large,amd64,nitro,2,8192,3,10,0,cheap\n",
            "CSV line 2: od_price_usd_hr_us_east_1 must be a number or empty",
        ),
        (
            "m5.large,m,m5,5,large,x86_64,nitro,2,8192,3,10,0,0.096\n",
            "arch must be one of ['amd64', 'arm64'], got 'x86_64'",
        ),
    ],
)
def test_generator_rejects_bad_rows(tmp_path, capsys, body, message):
    source = tmp_path / "types.csv"
    source.write_text(CSV_HEADER + body)
    assert generate_main([str(source), "--output", str(tmp_path / "out.json")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_generator_keeps_rows_without_eni_data_with_zero_enis(tmp_path):
    source = tmp_path / "types.csv"
    source.write_text(CSV_HEADER + "m5.large,m,m5,5,large,amd64,nitro,2,8192,,,0,\n")
    (instance,) = read_instance_types_csv(source)
    assert (instance.max_enis, instance.ipv4_per_eni, dict(instance.prices)) == (0, 0, {})


def test_generator_rejects_missing_columns(tmp_path):
    source = tmp_path / "types.csv"
    source.write_text("instance_type,vcpu\nm5.large,2\n")
    with pytest.raises(SizingInputError, match=r"missing CSV columns \['category'"):
        read_instance_types_csv(source)


def good_entry(**changes):
    entry = BY_NAME["m5.large"].to_dict()
    entry.update(changes)
    return entry


@pytest.mark.parametrize(
    "document, pattern",
    [
        ({"formatVersion": 1}, r"expected an object with an 'instanceTypes' list"),
        ({"formatVersion": 4, "instanceTypes": [good_entry()]}, r"formatVersion must be one of \[1, 2, 3\], got 4"),
        (
            {"formatVersion": True, "instanceTypes": [good_entry()]},
            r"formatVersion must be one of \[1, 2, 3\], got True",
        ),
        ({"formatVersion": 1, "instanceTypes": []}, r"instanceTypes is empty"),
        ({"formatVersion": 1, "instanceTypes": [good_entry(), good_entry()]}, r"listed more than once: \['m5.large'\]"),
        ({"formatVersion": 1, "instanceTypes": ["m5.large"]}, r"instanceTypes\[0\]: expected an object, got str"),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(arch="x86_64")]},
            r"'m5.large': arch must be one of \['amd64', 'arm64'\], got 'x86_64'",
        ),
        ({"formatVersion": 1, "instanceTypes": [good_entry(hypervisor="kvm")]}, r"hypervisor must be one of"),
        ({"formatVersion": 1, "instanceTypes": [good_entry(vcpu=-2)]}, r"vcpu must be a non-negative integer, got -2"),
        ({"formatVersion": 1, "instanceTypes": [good_entry(vcpu=0)]}, r"vcpu and memory_mib must be at least 1"),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(max_enis=True)]},
            r"max_enis must be a non-negative integer, got True",
        ),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(memory_mib=8192.5)]},
            r"memory_mib must be a non-negative integer",
        ),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(name="m5large")]},
            r"name must look like 'family.size', got 'm5large'",
        ),
        ({"formatVersion": 1, "instanceTypes": [good_entry(family=5)]}, r"family must be a string, got 5"),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(prices={"us-east-1": 0})]},
            r"prices\['us-east-1'\] must be a positive number of USD/hour, got 0",
        ),
        (
            {"formatVersion": 1, "instanceTypes": [good_entry(prices=[0.1])]},
            r"prices must be an object region -> USD/hour",
        ),
        ({"formatVersion": 1, "instanceTypes": [good_entry(cores=2)]}, r"unknown fields \['cores'\]"),
        ({"formatVersion": 1, "instanceTypes": [{"name": "m5.large"}]}, r"missing fields \['arch', 'category'"),
    ],
)
def test_bad_catalog_files(tmp_path, document, pattern):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SizingInputError, match=pattern):
        load_catalog(path)


def test_unreadable_and_malformed_catalog_files(tmp_path):
    with pytest.raises(SizingInputError, match=r"catalog file '.*missing.json' cannot be read \(it does not exist\)"):
        load_catalog(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(
        SizingInputError,
        match=r"catalog file '.*binary.json' is not a text file \(byte 0 at line 1, column 1 is not UTF-8\)",
    ):
        load_catalog(binary)
    with pytest.raises(SizingInputError, match=r"catalog file '.*' is a folder, not a file"):
        load_catalog(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(SizingInputError, match=r"catalog file '.*broken.json': not valid JSON"):
        load_catalog(broken)


def test_hand_built_instance_type_labels():
    tiny = InstanceType("g9.large", "g", "g9", 9, "large", "arm64", "nitro", 2, 4096, 3, 10, 2)
    assert dict(tiny.prices) == {}
    assert tiny.labels()["karpenter.k8s.aws/instance-gpu-count"] == "2"
    assert tiny.labels()["kubernetes.io/arch"] == "arm64"


def test_equality_includes_prices_and_hash_ignores_them():
    m5 = BY_NAME["m5.large"]
    same = InstanceType(**m5.to_dict())
    repriced = InstanceType(**{**m5.to_dict(), "prices": {"us-east-1": 0.1}})
    assert same == m5 and hash(same) == hash(m5)
    assert repriced != m5 and hash(repriced) == hash(m5)
