"""A small reader of TypeScript object literals, enough for the arguments of a component call.

It turns `{ clusterName: "x", capacity: { priceOverrides: { "m5.large": 0.124 } } }` into Python
values; anything that is not a literal (`vpc.vpcId`, a call) becomes `UNKNOWN`.
"""

from __future__ import annotations

import re
from typing import Any

from tests.package.schema_checks import UNKNOWN

TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/"""
    r"""|(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"""
    r"""|(?P<name>[A-Za-z_$][\w$]*)"""
    r"""|(?P<punct>[{}\[\]:,.()])|(?P<other>[;=+*/<>!?&|%^~@#`-])""",
    re.DOTALL,
)


def tokens(text: str) -> list[tuple[str, str]]:
    result, position = [], 0
    while position < len(text):
        match = TOKEN.match(text, position)
        if not match:
            raise ValueError(f"cannot read TypeScript at {text[position:position + 30]!r}")
        position = match.end()
        kind = match.lastgroup
        if kind:
            result.append((kind, match.group(kind)))
    return result


def component_arguments(source: str, class_name: str) -> list[tuple[str, Any]]:
    """(resource name, args) of every `new <module>.<class_name>("name", {...})` in the source."""
    found = []
    for match in re.finditer(rf"new\s+(?:[\w$]+\.)?{class_name}\s*\(", source):
        parser = _Parser(tokens(source[match.end():]))
        name = parser.value()
        parser.expect(",")
        found.append((name, parser.value()))
    return found


class _Parser:
    def __init__(self, items: list[tuple[str, str]]):
        self.items, self.index = items, 0

    def peek(self) -> tuple[str, str]:
        return self.items[self.index] if self.index < len(self.items) else ("end", "")

    def take(self) -> tuple[str, str]:
        item = self.peek()
        self.index += 1
        return item

    def expect(self, punct: str) -> None:
        kind, text = self.take()
        if (kind, text) != ("punct", punct):
            raise ValueError(f"expected {punct!r}, found {text!r}")

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return bytes(text[1:-1], "utf-8").decode("unicode_escape")
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "punct" and text == "{":
            return self._object()
        if kind == "punct" and text == "[":
            return self._array()
        if kind == "name" and text in ("true", "false"):
            return text == "true"
        if kind == "name":
            self._skip_expression()
            return UNKNOWN
        raise ValueError(f"unexpected {text!r}")

    def _object(self) -> dict:
        result = {}
        while self.peek() != ("punct", "}"):
            kind, key = self.take()
            if kind not in ("name", "string"):
                raise ValueError(f"unexpected key {key!r}")
            key = key[1:-1] if kind == "string" else key
            self.expect(":")
            result[key] = self.value()
            if self.peek() == ("punct", ","):
                self.take()
        self.take()
        return result

    def _array(self) -> list:
        result = []
        while self.peek() != ("punct", "]"):
            result.append(self.value())
            if self.peek() == ("punct", ","):
                self.take()
        self.take()
        return result

    def _skip_expression(self) -> None:
        # `a.b.c` or `f(x)`: skip member accesses and balanced parentheses.
        depth = 0
        while True:
            kind, text = self.peek()
            if kind == "end":
                return
            if depth == 0 and kind == "punct" and text in ",}])":
                return
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
            self.take()
