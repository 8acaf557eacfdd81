"""Write the dev stack's capacity report into docs/sizing.md, from the planner itself.

    python -m scripts.generate_sizing_docs          # rewrite the report under "### The dev stack"
    python -m scripts.generate_sizing_docs --check  # exit 1 when it is stale

The report is the whole output of `python -m sizing plan --stack dev`; the plan is bounded by work,
not time, so it is the same on every machine. The other figures the guides quote (the prod
example, docs/costs.md) are checked by tests/docs/test_docs.py and edited by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
GUIDE = PROJECT_DIR / "docs" / "sizing.md"
SECTION = "### The dev stack"
FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def dev_report() -> str:
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import render_report
    from stackconfig.capacity import plan_input_for_stack

    return render_report(plan_capacity(plan_input_for_stack("dev", PROJECT_DIR))).strip() + "\n"


def with_report(text: str, report: str) -> str:
    start = text.index(SECTION)
    fence = FENCE.search(text, start)
    if fence is None:
        raise ValueError(f"no fenced block after {SECTION!r} in {GUIDE}")
    return text[: fence.start(1)] + report + text[fence.end(1) :]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.generate_sizing_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/sizing.md is stale")
    args = parser.parse_args(argv)
    text = GUIDE.read_text()
    updated = with_report(text, dev_report())
    if args.check:
        if updated != text:
            print(f"{GUIDE.relative_to(PROJECT_DIR)} is stale: run python -m scripts.generate_sizing_docs")
            return 1
        return 0
    if updated != text:
        GUIDE.write_text(updated)
        print(f"wrote {GUIDE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
