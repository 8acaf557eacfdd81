"""The example programs and the README's snippet name only inputs and outputs of the schema, with
values of the right types."""

import ast
import json
import re

import pytest
import yaml

from offline.program import PROJECT_DIR
from tests.package.schema_checks import COMPONENT, UNKNOWN, check_inputs, component
from tests.package.typescript_literal import component_arguments

EXAMPLES = PROJECT_DIR / "examples"
OUTPUT_NAMES = set(component()["properties"])
TYPE_TOKENS = (COMPONENT, "eks-autoscaling:EksAutoscaling")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def test_yaml_example_uses_the_schema():
    program = yaml.safe_load((EXAMPLES / "yaml" / "Pulumi.yaml").read_text())
    resources = {name: r for name, r in program["resources"].items() if r["type"] in TYPE_TOKENS}
    assert list(resources) == ["autoscaling"]
    assert check_inputs(resources["autoscaling"]["properties"]) == []
    used = set(re.findall(r"\$\{autoscaling\.(\w+)\}", json.dumps(program["outputs"])))
    assert used and used <= OUTPUT_NAMES
    assert program["packages"]["eks-autoscaling"] == "../../provider"
    assert (EXAMPLES / "yaml" / program["packages"]["eks-autoscaling"] / "PulumiPlugin.yaml").exists()


def test_yaml_example_is_the_dev_stack():
    dev = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())["config"]
    program = yaml.safe_load((EXAMPLES / "yaml" / "Pulumi.yaml").read_text())
    properties = program["resources"]["autoscaling"]["properties"]
    assert {f"eks-autoscaling:{key}": value for key, value in properties.items()} == {
        key: value for key, value in dev.items() if key.startswith("eks-autoscaling:")
    }
    assert program["config"]["aws:region"] == dev["aws:region"]


def _typescript_calls(source: str):
    calls = component_arguments(source, "EksAutoscaling")
    assert calls, "no `new ....EksAutoscaling(name, {...})` found"
    return calls


def test_typescript_example_uses_the_schema():
    source = (EXAMPLES / "typescript" / "index.ts").read_text()
    ((name, inputs),) = _typescript_calls(source)
    assert name == "autoscaling" and check_inputs(inputs) == []
    used = set(re.findall(r"\bautoscaling\.(\w+)", source))
    assert used and used <= OUTPUT_NAMES
    package = json.loads((EXAMPLES / "typescript" / "package.json").read_text())
    assert "@pulumi/eks-autoscaling" in package["dependencies"] and '"@pulumi/eks-autoscaling"' in source


def test_readme_snippet_uses_the_schema():
    readme = (PROJECT_DIR / "README.md").read_text()
    (block,) = re.findall(r"```typescript\n(.*?)```", readme, flags=re.DOTALL)
    assert len(block.strip().splitlines()) <= 16
    ((_, inputs),) = _typescript_calls(block)
    assert check_inputs(inputs) == []
    assert inputs["vpcId"] is UNKNOWN and inputs["deployTestApp"] is False


def test_the_checks_catch_a_wrong_name_or_type():
    source = 'new m.EksAutoscaling("a", { clusterNam: "x", nodeGroup: { minSize: "2" }, vpcId: v.id, tags: { a: 1 } })'
    ((_, inputs),) = component_arguments(source, "EksAutoscaling")
    assert inputs["vpcId"] is UNKNOWN
    problems = check_inputs(inputs)
    assert len(problems) == 3
    assert problems[0].startswith("clusterNam: not an input")
    assert problems[1] == "nodeGroup.minSize: expected integer, got '2'"
    assert problems[2] == "tags.a: expected string, got 1"


def _python_inputs(path):
    """Keyword inputs of the EksAutoscaling call, camelCased; values that are not literals are UNKNOWN."""
    tree = ast.parse(path.read_text())
    calls = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "EksAutoscaling"
    ]
    assert len(calls) == 1
    inputs = {}
    for keyword in calls[0].keywords:
        inputs[_camel(keyword.arg)] = _literal(keyword.value)
    return inputs


def _literal(node):
    if isinstance(node, ast.Dict):
        # Dict keys of the generated SDK's input types are Python names; of free-form maps, as written.
        return {key.value: _literal(value) for key, value in zip(node.keys, node.values)}
    if isinstance(node, ast.List):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    return UNKNOWN



def test_python_example_uses_the_schema():
    inputs = _python_inputs(EXAMPLES / "python-existing-vpc" / "__main__.py")
    # Nested input types take Python names in the Python SDK; the schema's are camelCase.
    free_form = {"tags", "workloads", "labels", "priceOverrides"}

    def camel(value, key=None):
        if isinstance(value, dict) and key not in free_form:
            return {_camel(k): camel(v, _camel(k)) for k, v in value.items()}
        if isinstance(value, list) and key != "workloads":
            return [camel(item) for item in value]
        return value

    assert check_inputs({key: camel(value, key) for key, value in inputs.items()}) == []
    assert {"vpcId", "publicSubnetIds", "privateSubnetIds"} <= set(inputs) and inputs["deployTestApp"] is False
    source = (EXAMPLES / "python-existing-vpc" / "__main__.py").read_text()
    used = {_camel(name) for name in re.findall(r"\bautoscaling\.(\w+)", source)}
    assert used and used <= OUTPUT_NAMES


@pytest.mark.parametrize("example", ["yaml", "typescript", "python-existing-vpc"])
def test_examples_point_at_the_plugin(example):
    project = yaml.safe_load((EXAMPLES / example / "Pulumi.yaml").read_text())
    assert (EXAMPLES / example / project["packages"]["eks-autoscaling"] / "__main__.py").exists()
