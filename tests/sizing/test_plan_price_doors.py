"""`python -m sizing plan --catalog FILE --spot-discount PERCENT`: both flags work by every door (Kubernetes
objects, stdin, a description with or without object files, a stack), and a catalog file is read as
every input is: a regular UTF-8 file of bounded size, no key twice, a bounded number of types."""

from __future__ import annotations

import io
import json
import os
import shutil

import pytest

from offline.program import PROJECT_DIR
from sizing import cli
from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    MAX_INSTANCE_TYPES,
    CatalogInfo,
    InstanceType,
    catalog_document,
    dump_catalog_document,
    load_catalog,
    read_catalog,
)
from tests.sizing.sample_objects import NODE_POOL, deployment
from tests.sizing.test_plan_doors import DESCRIPTION

SPOT_POOL = NODE_POOL.replace(
    "        - {key: karpenter.k8s.aws/instance-size",
    "        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n"
    "        - {key: karpenter.k8s.aws/instance-size",
)
SPOT_DESCRIPTION = DESCRIPTION.replace(
    "  requirements:\n", "  requirements:\n    - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n"
)


def catalog_of(tmp_path, region, name="catalog.json"):
    """The bundled types as a catalog file of `region`: us-east-1's prices as the region's, no offerings
    recorded."""
    info = CatalogInfo(source="test", region=region, prices_as_of={region: "2026-08-03"})
    types = [
        InstanceType(**{**instance.to_dict(), "prices": {region: instance.prices["us-east-1"]}})
        for instance in load_catalog()
        if "us-east-1" in instance.prices
    ]
    path = tmp_path / name
    path.write_text(dump_catalog_document(catalog_document(types, info.source, info)))
    return path


def plan(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    status = cli.main(["plan", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def refusal(capsys, *argv):
    status = cli.main(["plan", *map(str, argv)])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err
    return err


def _files(tmp_path, door):
    objects = tmp_path / "objects.yaml"
    objects.write_text(SPOT_POOL + "---\n" + deployment("web", 4))
    description = tmp_path / "description.yaml"
    description.write_text(SPOT_DESCRIPTION)
    extra = tmp_path / "extra.yaml"
    extra.write_text(deployment("worker", 2))
    return {
        "objects": ([objects], None),
        "stdin": (["-"], objects.read_text()),
        "description": ([description], None),
        "description and objects": ([description, extra], None),
    }[door]


@pytest.mark.parametrize("door", ["objects", "stdin", "description", "description and objects"])
def test_both_price_flags_work_by_every_file_door(tmp_path, capsys, monkeypatch, door):
    files, stdin = _files(tmp_path, door)
    catalog = catalog_of(tmp_path, "us-east-1")
    data = plan(capsys, *files, "--catalog", catalog, "--spot-discount", "40", stdin=stdin, monkeypatch=monkeypatch)
    assert data["prices"]["catalog"]["path"] == str(catalog)
    assert data["prices"]["spot"]["setBy"] == "--spot-discount"
    assert {node["priceSource"] for node in data["fleet"]["nodes"]} == {"spot-discount"}


def test_both_price_flags_win_over_the_stacks_settings(tmp_path, capsys):
    for stack in PROJECT_DIR.glob("Pulumi*.yaml"):
        shutil.copy(stack, tmp_path / stack.name)
    catalog = catalog_of(tmp_path, "ap-northeast-1")
    data = plan(capsys, "--stack", "dev", "--project-dir", tmp_path, "--catalog", catalog, "--spot-discount", "40")
    assert data["prices"]["catalog"]["path"] == str(catalog)
    assert data["prices"]["spot"]["setBy"] == "--spot-discount"


def test_a_catalog_of_another_region_than_a_descriptions_is_refused_naming_the_file(tmp_path, capsys):
    description = tmp_path / "description.yaml"
    description.write_text(DESCRIPTION)
    err = refusal(capsys, description, "--catalog", catalog_of(tmp_path, "eu-west-1"))
    assert "was refreshed for eu-west-1, but the plan is for us-east-1" in err
    assert f"(the `region` of file {str(description)!r})" in err


def test_objects_plan_a_refreshed_catalogs_region_unless_region_is_given(tmp_path, capsys):
    objects = tmp_path / "objects.yaml"
    objects.write_text(SPOT_POOL + "---\n" + deployment("web", 4))
    catalog = catalog_of(tmp_path, "ap-northeast-1")
    assert plan(capsys, objects, "--catalog", catalog)["region"] == "ap-northeast-1"
    err = refusal(capsys, objects, "--catalog", catalog, "--region", "us-east-1")
    assert "was refreshed for ap-northeast-1, but the plan is for us-east-1 (--region)" in err


@pytest.mark.parametrize("kind", ["folder", "fifo", "missing"])
def test_a_catalog_that_is_not_a_regular_file_is_named_never_opened(tmp_path, capsys, kind):
    objects = tmp_path / "objects.yaml"
    objects.write_text(NODE_POOL + "---\n" + deployment("web", 2))
    catalog = tmp_path / "catalog.json"
    if kind == "folder":
        catalog.mkdir()
    elif kind == "fifo":
        os.mkfifo(catalog)  # opening it with no writer would wait forever
    expected = {
        "folder": "is a folder, not a file",
        "fifo": "is a FIFO (named pipe), not a regular file",
        "missing": "cannot be read (it does not exist)",
    }[kind]
    assert f"catalog file {str(catalog)!r} {expected}" in refusal(capsys, objects, "--catalog", catalog)


def test_a_catalog_with_a_key_twice_is_refused_naming_the_key(tmp_path):
    path = catalog_of(tmp_path, "us-east-1")
    text = path.read_text()
    path.write_text(text.replace('"formatVersion": 2,', '"formatVersion": 2,\n  "formatVersion": 1,', 1))
    with pytest.raises(SizingInputError, match="key 'formatVersion' appears twice in one object"):
        read_catalog(path)


def test_a_catalog_of_more_types_than_the_ceiling_is_refused_before_they_are_read(tmp_path):
    entry = {"name": "x.large", "arch": "amd64", "cpu": 2, "memory_mib": 8192, "max_pods": 29}
    document = {"formatVersion": 2, "instanceTypes": [entry] * (MAX_INSTANCE_TYPES + 1)}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SizingInputError, match=f"lists {MAX_INSTANCE_TYPES + 1:,} types; at most"):
        read_catalog(path)


def test_a_huge_spot_discount_is_quoted_cut(tmp_path, capsys):
    err = refusal(capsys, "--stack", "dev", "--spot-discount", "1e308")
    assert "--spot-discount must be a percentage" in err and len(err) < 400


def test_a_catalog_on_stdin_is_read_with_catalog_dash(tmp_path, capsys, monkeypatch):
    objects = tmp_path / "objects.yaml"
    objects.write_text(SPOT_POOL + "---\n" + deployment("web", 4))
    catalog = catalog_of(tmp_path, "eu-west-1")
    data = plan(capsys, objects, "--catalog", "-", stdin=catalog.read_text(), monkeypatch=monkeypatch)
    assert data["region"] == "eu-west-1" and data["prices"]["catalog"]["path"] == "stdin"
    assert data["prices"]["onDemand"]["sources"] and set(data["prices"]["onDemand"]["sources"].values()) == {"refresh"}


def test_stdin_for_the_catalog_and_an_input_at_once_is_refused(tmp_path, capsys):
    err = refusal(capsys, "-", "--catalog", "-")
    assert "'-' (stdin) is given both as --catalog and as an input; stdin can be read once" in err


def test_prices_for_a_region_without_them_are_given_to_the_object_door_with_price(tmp_path, capsys):
    objects = tmp_path / "objects.yaml"
    objects.write_text(NODE_POOL + "---\n" + deployment("web", 6))
    unpriced = plan(capsys, objects, "--region", "eu-west-1")
    assert unpriced["priceUnit"] != "USD/hour"
    assert "set --price or refresh the catalog" in " ".join(unpriced["notes"])
    data = plan(capsys, objects, "--region", "eu-west-1", "--price", "m5.large=0.107", "--price", "m5.xlarge=0.214")
    assert data["priceUnit"] == "USD/hour"
    prices = {"m5.large": 0.107, "m5.xlarge": 0.214}
    assert all(node["price"] == prices[node["instanceType"]] for node in data["fleet"]["nodes"])
    assert data["prices"]["onDemand"]["descriptions"] == {"override": "the user's price overrides (--price)"}


@pytest.mark.parametrize(
    "prices, message",
    [
        (["m5.large"], "--price 'm5.large': give TYPE=USD_PER_HOUR, such as --price m5.large=0.096"),
        (["m5.large=cheap"], "--price 'm5.large=cheap': 'cheap' is not a number of USD/hour"),
        (["m5.large=0.1", "m5.large=0.2"], "--price gives 'm5.large' twice"),
        (["m9.large=0.1"], "--price['m9.large']: unknown instance type"),
        (["m5.large=0"], "--price['m5.large'] must be a positive number of USD/hour"),
    ],
)
def test_a_price_flag_that_cannot_be_read_is_refused_naming_it(tmp_path, capsys, prices, message):
    objects = tmp_path / "objects.yaml"
    objects.write_text(NODE_POOL + "---\n" + deployment("web", 2))
    flags = [part for price in prices for part in ("--price", price)]
    assert message in refusal(capsys, objects, *flags)
