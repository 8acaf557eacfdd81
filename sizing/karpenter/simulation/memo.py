"""A bounded memory of results keyed by the identity of the objects they were computed from.

Claims of one type and content share their candidate arrays, so what is worked out for one holds
for the others: keyed by the arrays' ids (plus plain values), each entry keeps the objects
themselves, so that an id cannot be reused by another object while the entry is kept.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

Result = TypeVar("Result")


class IdentityMemo(Generic[Result]):
    """The last results, up to `kept` of them (then the memory starts again empty)."""

    def __init__(self, kept: int):
        self.kept = kept
        self._entries: dict[tuple[Hashable, ...], tuple[tuple[object, ...], Result]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, objects: tuple[object, ...], values: tuple[Hashable, ...]) -> Result | None:
        """The result kept for these objects (by identity) and values, or None."""
        entry = self._entries.get((*map(id, objects), *values))
        if entry is None:
            return None
        for kept, given in zip(entry[0], objects, strict=True):
            if kept is not given:
                return None
        return entry[1]

    def put(self, objects: tuple[object, ...], values: tuple[Hashable, ...], result: Result) -> None:
        if len(self._entries) >= self.kept:
            self._entries.clear()
        self._entries[(*map(id, objects), *values)] = (objects, result)
