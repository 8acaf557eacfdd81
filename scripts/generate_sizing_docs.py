"""Write the capacity reports docs/sizing.md quotes, from the planner itself.

    python -m scripts.generate_sizing_docs          # rewrite the quoted reports
    python -m scripts.generate_sizing_docs --check  # exit 1 when one is stale

Three reports: the whole output of `python -m sizing plan --stack dev` (under "### The dev
stack"), the prod stack's trimmed to its header, fleet summary and first node, then everything from
the scenarios on (under "### The production stack"), and the example of pods that never schedule
(its scenario, pending pods and limits). Each plan is bounded by work, not time, so it is the same
on every machine. The prose around them, and docs/costs.md, are edited by hand and checked by
tests/docs/test_docs.py.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
GUIDE = PROJECT_DIR / "docs" / "sizing.md"
SECTION = "### The dev stack"
PROD_SECTION = "### The production stack"
EXAMPLE_SECTION = "Worked example: pods that never schedule"
EXAMPLE = PROJECT_DIR / "docs" / "examples" / "pods-that-never-schedule.yaml"
FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _stack_report(stack: str) -> str:
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import render_report
    from stackconfig.capacity import plan_input_for_stack

    return render_report(plan_capacity(plan_input_for_stack(stack, PROJECT_DIR)))


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
