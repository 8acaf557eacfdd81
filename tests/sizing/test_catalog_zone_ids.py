"""Catalog files keyed by zone ID (format version 3): read with the refreshing account's map of zone
names to IDs, once, so that plans see zone names; refused without the map or with a map that does
not name every zone once; the report says whose names they are. Name-keyed files read as before."""

import json
import re
from dataclasses import replace

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import (
    MAX_ZONES_PER_REGION,
    catalog_document,
    dump_catalog_document,
    read_catalog,
)
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import plan_data, render_report
from sizing.planning.report_html import render_html
from tests.catalogs import refreshed, refreshed_info

TOKYO = "ap-northeast-1"
A, C, D = (f"{TOKYO}{z}" for z in "acd")
ZONE_IDS = {A: "apne1-az4", C: "apne1-az1", D: "apne1-az2"}
ACCOUNT = "111122223333"
TYPES = (
    refreshed("m5.xlarge", TOKYO, 0.248, spot={A: 0.05, C: 0.06}, zones=[A, C, D]),
    refreshed("c5.xlarge", TOKYO, 0.214, spot={C: 0.08, D: 0.085}, zones=[C, D]),
    refreshed("m5.2xlarge", TOKYO, 0.496, spot={A: 0.2}, zones=[A]),
)
SPOT = ({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},)
WORKLOADS = (Workload("api", 500, 1024, replicas=20, max_surge="25%"), Workload("worker", 1000, 2048, replicas=6))


def write(path, zone_ids=None, account=None):
    info = replace(refreshed_info(TOKYO), zone_ids=zone_ids or {}, account=account)
    path.write_text(dump_catalog_document(catalog_document(TYPES, info.source, info)))
    return path


def id_keyed_document(tmp_path):
    return json.loads(write(tmp_path / "ids.json", ZONE_IDS, ACCOUNT).read_text())


def test_a_catalog_with_the_map_is_written_by_zone_id_and_read_back_by_name(tmp_path):
    document = id_keyed_document(tmp_path)
    assert document["formatVersion"] == 3 and document["account"] == ACCOUNT
    assert document["zones"] == [
        {"id": "apne1-az4", "name": A},
        {"id": "apne1-az1", "name": C},
        {"id": "apne1-az2", "name": D},
    ]
    m5 = next(t for t in document["instanceTypes"] if t["name"] == "m5.xlarge")
    assert m5["zones"] == {TOKYO: ["apne1-az1", "apne1-az2", "apne1-az4"]}
    assert m5["spot_prices"] == {TOKYO: {"apne1-az1": 0.06, "apne1-az4": 0.05}}
    catalog = read_catalog(tmp_path / "ids.json")
    # Read back, the types are those written, keyed by name again.
    assert [t.to_dict() for t in catalog.instance_types] == [t.to_dict() for t in sorted(TYPES, key=lambda t: t.name)]
    by_name = {t.name: t for t in catalog.instance_types}
    assert by_name["m5.xlarge"].offered_zones(TOKYO) == (A, C, D)
    assert dict(by_name["c5.xlarge"].spot_prices[TOKYO]) == {C: 0.08, D: 0.085}
    assert dict(catalog.info.zone_ids) == ZONE_IDS and catalog.info.account == ACCOUNT


def test_a_name_keyed_file_keeps_format_version_2_and_reads_as_before(tmp_path):
    document = json.loads(write(tmp_path / "names.json").read_text())
    assert document["formatVersion"] == 2 and "zones" not in document and "account" not in document
    catalog = read_catalog(tmp_path / "names.json")
    assert not catalog.info.zone_ids and catalog.info.zone_note() is None
    assert {t.name: t.offered_zones(TOKYO) for t in catalog.instance_types}["m5.xlarge"] == (A, C, D)


def _plan(catalog):
    return plan_capacity(
        PlanInput(
            workloads=WORKLOADS,
            node_pool=NodePoolSpec(requirements=SPOT),
            region=TOKYO,
            zones=(A, C),
            catalog=catalog.instance_types,
            catalog_info=catalog.info,
            solver_work_limit=400,
        )
    )


def test_an_id_keyed_file_plans_the_zones_of_the_name_keyed_one_and_the_report_says_whose_names(tmp_path):
    (tmp_path / "names").mkdir()
    (tmp_path / "ids").mkdir()
    by_name = read_catalog(write(tmp_path / "names" / "catalog.json"))
    by_id = read_catalog(write(tmp_path / "ids" / "catalog.json", ZONE_IDS, ACCOUNT))
    plan_by_name, plan_by_id = _plan(by_name), _plan(by_id)
    data_by_name, data_by_id = plan_data(plan_by_name), plan_data(plan_by_id)
    zone_note = by_id.info.zone_note()
    assert zone_note is not None and zone_note in data_by_id["notes"]
    assert zone_note == (
        f"zones of catalog file '{tmp_path / 'ids' / 'catalog.json'}' were read by zone ID and named with the map of "
        f"account {ACCOUNT}, which refreshed it (ap-northeast-1a=apne1-az4, ap-northeast-1c=apne1-az1, "
        "ap-northeast-1d=apne1-az2); in another account a zone name may be another physical zone, so compare "
        "zones by ID"
    )
    # Apart from that note and the file's name, the two plans are the same, zone by zone.
    without = {**data_by_id, "notes": [note for note in data_by_id["notes"] if note != zone_note]}
    same = json.dumps(without, sort_keys=True).replace("/ids/", "/names/")
    assert same == json.dumps(data_by_name, sort_keys=True)
    # The nodes are placed in zones by name ("any": a node priced alike in every zone).
    zones = {node["zone"] for node in data_by_id["fleet"]["nodes"]} - {"any"}
    assert zones and zones <= {A, C}
    assert f"Note: {zone_note}" in render_report(plan_by_id)
    assert "read by zone ID" not in render_report(plan_by_name)
    page = render_html(data_by_id)
    assert "were read by zone ID and named with the map of account 111122223333" in page


def test_without_a_recorded_account_the_note_names_the_refreshing_account(tmp_path):
    catalog = read_catalog(write(tmp_path / "ids.json", ZONE_IDS))
    assert "named with the map of the refreshing account (ap-northeast-1a=apne1-az4" in (catalog.info.zone_note() or "")


def _refused(tmp_path, document):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SizingInputError) as error:
        read_catalog(path)
    return str(error.value)


def test_an_id_keyed_file_without_the_map_is_refused(tmp_path):
    document = id_keyed_document(tmp_path)
    del document["zones"]
    message = _refused(tmp_path, document)
    assert "bad.json" in message
    assert "formatVersion 3 keys zones by zone ID and needs `zones`" in message
    assert '{"name": "us-east-1a", "id": "use1-az1"}' in message
    # A file of version 2 with zone IDs for keys: the message says what a file keyed by ID needs.
    document["formatVersion"] = 2
    message = _refused(tmp_path, document)
    assert "bad.json" in message and "instanceTypes[" in message
    assert "is a zone ID, but the file has no `zones` map to name it with" in message
    assert "formatVersion 3" in message


@pytest.mark.parametrize(
    "change, pattern",
    [
        (lambda d: d["zones"].append({"id": "apne1-az9", "name": A}), "zone name 'ap-northeast-1a' is listed twice"),
        (lambda d: d["zones"].append({"id": "apne1-az4", "name": f"{TOKYO}b"}), "zone ID 'apne1-az4' is listed twice"),
        (
            lambda d: d["zones"].pop(0),
            r"instanceTypes\[\d\] 'm5\.2?xlarge': (spot_prices|zones)\['ap-northeast-1'\]: 'apne1-az4' is not a zone "
            r"ID of the file's `zones` map \(apne1-az1, apne1-az2\)",
        ),
        (lambda d: d["zones"].append({"id": "use1 az1", "name": f"{TOKYO}b"}), r"zones\[3\]\.id must be a zone ID"),
        (lambda d: d["zones"].append({"name": f"{TOKYO}b"}), r'zones\[3\] must be an object with exactly "name" and'),
        (
            lambda d: d["zones"].append({"id": "use1-az1", "name": "us-east-1a"}),
            r"zones\[3\]\.name: 'us-east-1a' is not a zone of ap-northeast-1",
        ),
        (
            lambda d: d.update(
                zones=[{"id": f"apne1-az{i}", "name": f"{TOKYO}-z{i}"} for i in range(MAX_ZONES_PER_REGION + 1)]
            ),
            f"must be a list of at most {MAX_ZONES_PER_REGION} objects",
        ),
        (lambda d: d.pop("region"), "a file with `zones` needs `region`"),
        (lambda d: d.update(formatVersion=2), r"`zones` \(zone names and IDs\) is allowed only with formatVersion 3"),
        (lambda d: d.update(account="me"), "account must be a 12-digit AWS account ID"),
    ],
)
def test_a_map_that_does_not_name_every_zone_once_is_refused(tmp_path, change, pattern):
    document = id_keyed_document(tmp_path)
    change(document)
    message = _refused(tmp_path, document)
    assert "bad.json" in message
    assert re.search(pattern, message), message
