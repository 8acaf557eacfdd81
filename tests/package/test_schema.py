"""The package schema: inferred by the SDK's analyzer, checked in, current, and documented."""

import json
from typing import TypedDict, Union

import pulumi
import pytest
from pulumi.provider.experimental.analyzer import Analyzer

from components.package import PACKAGE_NAME, package_schema
from offline.program import PROJECT_DIR
from scripts import generate_schema
from tests.package.schema_checks import COMPONENT

CHECKED_IN = json.loads((PROJECT_DIR / "schema.json").read_text())


@pytest.fixture(scope="module")
def schema():
    return package_schema()


def test_checked_in_schema_is_current(schema):
    assert schema == CHECKED_IN, "schema.json is stale: run `make schema`"


def test_generated_tables_are_current(capsys):
    assert generate_schema.main(["--check"]) == 0, capsys.readouterr().err


def test_the_component_has_the_package_token(schema):
    assert list(schema["resources"]) == [COMPONENT]
    assert schema["name"] == PACKAGE_NAME
    assert schema["resources"][COMPONENT]["isComponent"] is True


def _undocumented(schema) -> list[str]:
    resource = schema["resources"][COMPONENT]
    missing = [] if resource.get("description") else ["EksAutoscaling"]
    places = [("input", resource["inputProperties"]), ("output", resource["properties"])]
    places += [(f"type {token.rsplit(':', 1)[-1]}", spec["properties"]) for token, spec in schema["types"].items()]
    for where, properties in places:
        missing += [
            f"{where} {name}" for name, prop in properties.items() if not (prop.get("description") or "").strip()
        ]
    missing += [token for token, spec in schema["types"].items() if not (spec.get("description") or "").strip()]
    return missing


def test_every_input_output_and_type_has_a_description(schema):
    assert _undocumented(schema) == []


def test_an_undocumented_input_is_found(schema):
    broken = json.loads(json.dumps(schema))
    del broken["types"]["eks-autoscaling:index:Network"]["properties"]["cidr"]["description"]
    assert _undocumented(broken) == ["type Network cidr"]


def test_configuration_inputs_are_plain_and_vpc_inputs_accept_outputs(schema):
    inputs = schema["resources"][COMPONENT]["inputProperties"]
    assert {name for name, prop in inputs.items() if not prop.get("plain")} == {
        "vpcId",
        "publicSubnetIds",
        "privateSubnetIds",
    }
    assert schema["resources"][COMPONENT].get("requiredInputs", []) == []


class _UnionArgs(TypedDict):
    mode: Union[str, int]  # noqa: UP007 - the spelling the analyzer is asked about
    """A union, which Pulumi schemas cannot express."""


class _UnionComponent(pulumi.ComponentResource):
    def __init__(self, name: str, args: _UnionArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("x:index:_UnionComponent", name, None, opts)


def test_the_analyzer_rejects_a_type_it_cannot_express():
    # package_schema() goes through the same analyzer, so a rejected input type fails the tests above.
    with pytest.raises(Exception, match="Union types are not supported"):
        Analyzer(PACKAGE_NAME).analyze([_UnionComponent])


def test_the_plugin_manifest_runs_the_entry_point_with_the_project_requirements():
    import yaml

    plugin = PROJECT_DIR / "provider"
    assert yaml.safe_load((plugin / "PulumiPlugin.yaml").read_text())["runtime"]["name"] == "python"
    # The language host runs `python provider <engine address>` in the plugin's virtualenv, which
    # `pulumi package add` fills from provider/requirements.txt.
    assert (plugin / "__main__.py").exists()
    assert "-r ../requirements.txt" in (plugin / "requirements.txt").read_text().splitlines()


def test_the_plugin_serves_the_checked_in_schema(tmp_path):
    """Start the plugin as Pulumi's language host does (`python <plugin dir> <engine address>`, from
    another directory) and ask it over gRPC for its schema, as `pulumi package add` does."""
    import subprocess
    import sys

    import grpc
    from google.protobuf import empty_pb2
    from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

    # The engine address is only dialled when a component is constructed.
    plugin = subprocess.Popen(
        [sys.executable, str(PROJECT_DIR / "provider"), "127.0.0.1:1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = plugin.stdout.readline().strip()
        assert port.isdigit(), plugin.stderr.read() if plugin.poll() is not None else port
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            provider = provider_pb2_grpc.ResourceProviderStub(channel)
            served = json.loads(provider.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=60).schema)
            info = provider.GetPluginInfo(empty_pb2.Empty(), timeout=10)
    finally:
        plugin.terminate()
        plugin.wait(timeout=30)
    assert served == CHECKED_IN
    assert info.version == CHECKED_IN["version"] == "0.1.0"
