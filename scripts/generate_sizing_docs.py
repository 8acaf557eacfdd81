"""Write the capacity reports docs/sizing.md quotes, and the picture of the dev stack's HTML
report the README shows, from the planner itself.

    python -m scripts.generate_sizing_docs          # rewrite the quoted reports and the picture
    python -m scripts.generate_sizing_docs --check  # exit 1 when one is stale

The picture (docs/images/capacity-report-dev.png) is a headless Chromium screenshot of the dev
stack's `plan --html` page. A PNG may differ by a pixel from one machine's fonts to another's,
so the SHA-256 of the page it was taken of is kept beside it (capacity-report-dev.html.sha256):
`--check` renders the page again and compares that hash, and needs no browser.

Three reports: the whole output of `python -m sizing plan --stack dev` (under "### The dev
stack"), the prod stack's trimmed to its header, fleet summary and first node, then everything from
the scenarios on (under "### The production stack"), and the example of pods that never schedule
(its scenario, pending pods and limits). Each plan is bounded by work, not time, so it is the same
on every machine. The prose around them, and docs/costs.md, are edited by hand and checked by
tests/docs/test_docs.py.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parents[1]
GUIDE = PROJECT_DIR / "docs" / "sizing.md"
SECTION = "### The dev stack"
PROD_SECTION = "### The production stack"
EXAMPLE_SECTION = "Worked example: pods that never schedule"
EXAMPLE = PROJECT_DIR / "docs" / "examples" / "pods-that-never-schedule.yaml"
PICTURE = PROJECT_DIR / "docs" / "images" / "capacity-report-dev.png"
PICTURE_SOURCE = PROJECT_DIR / "docs" / "images" / "capacity-report-dev.html.sha256"
FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@functools.cache
def _stack_plan(stack: str) -> Any:
    from sizing.planning.planner import plan_capacity
    from stackplan.capacity import plan_input_for_stack

    return plan_capacity(plan_input_for_stack(stack, PROJECT_DIR))


def _stack_report(stack: str) -> str:
    from sizing.planning.report import render_report

    return render_report(_stack_plan(stack))


def dev_page() -> str:
    """The dev stack's plan as the HTML page `python -m sizing plan --stack dev --html FILE` writes."""
    from sizing.planning.report import plan_data
    from sizing.planning.report_html import render_html

    return render_html(plan_data(_stack_plan("dev")))


def page_digest(page: str) -> str:
    """The line kept in PICTURE_SOURCE: the SHA-256 of the page the picture was taken of."""
    return f"{hashlib.sha256(page.encode()).hexdigest()}  capacity report of the dev stack (plan --stack dev --html)\n"


def picture_is_current(page: str) -> bool:
    return PICTURE.exists() and PICTURE_SOURCE.exists() and PICTURE_SOURCE.read_text() == page_digest(page)


def write_picture(page: str) -> None:
    """Screenshot `page` in headless Chromium into PICTURE, and its hash into PICTURE_SOURCE."""
    from scripts.browser import check_page

    with tempfile.TemporaryDirectory(prefix="capacity-report-") as folder:
        path = Path(folder) / "capacity.html"
        path.write_text(page, encoding="utf-8")
        check = check_page(path)
    if check.errors or check.requests:
        raise RuntimeError(f"the dev report does not load cleanly: {check.errors + check.requests}")
    from PIL import Image

    # A page of text, bars and lines needs no more than a 256-colour palette: a third of the bytes.
    image = Image.open(io.BytesIO(check.png)).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    PICTURE.parent.mkdir(parents=True, exist_ok=True)
    image.save(PICTURE, format="PNG", optimize=True)
    PICTURE_SOURCE.write_text(page_digest(page))


def dev_report() -> str:
    return _stack_report("dev").strip() + "\n"


def prod_report() -> str:
    """The prod report without its first line, its fleet cut after the first node, from the scenarios on whole."""
    report = _stack_report("prod")
    lines = report.splitlines()
    first_node = next(i for i, line in enumerate(lines) if line.startswith("nodeclaim-1 "))
    tail = report[report.index("Scenarios under the planned limits") :].strip()
    return "\n".join(lines[1 : first_node + 2] + ["…", "", tail]) + "\n"


def example_report() -> str:
    """The rows of the example's report that the guide explains: the peak, the pods that never
    schedule, the limits and what a core under the minimum changes."""
    from sizing.kube.objects import read_objects
    from sizing.planning.objects import plan_input_from_objects
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import render_report

    plan = plan_capacity(plan_input_from_objects(read_objects([("example", EXAMPLE.read_text())])))
    sections = render_report(plan).split("\n\n")

    def section(start: str, lines: int) -> str:
        found = next(part for part in sections if part.startswith(start) or f"\n{start}" in part)
        kept = found[found.index(start) :].splitlines()
        return "\n".join(kept[:lines])

    return (
        "\n\n".join(
            [
                section("Scenarios under the planned limits", 5),
                section("Pods pending even without limits", 3),
                section("NodePool general limits", 6),
            ]
        )
        + "\n"
    )


def with_report(text: str, report: str, heading: str = SECTION) -> str:
    start = text.index(heading)
    fence = FENCE.search(text, start)
    if fence is None:
        raise ValueError(f"no fenced block after {heading!r} in {GUIDE}")
    return text[: fence.start(1)] + report + text[fence.end(1) :]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.generate_sizing_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/sizing.md is stale")
    args = parser.parse_args(argv)
    text = GUIDE.read_text()
    updated = with_report(text, dev_report())
    updated = with_report(updated, prod_report(), PROD_SECTION)
    updated = with_report(updated, example_report(), EXAMPLE_SECTION)
    page = dev_page()
    if args.check:
        stale = False
        if updated != text:
            print(f"{GUIDE.relative_to(PROJECT_DIR)} is stale: run python -m scripts.generate_sizing_docs")
            stale = True
        if not picture_is_current(page):
            print(f"{PICTURE.relative_to(PROJECT_DIR)} is stale: run python -m scripts.generate_sizing_docs")
            stale = True
        return 1 if stale else 0
    if updated != text:
        GUIDE.write_text(updated)
        print(f"wrote {GUIDE.relative_to(PROJECT_DIR)}")
    if not picture_is_current(page):
        write_picture(page)
        print(f"wrote {PICTURE.relative_to(PROJECT_DIR)} ({len(page):,} bytes of HTML)")
    return 0


if __name__ == "__main__":
    from sizing.interrupts import stop_cleanly_on_signals

    stop_cleanly_on_signals()
    sys.exit(main(sys.argv[1:]))
