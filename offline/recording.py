"""What the program registered, and questions about its dependency graph."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from offline.wire import reveal


@dataclass(frozen=True)
class Registered:
    """One registered resource: type, name, URN, parent, inputs, provider and every edge."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    remote: bool
    inputs: dict
    outputs: dict
    provider: str | None
    providers: dict
    dependencies: tuple
    property_dependencies: dict
    deleted_with: str | None
    protect: bool = False
    retain_on_delete: bool = False
    ignore_changes: tuple = ()
    version: str | None = None

    def input(self, path: str, default: Any = KeyError) -> Any:
        """An input by dotted path (`spec.template.spec`), secrets unwrapped."""
        value: Any = reveal(self.inputs)
        for part in path.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                if default is KeyError:
                    raise KeyError(f"{self.type} {self.name!r} has no input {path!r}")
                return default
        return value

    def edges(self) -> Iterator[tuple[str, str]]:
        """(kind, urn) of everything the engine orders this resource after."""
        if self.parent:
            yield "parent", self.parent
        if self.provider:
            yield "provider", self.provider
        for urn in self.providers.values():
            if urn:
                yield "provider", urn
        for urn in self.dependencies:
            yield "dependency", urn
        for urns in self.property_dependencies.values():
            for urn in urns:
                yield "property", urn
        if self.deleted_with:
            yield "deletedWith", self.deleted_with

    def __repr__(self) -> str:
        return f"<{self.type} {self.name}>"


@dataclass
class Recording:
    resources: list[Registered] = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    secret_outputs: set = field(default_factory=set)
    component_outputs: dict = field(default_factory=dict)
    # Values the mocks made up (ids, ARNs, the account) -> a placeholder naming what they stand for.
    invented: dict = field(default_factory=dict)
    # Texts that stand in for values the stack file leaves to its operator -> their placeholders.
    stood_in: dict = field(default_factory=dict)
    # What the program logged at warning level (pulumi.log.warn), in order.
    warnings: list = field(default_factory=list)
    # (token, provider URN or None) of every invoke the program made.
    invokes: list = field(default_factory=list)

    def add(self, resource: Registered) -> None:
        self.resources.append(resource)

    # Finding resources

    def of_type(self, type_: str) -> list[Registered]:
        return [resource for resource in self.resources if resource.type == type_]

    def besides_providers(self) -> list[Registered]:
        """Every registration but the providers', which create nothing in the cloud."""
        return [resource for resource in self.resources if not resource.type.startswith("pulumi:providers:")]

    def named(self, name: str) -> Registered:
        matches = [resource for resource in self.resources if resource.name == name]
        if len(matches) != 1:
            raise LookupError(f"expected one resource named {name!r}, found {len(matches)}: {matches}")
        return matches[0]

    def one(self, type_: str, name: str | None = None) -> Registered:
        """The one resource of type T (and name N, when given)."""
        matches = [r for r in self.of_type(type_) if name is None or r.name == name]
        if len(matches) != 1:
            names = sorted(r.name for r in self.of_type(type_))
            raise LookupError(f"expected one {type_} named {name!r}, found {len(matches)}; of that type: {names}")
        return matches[0]

    def by_urn(self, urn: str) -> Registered:
        for resource in self.resources:
            if resource.urn == urn:
                return resource
        raise LookupError(f"no resource with URN {urn}")

    # The dependency graph

    def depends_on(self, dependent: Registered, dependency: Registered, *, via: Iterable[str] | None = None) -> bool:
        """Whether the engine orders `dependent` after `dependency` (and deletes it first),
        through any chain of parent, provider, explicit, property and deletedWith edges.

        A `depends_on` on a local component is recorded as edges to its children, and a
        component's own edges hold for everything under it: both are followed here.
        """
        kinds = set(via) if via is not None else None
        targets = {dependency.urn} | {r.urn for r in self.descendants(dependency)}
        seen: set[str] = set()
        stack = [dependent.urn]
        while stack:
            urn = stack.pop()
            if urn in seen:
                continue
            seen.add(urn)
            try:
                resource = self.by_urn(urn)
            except LookupError:
                continue
            for kind, target in resource.edges():
                if kinds is not None and kind not in kinds:
                    continue
                if target in targets:
                    return True
                stack.append(target)
        return False

    def descendants(self, ancestor: Registered) -> list[Registered]:
        found, frontier = [], [ancestor.urn]
        while frontier:
            urn = frontier.pop()
            for resource in self.resources:
                if resource.parent == urn:
                    found.append(resource)
                    frontier.append(resource.urn)
        return found

    def deletion_order(self) -> list[Registered]:
        """An order `pulumi destroy` may delete in: every resource before what it depends on."""
        remaining = {resource.urn: resource for resource in self.resources}
        dependents: dict[str, set[str]] = {urn: set() for urn in remaining}
        for resource in self.resources:
            for _, target in resource.edges():
                if target in dependents:
                    dependents[target].add(resource.urn)
        order: list[Registered] = []
        while remaining:
            ready = sorted(urn for urn in remaining if not (dependents[urn] & remaining.keys()))
            if not ready:
                raise ValueError(f"dependency cycle among {sorted(remaining)}")
            for urn in ready:
                order.append(remaining.pop(urn))
        return order
