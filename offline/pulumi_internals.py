"""The Pulumi SDK internals the offline harness depends on, in one place.

The harness runs the real program against a recording mock monitor. Some of what that needs has no
public API in the SDK: the markers of resource references and secrets in a wire struct, running the
SDK's async serialiser from a synchronous RPC handler, forgetting the previous run's stack resource,
the mock monitor's own table of registrations, and the list of every config key. A minor Pulumi
release may rename any of them, so every such name is looked up here, and nowhere else in `offline/`.
A name that is gone stops the import with a message naming it, the installed Pulumi version and what
to do; tests/offline/test_pulumi_internals.py checks the names and how they behave.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

# The Pulumi version these names were last checked against (the pin in requirements.txt).
CHECKED_WITH = "3.272.0"


@dataclass(frozen=True)
class Internal:
    module: str
    name: str  # an attribute of the module, dotted for a class attribute
    why: str

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}"


INTERNALS = (
    Internal(
        "pulumi.runtime.rpc", "_special_sig_key", "the key that marks a reference, secret or output in a wire struct"
    ),
    Internal("pulumi.runtime.rpc", "_special_resource_sig", "the marker of a resource reference"),
    Internal("pulumi.runtime.rpc", "_special_secret_sig", "the marker of a secret"),
    Internal("pulumi.runtime.rpc", "_special_output_value_sig", "the marker of an output value"),
    Internal("pulumi.runtime.rpc", "UNKNOWN", "the wire form of a value known only after deployment"),
    Internal("pulumi.runtime.rpc", "serialize_properties", "turns recorded state back into a wire struct"),
    Internal(
        "pulumi.runtime.sync_await",
        "_sync_await",
        "runs the async serialiser inside the monitor's synchronous handlers",
    ),
    Internal("pulumi.runtime.settings", "ROOT", "forgets the previous run's stack resource before the next run"),
    Internal(
        "pulumi.runtime.mocks", "MockMonitor.ResourceRegistration", "a registration the mock monitor answers reads from"
    ),
    Internal("pulumi.runtime.mocks", "MockMonitor.make_urn", "the URN of a registered resource"),
    Internal(
        "pulumi.runtime.mocks", "MockMonitor.resources", "the mock monitor's table of registrations (set in __init__)"
    ),
    Internal("pulumi.runtime.config", "CONFIG", "every config key of the run: stackconfig.load rejects unknown ones"),
)


class PulumiInternalsChanged(ImportError):
    """The installed Pulumi SDK lacks a name the harness relies on."""


def installed_pulumi_version() -> str:
    try:
        return version("pulumi")
    except PackageNotFoundError:  # pragma: no cover - pulumi is a requirement
        return "unknown"


def lookup(internal: Internal) -> Any:
    """The object an internal names; raises PulumiInternalsChanged, naming it, if it is gone."""
    try:
        value: Any = importlib.import_module(internal.module)
        for part in internal.name.split("."):
            value = getattr(value, part) if hasattr(value, part) else getattr(_instance(value), part)
        return value
    except (ImportError, AttributeError, TypeError):
        raise PulumiInternalsChanged(changed_message([internal])) from None


def _instance(cls: Any) -> Any:
    # Instance attributes (MockMonitor.resources) exist only once __init__ has run.
    mocks = importlib.import_module("pulumi.runtime.mocks")
    return cls(None) if cls is mocks.MockMonitor else cls


def missing() -> list[Internal]:
    """The internals the installed SDK no longer has."""
    gone = []
    for internal in INTERNALS:
        try:
            lookup(internal)
        except PulumiInternalsChanged:
            gone.append(internal)
    return gone


def changed_message(gone: list[Internal]) -> str:
    names = "; ".join(f"{internal.qualified} ({internal.why})" for internal in gone)
    return (
        f"the offline harness needs private Pulumi SDK names that pulumi {installed_pulumi_version()} no longer has: "
        f"{names}. They were checked against pulumi {CHECKED_WITH}. Find what replaced them in the SDK "
        f"(pulumi/runtime/ of the installed version) and update offline/pulumi_internals.py, or pin "
        f"pulumi=={CHECKED_WITH} again in requirements.txt."
    )


_gone = missing()
if _gone:
    raise PulumiInternalsChanged(changed_message(_gone))

_by_name = {internal.name: lookup(internal) for internal in INTERNALS}

SIG_KEY: str = _by_name["_special_sig_key"]
RESOURCE_SIG: str = _by_name["_special_resource_sig"]
SECRET_SIG: str = _by_name["_special_secret_sig"]
OUTPUT_VALUE_SIG: str = _by_name["_special_output_value_sig"]
UNKNOWN: str = _by_name["UNKNOWN"]
serialize_properties = _by_name["serialize_properties"]
sync_await = _by_name["_sync_await"]
ResourceRegistration = _by_name["MockMonitor.ResourceRegistration"]


def remember_resource(monitor: Any, urn: str, resource_id: str, state: dict) -> None:
    """Enter a resource in the mock monitor's table, which answers later reads and references."""
    monitor.resources[urn] = ResourceRegistration(urn, resource_id, state)


def forget_root_resource() -> None:
    """Start a run with no stack resource: the SDK keeps the last run's in a context variable."""
    _by_name["ROOT"].set(None)
