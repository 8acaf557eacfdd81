"""Every code block of the guides (README.md, docs/**/*.md) that can run, runs, and the figures
it quotes are the code's.

- ```python blocks are executed, top to bottom, each in a fresh namespace. An expression line that
  ends in a comment holding a Python literal (`plan.pods_with_surge  # 20`) quotes its value: the test
  checks that the expression gives it. Regenerating a figure is editing that comment.
- ```sh lines that run `python -m sizing ...` (with or without `.venv/bin/`) are run offline with
  the command line's own entry point and must succeed and print something. A file they name that
  the project does not have is a placeholder: `PLACEHOLDERS` says which sample stands for it (the
  description of docs/sizing-input.md for `workloads.yaml`, ...). A `kubectl ... |` feeding one reads
  docs/examples/cluster-objects.yaml instead. Other `python -m` commands are run by their own tests
  (tests/docs/test_readme_commands.py, tests/offline, tests/security).
- ```yaml blocks are read with the project's YAML reader, then by what they are: a stack file
  (`config:`) through the stack's checks, Kubernetes objects (`kind`) through the planner's object
  reader, a workload description through its model. ```json blocks must parse.
- A block that cannot run says why on the line before it: `<!-- not run: <reason> -->`.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from sizing import cli
from sizing.kube.objects import read_objects
from sizing.kube.safe_yaml import load_documents
from sizing.planning.description import validate_description
from stackconfig.aws_provider import parse_aws_settings
from stackconfig.load import parse_stack_config

PROJECT_DIR = Path(__file__).resolve().parents[2]
GUIDES = sorted([PROJECT_DIR / "README.md", *(PROJECT_DIR / "docs").rglob("*.md")])
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>[^>]*?)\s*-->\s*\n\s*\Z")
SIZING_COMMAND = re.compile(r"(?:^|\|\s*)(?:\S*/)?python3? -m sizing (?P<arguments>.*)$")
# Blocks of these languages can run; every other language (text output, Mermaid, TypeScript) is shown only.
RUNNABLE = {"python", "sh", "bash", "shell", "yaml", "json"}
DESCRIPTION_GUIDE = PROJECT_DIR / "docs" / "sizing-input.md"
SAMPLE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: test-app}
      containers: [{name: web, resources: {requests: {cpu: 250m, memory: 256Mi}}}]
"""


@dataclass(frozen=True)
class Block:
    guide: Path
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def id(self) -> str:
        return f"{self.guide.relative_to(PROJECT_DIR)}:{self.line}"


def blocks(guides: list[Path] = GUIDES) -> list[Block]:
    found = []
    for guide in guides:
        markdown = guide.read_text()
        for match in FENCE.finditer(markdown):
            marker = NOT_RUN.search(markdown[: match.start()][-300:])
            found.append(
                Block(
                    guide,
                    markdown.count("\n", 0, match.start()) + 1,
                    match.group(1).strip(),
                    match.group(2),
                    marker.group("reason") if marker else None,
                )
            )
    return found


BLOCKS = [block for block in blocks() if block.language in RUNNABLE]
RUN = [block for block in BLOCKS if block.not_run is None]


def _of(language: str | tuple[str, ...]) -> list[Block]:
    languages = (language,) if isinstance(language, str) else language
    return [block for block in RUN if block.language in languages]


def _ids(items: list[Block]) -> list[str]:
    return [block.id for block in items]


# --- python -----------------------------------------------------------------------------------------


def quoted_values(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every expression statement whose line ends in a comment holding a literal."""
    tree = ast.parse(source)
    lines = source.splitlines()
    quoted = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr) or statement.end_lineno is None:
            continue
        line = lines[statement.end_lineno - 1]
        code_end = statement.end_col_offset or 0
        comment = line[code_end:].strip()
        if not comment.startswith("#"):
            continue
        literal = comment[1:].strip()
        try:
            ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        quoted.append((statement.end_lineno, literal))
    return quoted


def run_python(source: str) -> list[tuple[str, object, object]]:
    """Execute `source`; (expression, quoted, actual) for every quoted value that differs."""
    tree = ast.parse(source)
    quoted = dict(quoted_values(source))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    wrong = []
    for statement in tree.body:
        if isinstance(statement, ast.Expr) and statement.end_lineno in quoted:
            value = eval(compile(ast.Expression(statement.value), "<guide>", "eval"), namespace)  # noqa: S307
            expected = ast.literal_eval(quoted[statement.end_lineno])
            if value != expected:
                wrong.append((ast.unparse(statement.value), expected, value))
        else:
            exec(compile(ast.Module([statement], type_ignores=[]), "<guide>", "exec"), namespace)  # noqa: S102
    return wrong


@pytest.mark.parametrize("block", _of("python"), ids=_ids(_of("python")))
def test_python_blocks_run_and_their_quoted_values_are_the_codes(block, monkeypatch, capsys):
    monkeypatch.chdir(PROJECT_DIR)
    assert run_python(block.text) == []


def test_the_python_example_quotes_values():
    (example,) = [block for block in _of("python") if block.guide == DESCRIPTION_GUIDE]
    assert len(quoted_values(example.text)) >= 3


# --- sh -----------------------------------------------------------------------------------------------


def sizing_commands(block: Block) -> list[tuple[list[str], bool]]:
    """(arguments after `python -m sizing`, whether stdin comes from a kubectl pipe) of a shell block."""
    commands = []
    for line in block.text.splitlines():
        code = line.split(" #", 1)[0].strip()
        match = SIZING_COMMAND.search(code)
        if match:
            piped = "|" in code[: match.start("arguments")]
            commands.append((shlex.split(match.group("arguments")), piped))
    return commands


def _description_example() -> str:
    (example,) = [block for block in _of("yaml") if block.guide == DESCRIPTION_GUIDE]
    return example.text


# What a placeholder file of a command stands for: (path relative to the working folder, its text).
# Objects of a region the bundled catalog has no prices for: an m5 NodePool of two sizes (the
# prices the guide passes with --price) and the sample Deployment on it.
SAMPLE_OBJECTS = (
    """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: test-app}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
"""
    + SAMPLE_DEPLOYMENT
)

PLACEHOLDERS = {
    "objects.yaml": lambda: SAMPLE_OBJECTS,
    "workloads.yaml": lambda: _description_example(),
    "app.yaml": lambda: SAMPLE_DEPLOYMENT,
    "deploy/*.yaml": lambda: SAMPLE_DEPLOYMENT.replace("name: web,", "name: worker,"),
    "nodepool.yaml": lambda: (PROJECT_DIR / "manifests" / "karpenter" / "nodepool.yaml").read_text(),
}
PIPED_STDIN = PROJECT_DIR / "docs" / "examples" / "cluster-objects.yaml"
COMMANDS = sorted(
    {(tuple(arguments), piped) for block in _of(("sh", "bash", "shell")) for arguments, piped in sizing_commands(block)}
)


def _working_folder(tmp_path: Path, arguments: tuple[str, ...]) -> list[str]:
    """The arguments with project files and placeholders resolved, in a folder holding both."""
    resolved = []
    for argument in arguments:
        if argument in PLACEHOLDERS:
            target = tmp_path / argument.replace("*", "sample")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(PLACEHOLDERS[argument]())
            resolved.append(str(target))
        elif not argument.startswith("-") and (PROJECT_DIR / argument).exists() and "/" in argument:
            resolved.append(str(PROJECT_DIR / argument))
        else:
            resolved.append(argument)
    for name in ("app.yaml",):
        (tmp_path / name).write_text(PLACEHOLDERS[name]())
    for stack in PROJECT_DIR.glob("Pulumi*.yaml"):
        shutil.copy(stack, tmp_path / stack.name)
    return resolved


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(arguments) for arguments, _ in COMMANDS])
def test_sizing_commands_of_the_guides_run(command, tmp_path, monkeypatch, capsys):
    arguments, piped = command
    resolved = _working_folder(tmp_path, arguments)
    monkeypatch.chdir(tmp_path)
    if piped:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PIPED_STDIN.read_bytes())))
    status = cli.main(resolved)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.strip()


def test_the_guides_show_sizing_commands_and_every_file_they_name_is_known():
    assert len(COMMANDS) >= 5
    for arguments, _ in COMMANDS:
        for argument in arguments:
            if argument.endswith((".yaml", ".yml", ".json")):
                assert argument in PLACEHOLDERS or (PROJECT_DIR / argument).is_file(), argument


# --- yaml and json ------------------------------------------------------------------------------------


def check_yaml(block: Block) -> str:
    """Read a YAML block as what it is; return what it was read as."""
    documents = [document for document in load_documents(block.text, block.id) if document is not None]
    assert documents, f"{block.id} holds no YAML"
    first = documents[0]
    if isinstance(first, dict) and "config" in first:
        config = {"aws:region": "us-east-1", **first["config"]}
        parse_stack_config(config)
        parse_aws_settings(config)
        return "stack"
    if all(isinstance(document, dict) and "kind" in document for document in documents):
        read_objects([(block.id, block.text)])
        return "objects"
    validate_description(first)
    return "description"


@pytest.mark.parametrize("block", _of("yaml"), ids=_ids(_of("yaml")))
def test_yaml_blocks_are_valid_stack_files_objects_or_descriptions(block):
    check_yaml(block)


@pytest.mark.parametrize("block", _of("json"), ids=_ids(_of("json")))
def test_json_blocks_parse(block):
    json.loads(block.text)


def test_blocks_not_run_say_why():
    for block in BLOCKS:
        if block.not_run is not None:
            assert len(block.not_run) > 10, f"{block.id}: say why the block is not run"


# --- the mechanism itself -----------------------------------------------------------------------------


def test_a_wrong_quoted_value_is_found():
    source = "x = [1, 2]\nlen(x)  # 2\nsum(x)  # 4\nprint('a')  # the comment of a call\n"
    assert quoted_values(source) == [(2, "2"), (3, "4")]
    assert run_python(source) == [("sum(x)", 4, 3)]


def test_blocks_and_their_markers_are_found(tmp_path):
    guide = tmp_path / "guide.md"
    guide.write_text(
        "Text\n\n```python\nprint(1)\n```\n\n<!-- not run: needs a Pulumi engine to register -->\n"
        "```python\nimport pulumi\n```\n"
    )
    first, second = blocks([guide])
    assert (first.language, first.not_run, first.line) == ("python", None, 3)
    assert second.not_run == "needs a Pulumi engine to register"


def test_shell_lines_give_their_sizing_commands():
    block = Block(
        PROJECT_DIR / "x.md",
        1,
        "sh",
        ".venv/bin/python -m sizing plan a.yaml --json   # a comment\n"
        "kubectl get nodepools -o yaml | python -m sizing plan - --zones us-east-1a\nmake up\n",
        None,
    )
    assert sizing_commands(block) == [
        (["plan", "a.yaml", "--json"], False),
        (["plan", "-", "--zones", "us-east-1a"], True),
    ]


def test_yaml_blocks_are_told_apart():
    stack = Block(PROJECT_DIR / "x.md", 1, "yaml", "config:\n  eks-autoscaling:clusterName: a\n", None)
    description = Block(PROJECT_DIR / "x.md", 1, "yaml", "workloads: []\n", None)
    assert (check_yaml(stack), check_yaml(description)) == ("stack", "description")
    bad = Block(PROJECT_DIR / "x.md", 1, "yaml", "config:\n  eks-autoscaling:clusterName: a b\n", None)
    with pytest.raises(ValueError, match="clusterName"):
        check_yaml(bad)
