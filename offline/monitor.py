"""A mock monitor that records every registration with its dependency edges."""

from __future__ import annotations

import json
from collections.abc import Callable

from google.protobuf import empty_pb2
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs
from pulumi.runtime.proto import provider_pb2, resource_pb2

from offline.pulumi_internals import remember_resource, serialize_properties, sync_await
from offline.recording import Registered
from offline.wire import decode_struct, encode


class RecordingMonitor(MockMonitor):
    def __init__(self, mocks, on_register: Callable[[Registered], None]):
        super().__init__(mocks)
        self._on_register = on_register
        self.component_outputs: dict[str, dict] = {}

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = decode_struct(request.object)
        if request.type.startswith("pulumi:providers:"):
            inputs = {key: _json_or_text(value) for key, value in inputs.items()}
        args = MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=inputs,
            provider=request.provider,
            resource_id=request.importId,
            custom=request.custom or False,
        )
        resource_id, state = self.mocks.new_resource(args)
        remember_resource(self, urn, resource_id, encode(state))
        self._on_register(
            Registered(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=bool(request.custom),
                remote=bool(request.remote),
                inputs=inputs,
                outputs=state,
                provider=_provider_urn(request.provider),
                providers={key: _provider_urn(value) for key, value in request.providers.items()},
                dependencies=tuple(request.dependencies),
                property_dependencies={key: tuple(value.urns) for key, value in request.propertyDependencies.items()},
                deleted_with=request.deletedWith or None,
                protect=bool(request.protect) if request.HasField("protect") else False,
                retain_on_delete=bool(request.retainOnDelete) if request.HasField("retainOnDelete") else False,
                ignore_changes=tuple(request.ignoreChanges),
                version=request.version or None,
            )
        )
        wire_state = sync_await(serialize_properties(encode(state), {}))
        return resource_pb2.RegisterResourceResponse(urn=urn, id=resource_id, object=wire_state)

    def RegisterResourceOutputs(self, request):
        self.component_outputs[request.urn] = decode_struct(request.outputs)
        return empty_pb2.Empty()

    def Call(self, request):
        """Resource methods (such as `Cluster.get_kubeconfig`) go to `Mocks.call` too."""
        args = decode_struct(request.args)
        result = self.mocks.call(MockCallArgs(token=request.tok, args=args, provider=request.provider))
        wire = sync_await(serialize_properties(encode(result), {}))
        return provider_pb2.CallResponse(**{"return": wire})


def _json_or_text(value):
    """Providers receive structured settings as JSON text; decode it for assertions."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _provider_urn(reference: str) -> str | None:
    # A provider reference is "<provider urn>::<provider id>".
    return reference.rsplit("::", 1)[0] if reference else None
