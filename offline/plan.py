"""`make plan`: the stack's resources, Kubernetes objects, IAM documents and dependency graph
written as files for review, from an offline evaluation of the program."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Optional

import yaml

from offline.recording import Recording, Registered
from offline.wire import ResourceRef, Unknown, reveal

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
ROLE = "aws:iam/role:Role"
IDENTITY_POLICIES = {"aws:iam/policy:Policy": "policy", "aws:iam/rolePolicy:RolePolicy": "policy"}
RESOURCE_POLICIES = {"aws:sqs/queuePolicy:QueuePolicy": "policy"}


def write_plan(
    recording: Recording,
    directory: Path,
    capacity_report: Optional[Callable[[], str]] = None,
) -> list[Path]:
    """Write the plan of one stack into `directory` (emptied first); return the files written.

    Values only a deployment can know (ids, ARNs, the account, hostnames) appear as
    placeholders such as `<arn of identities-karpenter-role>`, never as made-up values.
    """
    show = Presenter(recording.invented)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    written = [
        _write(directory / "resources.txt", resource_tree(recording)),
        *write_manifests(recording, directory / "manifests", show),
        *write_iam(recording, directory / "iam", show),
        _write(directory / "graph.dot", dependency_graph(recording)),
        _write(directory / "outputs.json", json.dumps(show(recording.outputs), indent=2, sort_keys=True) + "\n"),
    ]
    svg = _render_svg(directory / "graph.dot")
    if svg:
        written.append(svg)
    if capacity_report is not None:
        written.append(_write(directory / "capacity.txt", capacity_report()))
    return written


class Presenter:
    """Turns recorded values into what a plan shows: `plain`, with every value the mocks
    invented replaced by its placeholder."""

    def __init__(self, invented: dict[str, str]):
        self._placeholders = sorted(invented.items(), key=lambda item: -len(item[0]))

    def __call__(self, value: Any) -> Any:
        value = plain(value)
        if isinstance(value, str):
            for invented, placeholder in self._placeholders:
                if invented in value:
                    value = value.replace(invented, placeholder)
            return value
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {self(key): self(item) for key, item in value.items()}
        return value


def plain(value: Any) -> Any:
    """JSON- and YAML-ready: secrets revealed (the plan is for review), unknowns as `<unknown>`."""
    value = reveal(value)
    if isinstance(value, Unknown):
        return "<unknown>"
    if isinstance(value, ResourceRef):
        return {"resource": value.urn}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def resource_tree(recording: Recording) -> str:
    """One line per resource, indented under its parent, as `pulumi preview` lists them."""
    children: dict[Optional[str], list[Registered]] = {}
    for resource in recording.resources:
        children.setdefault(resource.parent if resource.parent in _urns(recording) else None, []).append(resource)
    lines = ["TYPE  NAME"]

    def walk(parent: Optional[str], depth: int) -> None:
        for resource in sorted(children.get(parent, []), key=lambda r: (r.type, r.name)):
            lines.append(f"{'    ' * depth}{resource.type}  {resource.name}")
            walk(resource.urn, depth + 1)

    walk(None, 0)
    return "\n".join(lines) + f"\n\n{len(recording.resources)} resources\n"


def kubernetes_objects(recording: Recording, show: Callable[[Any], Any] = plain) -> list[tuple[Registered, dict]]:
    """Every Kubernetes object the program creates, as the document it sends."""
    objects = []
    for resource in recording.resources:
        if not resource.type.startswith("kubernetes:") or resource.type == HELM_RELEASE:
            continue
        if resource.type.startswith("pulumi:providers:") or not resource.custom:
            continue
        document = show({key: value for key, value in resource.inputs.items() if key != "__defaults"})
        if "kind" in document:
            objects.append((resource, document))
    return objects


def write_manifests(recording: Recording, directory: Path, show: Callable[[Any], Any] = plain) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for resource, document in kubernetes_objects(recording, show):
        namespace = document.get("metadata", {}).get("namespace") or "cluster"
        name = document.get("metadata", {}).get("name") or resource.name
        path = directory / f"{_slug(namespace)}--{_slug(document['kind'])}--{_slug(name)}.yaml"
        written.append(_write(path, yaml.safe_dump(document, sort_keys=False)))
    helm = directory / "helm"
    for release in recording.of_type(HELM_RELEASE):
        summary = {
            "release": release.input("name", release.name),
            "namespace": release.input("namespace", None),
            "chart": release.input("chart"),
            "version": release.input("version", None),
            "repository": release.input("repositoryOpts.repo", None),
            "values": show(release.input("values", {})),
        }
        helm.mkdir(exist_ok=True)
        written.append(_write(helm / f"{_slug(summary['release'])}.yaml", yaml.safe_dump(summary, sort_keys=False)))
    return written


def iam_documents(recording: Recording, show: Callable[[Any], Any] = plain) -> dict[str, dict]:
    """Relative path -> document: trust policies (roles/), identity policies (policies/) and
    resource policies (resource-policies/)."""
    documents = {}
    for role in recording.of_type(ROLE):
        documents[f"roles/{role.name}.trust.json"] = _json_document(role.input("assumeRolePolicy"), show)
    for type_, key in IDENTITY_POLICIES.items():
        for policy in recording.of_type(type_):
            documents[f"policies/{policy.name}.json"] = _json_document(policy.input(key), show)
    for type_, key in RESOURCE_POLICIES.items():
        for policy in recording.of_type(type_):
            documents[f"resource-policies/{policy.name}.json"] = _json_document(policy.input(key), show)
    return documents


def write_iam(recording: Recording, directory: Path, show: Callable[[Any], Any] = plain) -> list[Path]:
    written = []
    for relative, document in sorted(iam_documents(recording, show).items()):
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(_write(path, json.dumps(document, indent=2) + "\n"))
    return written


def dependency_graph(recording: Recording) -> str:
    """Graphviz: an edge A -> B means A is created after B and deleted before it. Each node is
    labelled with its step in a valid `pulumi destroy` order."""
    step = {resource.urn: index + 1 for index, resource in enumerate(recording.deletion_order())}
    lines = [
        "digraph plan {",
        '  label="A -> B: A is created after B and deleted before it; [n] = step in the teardown order";',
        "  rankdir=LR;",
        '  node [shape=box, fontsize=10, fontname="Helvetica"];',
    ]
    for resource in recording.resources:
        label = f"[{step[resource.urn]}] {resource.name}\\n{resource.type}"
        lines.append(f'  "{resource.urn}" [label="{label}"];')
    urns = _urns(recording)
    for resource in recording.resources:
        seen = set()
        for kind, target in resource.edges():
            if target in urns and (kind, target) not in seen:
                seen.add((kind, target))
                style = "dashed" if kind == "parent" else ("dotted" if kind == "provider" else "solid")
                lines.append(f'  "{resource.urn}" -> "{target}" [style={style}, tooltip="{kind}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_svg(dot_file: Path) -> Optional[Path]:
    dot = shutil.which("dot")
    if dot is None:
        return None
    svg = dot_file.with_suffix(".svg")
    subprocess.run([dot, "-Tsvg", str(dot_file), "-o", str(svg)], check=True, timeout=120)
    return svg


def _json_document(value: Any, show: Callable[[Any], Any]) -> Any:
    value = plain(value)
    document = json.loads(value) if isinstance(value, str) and value != "<unknown>" else value
    return show(document)


def _urns(recording: Recording) -> set[str]:
    return {resource.urn for resource in recording.resources}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-").lower() or "unnamed"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
