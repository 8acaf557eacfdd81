"""Hold an HTML capacity report to the plan's JSON: every figure the page writes as text is
found in an element naming its place in the JSON (`data-json`) and how it is shown (`data-op`);
this module recomputes each from the JSON on its own and compares, and finds any number in the
page's text that names no place (outside the charts' SVG, whose axes carry tick values)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

DECIMALS = {"value": 4, "cores": 3, "gib": 2, "percent": 1, "sum": 4}
# A number standing alone: not part of a name such as m5.large, us-east-1a or nodeclaim-2.
BARE_NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:\.\d+)?(?![\w\-/]|\.\w)")


@dataclass
class Figure:
    path: list[Any]
    op: str
    text: str
    attributes: dict[str, str]


@dataclass
class _Page(HTMLParser):
    figures: list[Figure] = field(default_factory=list)
    bounds: list[tuple[int, str]] = field(default_factory=list)
    loose_text: list[str] = field(default_factory=list)
    chart_ids: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.svg_depth = 0
        self.skip_depth = 0
        self.capture: list[tuple[dict[str, str], list[str], int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "svg":
            self.svg_depth += 1
            self.chart_ids.append(attributes.get("id", ""))
        if tag in ("style", "title") and not self.svg_depth:
            self.skip_depth += 1
        if "data-json" in attributes or "data-bound" in attributes:
            self.capture.append((attributes, [], len(self.stack)))
        self.stack.append((tag, attributes))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack:
            return
        self.stack.pop()
        if tag == "svg":
            self.svg_depth -= 1
        if tag in ("style", "title") and not self.svg_depth:
            self.skip_depth -= 1
        if self.capture and self.capture[-1][2] == len(self.stack):
            attributes, parts, _ = self.capture.pop()
            text = "".join(parts)
            if "data-bound" in attributes:
                self.bounds.append((int(attributes["data-bound"]), text))
            else:
                path = json.loads(attributes["data-json"])
                self.figures.append(Figure(path, attributes["data-op"], text, attributes))

    def handle_data(self, data: str) -> None:
        if self.capture:
            self.capture[-1][1].append(data)
        elif not self.svg_depth and not self.skip_depth:
            self.loose_text.append(data)


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _at(data: Any, path: list[Any]) -> Any:
    for key in path:
        data = data[key]
    return data


def expected(data: Any, figure: Figure) -> Any:
    """The figure's value recomputed from the JSON (a number, a string or JSON text)."""
    value = _at(data, figure.path)
    op = figure.op
    if op == "value":
        return value
    if op == "cores":
        return value / 1000
    if op == "gib":
        return value / 1024
    if op == "percent":
        total = _at(data, json.loads(figure.attributes["data-of"]))
        return 100 * value / total if total else 0
    where = json.loads(figure.attributes.get("data-where", "{}"))
    matching = [item for item in value if all(item.get(k) == v for k, v in where.items())]
    if op == "count":
        return len(matching)
    if op == "sum":
        return sum(item[figure.attributes["data-field"]] for item in matching)
    if op == "json":
        return json.loads(figure.text) == value and figure.text
    raise AssertionError(f"unknown op {op!r}")


def mismatches(data: Any, page: str) -> list[str]:
    """Every figure of `page` that differs from the JSON, and every number that names no place."""
    parsed = parse(page)
    wrong = []
    for figure in parsed.figures:
        want = expected(data, figure)
        if figure.op == "json":
            if want is False:
                wrong.append(f"{figure.path}: the JSON section shown differs")
        elif want is None:
            if figure.text != "—":
                wrong.append(f"{figure.path}: {figure.text!r} for null")
        elif isinstance(want, str):
            if figure.text != want:
                wrong.append(f"{figure.path}: {figure.text!r} != {want!r}")
        else:
            tolerance = 0.5 * 10 ** -DECIMALS.get(figure.op, 0) + 1e-9
            exact = isinstance(want, int) and figure.op in ("value", "count")
            if (exact and figure.text != str(want)) or abs(float(figure.text) - want) > tolerance:
                wrong.append(f"{figure.path} ({figure.op}): {figure.text!r} != {want}")
    loose = " ".join(parsed.loose_text)
    wrong += [f"a number that names no place in the JSON: {match.group()!r}" for match in BARE_NUMBER.finditer(loose)]
    return wrong


def figure_paths(page: str) -> set[tuple[Any, ...]]:
    return {tuple(figure.path) for figure in parse(page).figures}
