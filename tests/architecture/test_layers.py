"""Dependencies point one way: a test fails on any import that points back up or closes a cycle."""

from __future__ import annotations

import ast

import pytest

from tests.architecture.imports import REPO_ROOT, cycles, module_name, project_imports, project_modules

# sizing's own layers, bottom up. A module may import its own layer and the layers below it.
SIZING_LAYERS = {
    "sizing.errors": 0,
    "sizing.cores": 0,  # how many cores a process may use
    "sizing.interrupts": 0,  # a command stopped by SIGINT or SIGTERM: undo, one line, status 130/143
    "sizing.binpack": 1,  # the generic vector bin-packing solver: knows nothing of Kubernetes
    "sizing.kube": 2,  # Kubernetes quantities, resources and objects
    "sizing.karpenter": 3,  # Karpenter's model: catalog, allocatable, requirements, simulation, limits
    "sizing.planning": 4,  # the planner, fleet, recommendation and report
    "sizing.commands": 5,  # the command line
    "sizing.cli": 5,
    "sizing.__main__": 5,
    "sizing": 5,
}

# Which top-level packages each package may import (besides itself). The stack's packages, bottom
# up: its configuration; the Kubernetes objects and the monitoring content built from it; its
# capacity plan and whole-stack checks; the components above all.
STACK_CONFIG_PACKAGES = ("stackconfig", "stackplan")
ALLOWED_PACKAGES = {
    "__main__": {"components", "stackconfig", "stackplan", "sizing", "iam"},
    "components": {"stackconfig", "stackobjects", "stackmonitoring", "stackplan", "iam", "sizing"},
    "stackplan": {"stackconfig", "stackobjects", "stackmonitoring", "iam", "sizing"},
    "stackobjects": {"stackconfig", "iam", "sizing"},
    "stackmonitoring": {"stackconfig", "sizing"},
    "stackconfig": {"iam", "sizing"},
    "iam": set(),
    "sizing": set(),
    "offline": {"stackconfig", "stackplan", "sizing", "components", "iam"},
    "security": {"iam", "offline", "policies", "stackconfig", "sizing"},
    "policies": {"security"},
    "benchmarks": {"sizing", "stackconfig", "stackplan", "offline"},
    "scripts": {"sizing", "stackconfig", "stackplan", "components"},
    "provider": {"components"},
}
# The `plan --stack` command reads a stack file through the configuration and the stack's plan.
SIZING_CONFIG_READERS = {"sizing.commands.plan"}
STACK_PACKAGES = ("stackconfig", "stackobjects", "stackmonitoring", "stackplan", "components")
# Arrows that must never be, whatever ALLOWED_PACKAGES says: the configuration knows nothing built
# from it, what is built from it knows nothing of the plan or the components, and sizing knows
# nothing of the stack (but for SIZING_CONFIG_READERS, which may read STACK_CONFIG_PACKAGES).
FORBIDDEN_PACKAGES = {
    "stackconfig": {"stackobjects", "stackmonitoring", "stackplan", "components"},
    "stackobjects": {"stackplan", "components"},
    "stackmonitoring": {"stackplan", "components"},
    "sizing": set(STACK_PACKAGES),
}


def forbidden_imports(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The imports of `graph` that FORBIDDEN_PACKAGES forbids, one line each."""
    found = []
    for source, targets in graph.items():
        package = source.split(".")[0]
        for target, line in targets:
            target_package = target.split(".")[0]
            if source in SIZING_CONFIG_READERS and target_package in STACK_CONFIG_PACKAGES:
                continue
            if target_package in FORBIDDEN_PACKAGES.get(package, ()):
                found.append(f"{source} imports {target} on line {line}")
    return found


def _graph():
    modules = project_modules()
    modules["__main__"] = REPO_ROOT / "__main__.py"
    return modules, project_imports(modules)


def _sizing_layer(module: str) -> int:
    for prefix in sorted(SIZING_LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return SIZING_LAYERS[prefix]
    raise AssertionError(f"{module} is in no sizing layer; add its package to SIZING_LAYERS")


def test_the_project_has_no_import_cycle():
    _, graph = _graph()
    assert cycles(graph) == []


def test_sizing_layers_import_only_downwards():
    _, graph = _graph()
    upward = [
        f"{source} (layer {_sizing_layer(source)}) imports {target} (layer {_sizing_layer(target)}) on line {line}"
        for source, targets in graph.items()
        if source.startswith("sizing")
        for target, line in targets
        if target.startswith("sizing") and _sizing_layer(target) > _sizing_layer(source)
    ]
    assert upward == []


def test_packages_import_only_what_their_layer_allows():
    _, graph = _graph()
    wrong = []
    for source, targets in graph.items():
        package = source.split(".")[0]
        for target, line in targets:
            target_package = target.split(".")[0]
            if target_package == package:
                continue
            if source in SIZING_CONFIG_READERS and target_package in STACK_CONFIG_PACKAGES:
                continue
            if target_package not in ALLOWED_PACKAGES[package]:
                wrong.append(f"{source} imports {target} on line {line}")
    assert wrong == []


def test_no_package_imports_what_must_never_be_imported():
    _, graph = _graph()
    assert forbidden_imports(graph) == []


def test_no_allowed_arrow_is_a_forbidden_one():
    assert {
        (package, target)
        for package, allowed in ALLOWED_PACKAGES.items()
        for target in allowed & FORBIDDEN_PACKAGES.get(package, set())
    } == set()


@pytest.mark.parametrize(
    "source, target",
    [
        (f"{package}.module", f"{target}.module")
        for package, targets in sorted(FORBIDDEN_PACKAGES.items())
        for target in sorted(targets)
    ]
    + [("sizing.commands.plan", "stackobjects.planned"), ("sizing.commands.plan", "components.workload")],
)
def test_a_forbidden_arrow_is_found(source, target):
    # Beside an arrow every package may draw, which is not reported.
    graph = {source: [(target, 7), ("sizing.kube.resources", 8)]}
    assert forbidden_imports(graph) == [f"{source} imports {target} on line 7"]


def test_only_the_stack_reader_of_sizing_may_read_the_stack_configuration_and_plan():
    graph = {
        "sizing.commands.plan": [("stackconfig.errors", 1), ("stackplan.capacity", 2)],
        "sizing.commands.other": [("stackconfig.errors", 3)],
        "sizing.planning.planner": [("stackplan.capacity", 4)],
    }
    assert forbidden_imports(graph) == [
        "sizing.commands.other imports stackconfig.errors on line 3",
        "sizing.planning.planner imports stackplan.capacity on line 4",
    ]


@pytest.mark.parametrize("forbidden", ["pulumi", "pulumi_aws", "pulumi_kubernetes", "pulumi_eks", "pulumi_awsx"])
def test_sizing_never_imports_pulumi(forbidden):
    modules, _ = _graph()
    offenders = []
    for name, path in modules.items():
        if not name.startswith("sizing"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            offenders += [f"{name}:{node.lineno}" for imported in names if imported.split(".")[0] == forbidden]
    assert offenders == []


def test_the_import_graph_sees_known_edges():
    # Guards against a reader that finds nothing and so passes every rule above.
    _, graph = _graph()
    assert any(t == "sizing.binpack.instance" for t, _ in graph["sizing.binpack.solver"])
    assert any(t.startswith("sizing.karpenter") for t, _ in graph["sizing.planning.planner"])
    assert any(t.startswith("stackconfig") for t, _ in graph["__main__"])
    assert any(t.startswith("stackconfig") for t, _ in graph["stackobjects.karpenter"])
    assert any(t.startswith("stackobjects") for t, _ in graph["stackplan.capacity"])
    assert any(t.startswith("stackmonitoring") for t, _ in graph["components.eks_autoscaling"])


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)], "d": [("a", 1)]}
    assert cycles(graph) == [["a", "b", "c"]]


def test_module_names_follow_the_package_layout():
    assert module_name(REPO_ROOT / "sizing" / "binpack" / "__init__.py") == "sizing.binpack"
    assert module_name(REPO_ROOT / "sizing" / "binpack" / "solver.py") == "sizing.binpack.solver"
