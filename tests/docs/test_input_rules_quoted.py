"""The input rules the guides and `--help` state are the code's: the ceilings, the YAML reader's
bounds, and what each door of `python -m sizing plan` accepts."""

from __future__ import annotations

import argparse

from offline.program import PROJECT_DIR
from sizing.cli import build_parser
from sizing.karpenter.catalog import MAX_INSTANCE_TYPES
from sizing.karpenter.pricing import MAX_DISCOUNT_PERCENT
from sizing.kube.safe_yaml import MAX_ALIAS_REPEATS, MAX_DEPTH, MAX_INPUT_BYTES
from sizing.kube.workloads import MAX_EXISTING_NODES, MAX_NODE_PER_POD_PODS, MAX_PEAK_PODS, MAX_REPLICAS, MAX_WORKLOADS
from sizing.planning.ceilings import MAX_NODE_POOL_LABELS, MAX_NODE_POOL_REQUIREMENTS, MAX_TOPOLOGY_POD_DOMAINS

README = (PROJECT_DIR / "README.md").read_text()
SIZING_INPUT = (PROJECT_DIR / "docs" / "sizing-input.md").read_text()
MIB = f"{MAX_INPUT_BYTES // (1024 * 1024)} MiB"


def plan_help() -> str:
    parser = build_parser()
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return subparsers.choices["plan"].format_help()


def test_the_readme_states_the_yaml_rules_of_the_stack_file():
    section = README.split("## Configuration", 1)[1].split("| Key |", 1)[0]
    assert "A key given twice" in section and "both lines" in section
    assert f"limit of {MAX_ALIAS_REPEATS:,}" in section and f"nest at most {MAX_DEPTH} deep" in section
    assert MIB in section and "an alias inside its own anchor is refused" in section


def test_the_guides_quote_the_ceilings_of_the_code():
    ceilings = SIZING_INPUT.split("## Ceilings", 1)[1].split("\n## ", 1)[0]
    for figure in (
        f"{MAX_REPLICAS:,} replicas of one workload",
        f"{MAX_PEAK_PODS:,} pods at peak in all",
        f"{MAX_WORKLOADS:,} workloads",
        f"{MAX_EXISTING_NODES:,} existing nodes",
        f"{MAX_NODE_PER_POD_PODS:,} pods at peak that each need a node",
        f"{MAX_TOPOLOGY_POD_DOMAINS:,} pods times topology domains",
        f"{MAX_NODE_POOL_REQUIREMENTS} requirements and {MAX_NODE_POOL_LABELS} template labels per NodePool",
        f"{MAX_INSTANCE_TYPES:,} instance types in a catalog file",
    ):
        assert figure in ceilings, figure
    assert f"max ≤ {MAX_REPLICAS:,}" in README


def test_the_help_says_what_each_door_accepts_and_the_rules():
    text = " ".join(plan_help().split())
    for door in (
        "Kubernetes objects (FILE ...",
        "A workload description (one FILE",
        "A stack (--stack NAME)",
        "stdin: '-'",
    ):
        assert door in text, door
    assert "PodDisruptionBudget" in text and "--region and --zones are refused" in text
    assert f"at most {MIB}" in text and f"at most {MAX_ALIAS_REPEATS:,} values" in text
    assert f"{MAX_REPLICAS:,} replicas per workload" in text and f"{MAX_WORKLOADS:,} workloads" in text
    assert f"{MAX_NODE_PER_POD_PODS:,} pods that need a node each" in text


def test_the_help_says_what_the_price_flags_do_by_every_door():
    text = " ".join(plan_help().split())
    assert "Prices, by every door: --catalog FILE" in text and "format 1 or 2" in text
    assert f"--spot-discount PERCENT (0 to {MAX_DISCOUNT_PERCENT:g})" in text
    assert "default: a refreshed --catalog's region" in text
    assert "capacity.catalog, capacity.spotDiscountPercent and capacity.priceOverrides" in text
    assert "--price TYPE=USD (once per type)" in text and 'stdin for "-"' in text
    assert "nodePool (requirements, labels, kubelet, amiFamily, limits)" in text
    assert f"{MAX_TOPOLOGY_POD_DOMAINS:,} pods times the domains" in text
    assert f"{MAX_INSTANCE_TYPES:,} instance types in a catalog file" in text
