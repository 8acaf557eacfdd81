"""The guides (README.md, docs/*.md) against the project: the make targets they name exist, their
relative links resolve, their Mermaid diagrams are not empty, and the configuration keys they name
are keys of the stack configuration model."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from stackconfig.model import StackConfig

PROJECT_DIR = Path(__file__).resolve().parents[2]
GUIDES = sorted([PROJECT_DIR / "README.md", *(PROJECT_DIR / "docs").glob("*.md")])
MAKEFILES = [PROJECT_DIR / "Makefile", *sorted((PROJECT_DIR / "make").glob("*.mk"))]
# A target is listed by `make help` when its rule line carries a `## ` description.
HELP_TARGET = re.compile(r"^([a-zA-Z_-]+):.*## ", re.MULTILINE)
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]\n]*\]\(([^)\s]+)\)")
MAKE_WORD = re.compile(r"(?:^|(?<=[\s;&|(]))make(?=\s)")
PROJECT_KEY = re.compile(r"eks-autoscaling:([A-Za-z][A-Za-z0-9]*)")
DOTTED_KEY = re.compile(r"^[a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)+$")
MERMAID_TYPES = ("flowchart", "graph", "sequenceDiagram", "classDiagram", "stateDiagram", "erDiagram", "gantt", "pie")


def _ids(paths):
    return [str(path.relative_to(PROJECT_DIR)) for path in paths]


# --- extraction ------------------------------------------------------------------------------------


def help_targets(makefiles=MAKEFILES) -> set[str]:
    """The targets `make help` lists: every rule with a `## ` description, in Makefile and make/*.mk."""
    return {name for path in makefiles for name in HELP_TARGET.findall(path.read_text())}


def code_texts(markdown: str) -> list[str]:
    """The code of a guide: fenced blocks (Mermaid excluded) and inline code spans."""
    texts = [body for kind, body in FENCE.findall(markdown) if kind.strip() != "mermaid"]
    prose = FENCE.sub("", markdown)
    texts += INLINE_CODE.findall(prose)
    return texts


def make_targets_named(markdown: str) -> set[str]:
    """Targets of the `make` commands in a guide's code: `make up`, `STACK=prod make up`,
    `make -s help`, `make load-test DURATION=60`."""
    targets = set()
    for text in code_texts(markdown):
        for match in MAKE_WORD.finditer(text):
            tokens = text[match.end() :].split()
            skip_next = False
            for token in tokens:
                if skip_next:
                    skip_next = False
                    continue
                if token in ("-C", "-f", "-j", "--directory", "--file"):
                    skip_next = True
                    continue
                if token.startswith("-") or "=" in token:
                    continue
                name = token.rstrip(";)&|`,.")
                if re.fullmatch(r"[a-z][a-z0-9_-]*", name):
                    targets.add(name)
                break
    return targets


def relative_links(markdown: str) -> list[str]:
    """Link targets that point into the repository (not URLs, not mail, not in-page anchors alone)."""
    links = []
    prose = FENCE.sub("", markdown)
    prose = INLINE_CODE.sub("", prose)
    for match in LINK.finditer(prose):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        links.append(target)
    return links


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file."""
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", markdown), re.MULTILINE):
        text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
        anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def broken_links(path: Path) -> list[str]:
    problems = []
    for link in relative_links(path.read_text()):
        target, _, anchor = link.partition("#")
        resolved = (path.parent / target).resolve() if target else path
        if not resolved.exists():
            problems.append(f"{link}: {resolved} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in heading_anchors(resolved.read_text()):
            problems.append(f"{link}: no heading #{anchor} in {resolved.name}")
    return problems


def mermaid_blocks(markdown: str) -> list[str]:
    return [body for kind, body in FENCE.findall(markdown) if kind.strip() == "mermaid"]


def _models_in(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models_in(argument)]


def config_keys(model: type[BaseModel] = StackConfig, prefix: str = "") -> set[str]:
    """Every key path of the stack configuration, as written in Pulumi.<stack>.yaml: `clusterName`,
    `nodePool.limits.cpu`, `addons.karpenter.amiAlias`, …"""
    keys = set()
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        keys.add(key)
        for nested in _models_in(field.annotation):
            keys |= config_keys(nested, f"{key}.")
    return keys


TOP_LEVEL_KEYS = {key for key in config_keys() if "." not in key}


def config_keys_named(markdown: str) -> set[str]:
    """Keys a guide names: `eks-autoscaling:<key>` anywhere, and inline code such as `nodePool.limits`
    whose first part is a top-level key of the configuration."""
    named = set(PROJECT_KEY.findall(markdown))
    for span in INLINE_CODE.findall(FENCE.sub("", markdown)):
        span = span.strip()
        if DOTTED_KEY.match(span) and span.split(".")[0] in TOP_LEVEL_KEYS:
            named.add(span)
    return named


# --- the guides ------------------------------------------------------------------------------------


def test_the_guides_exist():
    names = {path.name for path in GUIDES}
    assert {
        "README.md", "architecture.md", "sizing.md", "teardown.md", "upgrades.md",
        "migrating-from-cluster-autoscaler.md", "costs.md", "sizing-input.md",
    } <= names  # fmt: skip


@pytest.mark.parametrize("path", GUIDES, ids=_ids(GUIDES))
def test_make_targets_named_exist(path):
    named = make_targets_named(path.read_text())
    missing = named - help_targets()
    assert not missing, f"{path.name} names make targets that `make help` does not list: {sorted(missing)}"


def test_the_guides_name_the_operating_targets():
    named = set().union(*(make_targets_named(path.read_text()) for path in GUIDES))
    assert {"up", "destroy", "kubeconfig", "load-test", "watch", "plan"} <= named


@pytest.mark.parametrize("path", GUIDES, ids=_ids(GUIDES))
def test_relative_links_resolve(path):
    assert broken_links(path) == []


@pytest.mark.parametrize("path", GUIDES, ids=_ids(GUIDES))
def test_mermaid_blocks_are_diagrams(path):
    for block in mermaid_blocks(path.read_text()):
        lines = [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("%%")]
        assert len(lines) >= 2, f"{path.name}: an empty Mermaid block"
        assert lines[0].split()[0] in MERMAID_TYPES, f"{path.name}: {lines[0]!r} is not a Mermaid diagram type"


def test_architecture_has_a_diagram_of_every_component():
    blocks = mermaid_blocks((PROJECT_DIR / "docs" / "architecture.md").read_text())
    block = next((block for block in blocks if "network.Network" in block), "")
    for component in ("network.Network", "cluster.Cluster", "karpenter.NodeInfrastructure",
                      "identities.ControllerIdentities", "addons.Addons", "karpenter.NodeClass", "workload.Workload",
                      "monitoring.Monitoring"):  # fmt: skip
        assert component in block, component


def test_architecture_has_a_diagram_of_the_layers():
    blocks = mermaid_blocks((PROJECT_DIR / "docs" / "architecture.md").read_text())
    block = next((block for block in blocks if "binpack/" in block), "")
    for layer in (
        "__main__.py",
        "components/",
        "stackconfig/",
        "stackobjects/",
        "stackmonitoring/",
        "stackplan/",
        "iam/",
        "commands/",
        "planning/",
        "karpenter/",
        "kube/",
        "binpack/",
    ):
        assert layer in block, layer


@pytest.mark.parametrize("path", GUIDES, ids=_ids(GUIDES))
def test_config_keys_named_exist(path):
    unknown = config_keys_named(path.read_text()) - config_keys()
    assert not unknown, f"{path.name} names configuration keys the model does not have: {sorted(unknown)}"


# --- the checks themselves catch mistakes ----------------------------------------------------------


def test_help_targets_are_the_documented_rules(tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text("up: install ## Create\n\thello\nhidden:\n\tno\n.PHONY: up\nlo-ad_t: ## x\n")
    assert help_targets([makefile]) == {"up", "lo-ad_t"}
    assert {"help", "up", "destroy", "kubeconfig", "load-test", "watch"} <= help_targets()


def test_make_target_extraction():
    text = (
        "Run `make up`, then `STACK=prod make -s preview`.\n\n```sh\nmake -C /x load-test DURATION=60\n"
        "cmake build\nmake kubeconfig && export KUBECONFIG=x\n```\nTo make sure, `make nothere`."
    )
    assert make_targets_named(text) == {"up", "preview", "load-test", "kubeconfig", "nothere"}
    assert "nothere" not in help_targets()


def test_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "b.md").write_text("# Title here\n\n## Second `part`\n")
    doc = tmp_path / "a.md"
    doc.write_text(
        "[ok](b.md) [anchor](b.md#second-part) [web](https://example.com) [self](#x) `[code](gone.md)`\n"
        "[gone](missing.md) [bad anchor](b.md#nope)\n"
    )
    assert broken_links(doc) == [
        f"missing.md: {tmp_path / 'missing.md'} does not exist",
        "b.md#nope: no heading #nope in b.md",
    ]


def test_config_key_walk_and_extraction():
    keys = config_keys()
    for key in ("clusterName", "nodePool.limits", "nodePool.limits.cpu", "addons.karpenter.amiAlias",
                "app.hpa.scaleDown.periodSeconds", "capacity.workloads", "cluster.secretsEncryption.kmsKeyArn"):  # fmt: skip
        assert key in keys, key
    text = "Set `nodePool.limitz` and `eks-autoscaling:clusterNam`; not `cluster.Cluster` nor `sizing.plan`."
    assert config_keys_named(text) - keys == {"nodePool.limitz", "clusterNam"}


# --- the quoted plan is the current one ------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_plan():
    from sizing.planning.planner import plan_capacity
    from stackplan.capacity import plan_input_for_stack

    return plan_capacity(plan_input_for_stack("dev", PROJECT_DIR))


def test_sizing_guide_shows_the_current_dev_report(dev_plan):
    """The dev example in docs/sizing.md is the full output of `python -m sizing plan --stack dev`."""
    from sizing.planning.report import render_report

    text = (PROJECT_DIR / "docs" / "sizing.md").read_text()
    section = text[text.index("### The dev stack") :]
    _, shown = FENCE.findall(section)[0]
    assert shown.strip() == render_report(dev_plan).strip()


def test_cost_guide_quotes_the_current_dev_plan(dev_plan):
    text = (PROJECT_DIR / "docs" / "costs.md").read_text()
    limits = dev_plan.node_pool_limits
    types = {node.instance_type for node in dev_plan.fleet.new_nodes}
    assert len(types) == 1, "the cost guide describes a fleet of one instance type"
    fleet = f"{len(dev_plan.fleet.new_nodes)} × {types.pop()}, {dev_plan.fleet.cost:.3f} USD/hour"
    assert fleet in text
    assert f'`cpu: "{limits["cpu"]}"`, `memory: {limits["memory"]}`' in text
    assert f"{dev_plan.fleet.cost * 730:.2f} USD/month" in text


def test_sizing_guide_quotes_the_current_prod_fleet_and_limits():
    """The trimmed prod example, solver included: the solver is bounded by work, not time, so its
    fleet and bound are the same on every machine and are quoted too."""
    from sizing.planning.planner import plan_capacity
    from stackplan.capacity import plan_input_for_stack

    plan = plan_capacity(plan_input_for_stack("prod", PROJECT_DIR))
    text = (PROJECT_DIR / "docs" / "sizing.md").read_text()
    section = text[text.index("### The production stack") : text.index("### In the stack outputs")]
    _, shown = FENCE.findall(section)[0]
    limits = plan.node_pool_limits
    assert f'  limits:\n    cpu: "{limits["cpu"]}"\n    memory: {limits["memory"]}' in shown
    assert f"{len(plan.fleet.new_nodes)} nodes (" in shown and f"{plan.fleet.cost:.3f} USD/hour" in shown
    assert f"({len(plan.instance_types)} types)" in section or f"{len(plan.instance_types)} types" in section
    costs = (PROJECT_DIR / "docs" / "costs.md").read_text()
    assert f"{len(plan.fleet.new_nodes)} nodes" in costs and f"{plan.fleet.cost:.3f} USD/hour" in costs
    assert f"limits of {limits['cpu']} cpu and {limits['memory']}" in costs
    assert f"{plan.optimal.node_count} nodes, {plan.optimal.cost:.3f} USD/hour" in shown
    assert f"{plan.optimal.node_count} nodes at\n  {plan.optimal.cost:.3f} USD/hour" in costs or (
        f"{plan.optimal.cost:.3f} USD/hour" in costs
    )
    assert f"lower bound of {plan.optimal.lower_bound_cost:.3f} USD/hour" in costs
    from sizing.planning.report import render_report

    report = render_report(plan)
    tail = report[report.index("Scenarios under the planned limits") :].strip()
    assert tail in shown, "the trimmed prod report in docs/sizing.md is stale from its scenarios on"
    current = plan.recommendation.current
    prose = text[text.index("- **The recommendation** fixes the blast radius") :]
    assert f'"now" ({current.node_count} nodes, {current.cost:.3f} USD/hour)' in prose


def test_the_limits_worked_example_matches_the_dev_plan(dev_plan):
    """docs/sizing.md and README.md work the dev stack's limits through; the figures are the plan's."""
    minimum, limits = dev_plan.limits.minimum, dev_plan.node_pool_limits
    assert (minimum.cpu, minimum.memory) == (4000, 15 * 1024)
    rollout = dev_plan.scenarios["rollout"].usage
    guide = (PROJECT_DIR / "docs" / "sizing.md").read_text()
    example = guide[guide.index("Worked example, the dev stack") : guide.index("6. **The optimum")]
    assert f"{rollout.cpu // 1000} cpu and\n   {rollout.memory}Mi" in example or f"{rollout.memory}Mi" in example
    assert f'`cpu: "{limits["cpu"]}"`' in example and f"`memory: {limits['memory']}`" in example
    assert "so 4 cores and 15Gi" in example and dev_plan.limits.binding == ("rollout", "rollout")
    readme = (PROJECT_DIR / "README.md").read_text()
    assert f'`cpu: "{limits["cpu"]}"`, `memory: {limits["memory"]}`' in readme and f"{rollout.memory}Mi" in readme


def test_the_dev_report_generator_finds_the_guide_current_and_replaces_only_the_block():
    from scripts import generate_sizing_docs

    assert generate_sizing_docs.main(["--check"]) == 0
    text = "intro\n### The dev stack\n\nsome words\n\n```\nold report\n```\n\nafter\n"
    assert generate_sizing_docs.with_report(text, "new report\n") == text.replace("old report", "new report")


def test_the_readme_picture_is_of_the_dev_stacks_current_html_report(tmp_path, monkeypatch):
    """The README shows a screenshot of the dev stack's page; the hash kept beside it is the page's
    as the planner renders it now, so a change to the page or the plan makes --check fail."""
    from scripts import generate_sizing_docs as docs

    readme = (PROJECT_DIR / "README.md").read_text()
    assert "](docs/images/capacity-report-dev.png)" in readme
    page = docs.dev_page()
    assert docs.picture_is_current(page)
    assert docs.PICTURE.read_bytes().startswith(b"\x89PNG")
    # A page that differs by one byte is not the one pictured.
    assert not docs.picture_is_current(page.replace("</body>", " </body>"))
    monkeypatch.setattr(docs, "PICTURE_SOURCE", tmp_path / "missing.sha256")
    assert not docs.picture_is_current(page)


def test_the_wide_pool_example_quotes_the_batches_and_limits_of_its_plan():
    """docs/sizing.md's objects example: limits, minimum, the first batch and the batch count are the plan's."""
    from sizing.kube.objects import read_objects
    from sizing.planning import planner
    from sizing.planning.objects import plan_input_from_objects
    from sizing.planning.resolution import resolve
    from sizing.planning.scenario_setup import scenario_setup
    from sizing.planning.scenarios import _simulate

    example = PROJECT_DIR / "docs" / "examples" / "cluster-objects.yaml"
    plan_input = plan_input_from_objects(read_objects([("example", example.read_text())]))
    plan = planner.plan_capacity(plan_input)
    guide = (PROJECT_DIR / "docs" / "sizing.md").read_text()
    section = guide[guide.index("The limits show why the batches matter") : guide.index("Adding a StatefulSet")]
    limits, minimum = plan.node_pool_limits, plan.limits.minimum
    assert f'`cpu: "{limits["cpu"]}"`, `memory: {limits["memory"]}`' in section
    assert f"{minimum.cpu // 1000} cpu and {minimum.memory // 1024}Gi" in section
    peak = plan.scenarios["peak"]
    assert f"{peak.batches}\nbatches in all" in section or f"{peak.batches} batches in all" in section
    # One batch under the planned limits: 3 web NodeClaims launch and 9 web pods wait.
    context = resolve(plan_input)
    setup = scenario_setup(plan_input, context, context.options)
    first = _simulate(setup, setup.peak_groups, plan.limits.for_simulation(), setup.running)
    web = [node for node in first.new_nodes if node.pods.get("shop/web")]
    assert len(web) == 3 and first.pending_count == 9
    assert "the first batch launches 3 `m5.large` and leaves 9 web\npods pending" in section
    # Without the retries the same fleet needs more than 900 cpu of limits.
    assert _simulate(setup, setup.peak_groups, {"cpu": 900_000}, setup.running).pending_count > 0


def test_the_pods_that_never_schedule_example_is_the_plan_of_its_file():
    """docs/sizing.md's example of the rule: every quoted line is in the report of the example file,
    and the JSON figures the guide names are the plan's."""
    from sizing.kube.objects import read_objects
    from sizing.planning.objects import plan_input_from_objects
    from sizing.planning.planner import plan_capacity
    from sizing.planning.report import plan_data, render_report

    example = PROJECT_DIR / "docs" / "examples" / "pods-that-never-schedule.yaml"
    plan = plan_capacity(plan_input_from_objects(read_objects([("example", example.read_text())])))
    report = render_report(plan)
    guide = (PROJECT_DIR / "docs" / "sizing.md").read_text()
    section = guide[guide.index("Worked example: pods that never schedule") : guide.index("## VPC addresses")]
    _, shown = FENCE.findall(section)[0]
    for line in shown.strip().splitlines():
        assert line in report.splitlines(), line
    data = plan_data(plan)
    assert data["scenarios"]["peak"]["podsPending"] == 2 == data["scenarios"]["peak"]["withoutLimits"]["podsPending"]
    assert [change["kind"] for change in data["limits"]["below"]["cpu"]["changes"]] == ["pending"]
    assert "scenarios.<name>.podsPending` is 2 with and without limits" in section
