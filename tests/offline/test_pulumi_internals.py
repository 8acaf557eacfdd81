"""The private Pulumi SDK names the offline harness relies on are still there and still mean the same.

When one of these fails after a Pulumi upgrade, the message says which name vanished, which Pulumi
version is installed and what to do: update offline/pulumi_internals.py, or pin Pulumi back.
"""

import re

import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import resource_pb2

from offline import pulumi_internals
from offline.program import PROJECT_DIR
from offline.wire import ResourceRef, Secret, decode_struct, encode

# Wire-protocol constants shared by every Pulumi SDK (sdk/go/common/resource/sig in the engine).
PROTOCOL = {
    "SIG_KEY": "4dabf18193072939515e22adb298388d",
    "RESOURCE_SIG": "5cf8f73096256a8f31e491e813e4eb8e",
    "SECRET_SIG": "1b47061264138c4ac30d75fd1eb44270",
    "OUTPUT_VALUE_SIG": "d0e6a833031e9bbcd3f4e8bde6ca49a4",
    "UNKNOWN": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
}


def test_every_private_name_the_harness_uses_is_still_in_the_sdk():
    gone = pulumi_internals.missing()
    if gone:
        pytest.fail(pulumi_internals.changed_message(gone), pytrace=False)


@pytest.mark.parametrize("name", sorted(PROTOCOL))
def test_the_wire_markers_keep_their_protocol_values(name):
    value = getattr(pulumi_internals, name)
    assert value == PROTOCOL[name], (
        f"pulumi {pulumi_internals.installed_pulumi_version()} marks {name} as {value!r}, not {PROTOCOL[name]!r}: "
        "the wire format changed; check offline/wire.py against the SDK's pulumi/runtime/rpc.py"
    )


def test_the_sdk_serialiser_and_the_harness_decoder_agree():
    state = {"ref": ResourceRef("urn:pulumi:dev::p::t::n", "n-id"), "token": Secret("hunter2"), "plain": [1, "a"]}
    struct = pulumi_internals.sync_await(pulumi_internals.serialize_properties(encode(state), {}))
    assert isinstance(struct, struct_pb2.Struct)
    assert decode_struct(struct) == state


def test_a_remembered_resource_is_what_the_sdk_monitor_returns_for_it():
    monitor = MockMonitor(None)
    urn = "urn:pulumi:dev::p::aws:s3/bucket:Bucket::b"
    pulumi_internals.remember_resource(monitor, urn, "b-id", {"id": "b-id", "bucket": "b-123"})
    request = resource_pb2.ResourceInvokeRequest(tok="pulumi:pulumi:getResource")
    request.args.update({"urn": urn})
    answer = decode_struct(getattr(monitor.Invoke(request), "return"))
    assert (answer["urn"], answer["id"], answer["state"]["bucket"]) == (urn, "b-id", "b-123")


def test_a_vanished_name_is_reported_with_the_version_and_the_way_out(monkeypatch):
    monkeypatch.delattr(rpc, "_special_secret_sig")
    gone = pulumi_internals.missing()
    assert [internal.qualified for internal in gone] == ["pulumi.runtime.rpc._special_secret_sig"]
    message = pulumi_internals.changed_message(gone)
    assert "pulumi.runtime.rpc._special_secret_sig" in message
    assert f"pulumi {pulumi_internals.installed_pulumi_version()} no longer has" in message
    assert "update offline/pulumi_internals.py" in message and f"pulumi=={pulumi_internals.CHECKED_WITH}" in message
    with pytest.raises(pulumi_internals.PulumiInternalsChanged, match="_special_secret_sig"):
        pulumi_internals.lookup(gone[0])


def test_the_names_were_checked_against_the_pinned_pulumi():
    pinned = re.search(r"^pulumi==(\S+)$", (PROJECT_DIR / "requirements.txt").read_text(), re.MULTILINE).group(1)
    assert pinned == pulumi_internals.CHECKED_WITH, (
        f"requirements.txt pins pulumi {pinned} but offline/pulumi_internals.py was checked against "
        f"{pulumi_internals.CHECKED_WITH}: run tests/offline/test_pulumi_internals.py, fix any name it reports, "
        "then set CHECKED_WITH"
    )


def test_no_other_offline_module_reaches_into_pulumi_privately():
    offenders = []
    for path in sorted((PROJECT_DIR / "offline").glob("*.py")):
        if path.name == "pulumi_internals.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(
                r"\b(rpc|settings|sync_await|runtime_config|mocks)\._[a-z]|\b_sync_await\b|\.resources\[", line
            ):
                offenders.append(f"offline/{path.name}:{number}: {line.strip()}")
    assert offenders == []
