"""The pack served the way the Pulumi CLI serves it, `python -m pulumi.policy <engine> <pack dir>`,
and called over the analyzer's gRPC protocol: its policies, their verdicts on resources as the
engine encodes them, the pack configuration, and unknown values during a preview."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from policies.eks_autoscaling_rules import OPEN_ENDPOINT_TAG, RULES

PACK_DIR = Path(__file__).resolve().parents[1]
# No engine runs here; the analyzer only needs the address to exist as an argument.
UNUSED_ENGINE_ADDRESS = "127.0.0.1:1"

OPEN_CLUSTER = {
    "vpcConfig": {"endpointPublicAccess": True, "endpointPrivateAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]},
    "enabledClusterLogTypes": ["api", "audit", "authenticator"],
    "tags": {"Name": "demo-eksCluster"},
}
ACKNOWLEDGED_CLUSTER = {**OPEN_CLUSTER, "tags": {"Name": "demo-eksCluster", OPEN_ENDPOINT_TAG: "true"}}


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory):
    # Started from another directory, as the CLI does: the pack must find its own modules.
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", UNUSED_ENGINE_ADDRESS, str(PACK_DIR)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path_factory.mktemp("cwd"),
    )
    try:
        port = process.stdout.readline().strip()
        assert port.isdigit(), process.stderr.read()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def analyze(stub, resource_type: str, props: dict) -> list[tuple[str, str]]:
    properties = struct_pb2.Struct()
    properties.update(props)
    request = analyzer_pb2.AnalyzeRequest(
        type=resource_type,
        properties=properties,
        urn=f"urn:pulumi:dev::eks-autoscaling::{resource_type}::demo",
        name="demo",
    )
    response = stub.Analyze(request)
    return [
        (diagnostic.policyName, analyzer_pb2.EnforcementLevel.Name(diagnostic.enforcementLevel))
        for diagnostic in response.diagnostics
    ]


def configure(stub, policy: str, properties: dict) -> None:
    config = struct_pb2.Struct()
    config.update(properties)
    stub.Configure(
        analyzer_pb2.ConfigureAnalyzerRequest(
            policyConfig={policy: analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY, properties=config)}
        )
    )


def test_the_pack_lists_every_rule(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "eks-autoscaling"
    assert [policy.name for policy in info.policies] == [rule.name for rule in RULES]


def test_an_open_endpoint_is_a_mandatory_violation_and_its_acknowledgement_passes(analyzer):
    assert analyze(analyzer, "aws:eks/cluster:Cluster", OPEN_CLUSTER) == [
        ("eks-cluster-endpoint-restricted", "MANDATORY")
    ]
    assert analyze(analyzer, "aws:eks/cluster:Cluster", ACKNOWLEDGED_CLUSTER) == []


def test_pack_configuration_reaches_the_rules(analyzer):
    configure(analyzer, "eks-cluster-endpoint-restricted", {"allowAcknowledgedOpenEndpoint": False})
    try:
        assert analyze(analyzer, "aws:eks/cluster:Cluster", ACKNOWLEDGED_CLUSTER) == [
            ("eks-cluster-endpoint-restricted", "MANDATORY")
        ]
    finally:
        # The analyzer is shared by this module's tests; give it back its default configuration.
        configure(analyzer, "eks-cluster-endpoint-restricted", {"allowAcknowledgedOpenEndpoint": True})


def test_a_value_unknown_during_preview_gives_an_advisory_note_not_a_violation(analyzer):
    diagnostics = analyze(analyzer, "aws:iam/role:Role", {"assumeRolePolicy": UNKNOWN_STRING_VALUE})
    assert diagnostics == [("iam-service-account-trust-scoped", "ADVISORY")]
