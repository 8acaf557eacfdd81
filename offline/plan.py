"""`make plan`: the stack's resources with their inputs, Kubernetes objects, IAM documents and
dependency graph written as files for review, from an offline evaluation of the program.

A plan is written to be diffed: every file is in a stable order (resources by type and name,
keys sorted, manifests in the usual apiVersion/kind/metadata/spec order), floats carry no binary
noise, and references name the resource by type and name rather than by the stack's URN, so two
stacks or two commits compare with `diff -r` (`make plan-diff`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from offline.recording import Recording, Registered
from offline.wire import ResourceRef, Secret, Unknown, reveal
from sizing.interrupts import process_alive, undo_on_stop

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
ROLE = "aws:iam/role:Role"
IDENTITY_POLICIES = {"aws:iam/policy:Policy": "policy", "aws:iam/rolePolicy:RolePolicy": "policy"}
RESOURCE_POLICIES = {"aws:sqs/queuePolicy:QueuePolicy": "policy"}
# The file that marks a folder as a plan's: only such a folder is ever replaced.
MARKER = ".eks-autoscaling-plan"
# What a plan writes at its top level. A folder holding only these, with the plan's resources.txt,
# is a plan written before plans carried the marker, and may be replaced too; a user's folder that
# merely holds a `manifests/` or an `outputs.json` of its own is not.
PLAN_ENTRIES = frozenset(
    {
        MARKER,
        "resources.txt",
        "resources",
        "manifests",
        "iam",
        "graph.dot",
        "graph.svg",
        "outputs.json",
        "capacity.txt",
        "capacity.html",
        "warnings.txt",
    }
)
RESOURCE_TREE_HEADER = "TYPE  NAME"
SECRET = "[secret]"
UNKNOWN = "<unknown until apply>"
MANIFEST_KEY_ORDER = ("apiVersion", "kind", "metadata", "spec")
# Floats are shown with this many significant digits: 0.1 + 0.2 is written 0.3.
FLOAT_DIGITS = 6
# Beside the output folder, while a plan is written: `.<name>.new-<pid>-*` (the new plan),
# `.<name>.old-<pid>-*` (the previous one, during the swap), `.<name>.check-<pid>-*` (a probe).
SCRATCH_KINDS = ("new", "old", "check")


class PlanDirectoryError(Exception):
    """The output folder holds something other than a previous plan."""


def write_plan(
    recording: Recording,
    directory: Path,
    capacity_report: Callable[[], str] | None = None,
    warnings: Iterable[str] = (),
    capacity_html: Callable[[], str] | None = None,
) -> list[Path]:
    """Write the plan of one stack into `directory`; return the files written (at their final place).
    `capacity_report` gives capacity.txt, `capacity_html` capacity.html (the same plan as a page).

    The plan is written to a fresh sibling folder, then swapped in. A `directory` that exists, is
    not empty and holds no marker file is refused (PlanDirectoryError) before anything is written:
    only a previous plan is ever replaced. A `directory` that is a symbolic link is written
    through: the folder it points to is replaced, the link stays. Scratch folders that runs which
    were stopped left beside it are removed first; the ones of this run are removed when it fails
    or is stopped by SIGINT or SIGTERM (sizing.interrupts).
    """
    shown_as = Path(directory)
    directory = real_directory(shown_as)
    check_replaceable(directory)
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_scratch(directory)
        staging = Path(tempfile.mkdtemp(prefix=_scratch_prefix(directory, "new"), dir=directory.parent))
    except OSError as error:
        raise PlanDirectoryError(_unwritable(directory, error)) from None
    try:
        with undo_on_stop(lambda: shutil.rmtree(staging, ignore_errors=True)):
            written = _write_contents(
                recording, staging, capacity_report, [*recording.warnings, *warnings], capacity_html
            )
            _swap_in(staging, directory)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise PlanDirectoryError(_unwritable(directory, error)) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [shown_as / path.relative_to(staging) for path in written]


def real_directory(directory: Path) -> Path:
    """`directory`, or the folder it points to when it is a symbolic link (refused when that does
    not exist)."""
    directory = Path(directory)
    if not directory.is_symlink():
        return directory
    target = directory.resolve()
    if not target.exists():
        raise PlanDirectoryError(
            f"{directory} is a symbolic link to {target}, which does not exist; nothing was changed. "
            "Create that folder, or choose another --output"
        )
    return target


def _scratch_prefix(directory: Path, kind: str) -> str:
    return f".{directory.name}.{kind}-{os.getpid()}-"


def remove_stale_scratch(directory: Path) -> list[Path]:
    """Remove the scratch folders beside `directory` that runs no longer alive left (a run killed
    before it could clean up); return them. A previous plan left mid-swap is put back first.

    Scratch folders named without a process id (written before they carried one) are removed when
    they hold a plan's marker file or nothing.
    """
    pattern = re.compile(rf"\.{re.escape(directory.name)}\.({'|'.join(SCRATCH_KINDS)})-(?:(\d+)-)?.+")
    removed = []
    for entry in sorted(directory.parent.iterdir()):
        match = pattern.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        kind, pid = match.group(1), match.group(2)
        if pid is not None and process_alive(int(pid)):
            continue
        if pid is None and any(entry.iterdir()) and not (entry / MARKER).is_file() and kind != "old":
            continue
        previous = entry / directory.name
        if kind == "old" and previous.is_dir() and not os.path.lexists(directory):
            os.replace(previous, directory)
        shutil.rmtree(entry)
        removed.append(entry)
    return removed


def check_writable(directory: Path) -> None:
    """Refuse, before anything is evaluated, a `directory` whose parent cannot take the plan."""
    directory = real_directory(Path(directory))
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        Path(tempfile.mkdtemp(prefix=_scratch_prefix(directory, "check"), dir=directory.parent)).rmdir()
    except OSError as error:
        raise PlanDirectoryError(_unwritable(directory, error)) from None


def _unwritable(directory: Path, error: OSError) -> str:
    reason = error.strerror or str(error)
    return f"{directory} cannot be written ({reason}); nothing was changed. Choose a writable folder with --output"


def check_replaceable(directory: Path) -> None:
    directory = real_directory(Path(directory))
    if not directory.exists():
        return
    if not directory.is_dir():
        raise PlanDirectoryError(f"{directory} is a file, not a folder; choose another --output")
    if os.path.ismount(directory):
        raise PlanDirectoryError(
            f"{directory} is a mount point; a plan replaces its folder whole, which a mount point cannot be. "
            "Choose a folder inside it with --output"
        )
    entries = {path.name for path in directory.iterdir()}
    if entries and not (directory / MARKER).is_file() and not _unmarked_plan(directory, entries):
        raise PlanDirectoryError(
            f"{directory} is not empty and has no {MARKER} file, so it is not a folder a plan wrote; "
            "nothing was changed. Choose an empty or new folder with --output"
        )


def _unmarked_plan(directory: Path, entries: set[str]) -> bool:
    if not entries <= PLAN_ENTRIES - {MARKER}:
        return False
    tree = directory / "resources.txt"
    try:
        return tree.is_file() and tree.read_text(encoding="utf-8").startswith(f"{RESOURCE_TREE_HEADER}\n")
    except (OSError, UnicodeDecodeError):
        return False


def _swap_in(staging: Path, directory: Path) -> None:
    """Replace `directory` by `staging` with two renames, so a reader sees the old or the new plan."""
    if not directory.exists():
        os.replace(staging, directory)
        return
    retired = Path(tempfile.mkdtemp(prefix=_scratch_prefix(directory, "old"), dir=directory.parent))

    def put_back() -> None:
        # Stopped between the renames: the previous plan goes back to its place.
        if not os.path.lexists(directory) and (retired / directory.name).exists():
            os.replace(retired / directory.name, directory)
        shutil.rmtree(retired, ignore_errors=True)

    with undo_on_stop(put_back):
        try:
            os.replace(directory, retired / directory.name)
        except OSError:
            retired.rmdir()
            raise
        try:
            os.replace(staging, directory)
        except OSError:
            # Put the previous plan back: a failed write changes nothing.
            os.replace(retired / directory.name, directory)
            retired.rmdir()
            raise
        shutil.rmtree(retired)


def _write_contents(
    recording: Recording,
    directory: Path,
    capacity_report: Callable[[], str] | None,
    warnings: list[str],
    capacity_html: Callable[[], str] | None = None,
) -> list[Path]:
    show = Presenter(recording.invented)
    written = [
        _write(
            directory / MARKER, "A plan written by `python -m offline plan`; the folder is replaced by the next one.\n"
        ),
        _write(directory / "resources.txt", resource_tree(recording)),
        *write_resources(recording, directory / "resources", show),
        *write_manifests(recording, directory / "manifests", show),
        *write_iam(recording, directory / "iam", show),
        _write(directory / "graph.dot", dependency_graph(recording)),
        _write(directory / "outputs.json", _json_text(show(masked_outputs(recording)))),
        _write(directory / "warnings.txt", "".join(f"warning: {line}\n" for line in warnings) or "no warnings\n"),
    ]
    svg = _render_svg(directory / "graph.dot")
    if svg:
        written.append(svg)
    if capacity_report is not None:
        written.append(_write(directory / "capacity.txt", capacity_report()))
    if capacity_html is not None:
        written.append(_write(directory / "capacity.html", capacity_html()))
    return written


class Presenter:
    """Turns recorded values into what a plan shows: `shown`, with every value the mocks
    invented replaced by its placeholder."""

    def __init__(self, invented: dict[str, str]):
        self._placeholders = sorted(invented.items(), key=lambda item: (-len(item[0]), item[0]))

    def __call__(self, value: Any) -> Any:
        return self._replace(shown(value))

    def _replace(self, value: Any) -> Any:
        if isinstance(value, str):
            for invented, placeholder in self._placeholders:
                if invented in value:
                    value = value.replace(invented, placeholder)
            return value
        if isinstance(value, list):
            return [self._replace(item) for item in value]
        if isinstance(value, dict):
            return {self._replace(key): self._replace(item) for key, item in value.items()}
        return value


def plain(value: Any) -> Any:
    """JSON- and YAML-ready, secrets revealed (for the gates, which must read them)."""
    return _plain(reveal(value), reveal_secrets=True)


def shown(value: Any) -> Any:
    """JSON- and YAML-ready as a plan shows it: secrets masked as `[secret]`, as `pulumi preview` does."""
    return _plain(value, reveal_secrets=False)


def _plain(value: Any, reveal_secrets: bool) -> Any:
    if isinstance(value, Secret):
        return _plain(value.value, reveal_secrets) if reveal_secrets else SECRET
    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, ResourceRef):
        return {"resource": resource_label(value.urn)}
    if isinstance(value, float):
        return _tidy_float(value)
    if isinstance(value, list):
        return [_plain(item, reveal_secrets) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item, reveal_secrets) for key, item in value.items()}
    return value


def _tidy_float(value: float) -> float | int:
    if value.is_integer():
        return int(value)
    return float(f"{value:.{FLOAT_DIGITS}g}")


def resource_label(urn: str) -> str:
    """`type::name` of a URN: the same in every stack, so plans of two stacks diff cleanly."""
    parts = urn.split("::")
    if len(parts) < 4:
        return urn
    return f"{parts[2].rsplit('$', 1)[-1]}::{'::'.join(parts[3:])}"


def masked_outputs(recording: Recording) -> dict:
    return {
        name: Secret(value) if name in recording.secret_outputs else value
        for name, value in sorted(recording.outputs.items())
    }


def resource_tree(recording: Recording) -> str:
    """One line per resource, indented under its parent, as `pulumi preview` lists them."""
    children: dict[str | None, list[Registered]] = {}
    for resource in recording.resources:
        children.setdefault(resource.parent if resource.parent in _urns(recording) else None, []).append(resource)
    lines = [RESOURCE_TREE_HEADER]

    def walk(parent: str | None, depth: int) -> None:
        for resource in sorted(children.get(parent, []), key=lambda r: (r.type, r.name)):
            lines.append(f"{'    ' * depth}{resource.type}  {resource.name}")
            walk(resource.urn, depth + 1)

    walk(None, 0)
    return "\n".join(lines) + f"\n\n{len(recording.resources)} resources\n"


def resource_document(resource: Registered, show: Callable[[Any], Any]) -> dict:
    """What `pulumi preview --diff` shows of a new resource: its type, name, parent, options that
    change how it is replaced or deleted, and every input (secrets masked)."""
    document: dict[str, Any] = {"type": resource.type, "name": resource.name}
    if resource.parent:
        document["parent"] = resource_label(resource.parent)
    options = {
        "protect": resource.protect or None,
        "retainOnDelete": resource.retain_on_delete or None,
        "ignoreChanges": sorted(resource.ignore_changes) or None,
        "deletedWith": resource_label(resource.deleted_with) if resource.deleted_with else None,
        "dependsOn": sorted(resource_label(urn) for urn in resource.dependencies) or None,
    }
    document.update({key: value for key, value in options.items() if value is not None})
    document["inputs"] = _sorted(show({key: value for key, value in resource.inputs.items() if key != "__defaults"}))
    return document


def write_resources(recording: Recording, directory: Path, show: Callable[[Any], Any]) -> list[Path]:
    """One YAML file per resource, `<type>--<name>.yaml`, its inputs' keys sorted."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for resource in sorted(recording.resources, key=lambda r: (r.type, r.name, r.urn)):
        path = directory / f"{_slug(resource.type)}--{_slug(resource.name)}.yaml"
        written.append(_write(path, _yaml_text(resource_document(resource, show))))
    return written


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


def manifest_order(document: dict) -> dict:
    """apiVersion, kind, metadata, spec, then the other keys sorted; keys below sorted too."""
    ordered = {key: _sorted(document[key]) for key in MANIFEST_KEY_ORDER if key in document}
    ordered.update({key: _sorted(document[key]) for key in sorted(document) if key not in ordered})
    return ordered


def write_manifests(recording: Recording, directory: Path, show: Callable[[Any], Any] = plain) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for resource, document in kubernetes_objects(recording, show):
        namespace = document.get("metadata", {}).get("namespace") or "cluster"
        name = document.get("metadata", {}).get("name") or resource.name
        path = directory / f"{_slug(namespace)}--{_slug(document['kind'])}--{_slug(name)}.yaml"
        written.append(_write(path, _yaml_text(manifest_order(document))))
    helm = directory / "helm"
    for release in recording.of_type(HELM_RELEASE):
        summary = {
            "release": release.input("name", release.name),
            "namespace": release.input("namespace", None),
            "chart": release.input("chart"),
            "version": release.input("version", None),
            "repository": release.input("repositoryOpts.repo", None),
            "values": _sorted(show(release.inputs.get("values", {}))),
        }
        helm.mkdir(exist_ok=True)
        written.append(_write(helm / f"{_slug(summary['release'])}.yaml", _yaml_text(summary)))
    return sorted(written)


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
    labelled with its step in a valid `pulumi destroy` order. Nodes and edges are sorted."""
    step = {resource.urn: index + 1 for index, resource in enumerate(recording.deletion_order())}
    lines = [
        "digraph plan {",
        '  label="A -> B: A is created after B and deleted before it; [n] = step in the teardown order";',
        "  rankdir=LR;",
        '  node [shape=box, fontsize=10, fontname="Helvetica"];',
    ]
    resources = sorted(recording.resources, key=lambda r: resource_label(r.urn))
    for resource in resources:
        label = f"[{step[resource.urn]}] {resource.name}\\n{resource.type}"
        lines.append(f'  "{resource_label(resource.urn)}" [label="{label}"];')
    urns = _urns(recording)
    for resource in resources:
        edges = sorted(
            {(kind, target) for kind, target in resource.edges() if target in urns},
            key=lambda edge: (resource_label(edge[1]), edge[0]),
        )
        for kind, target in edges:
            style = "dashed" if kind == "parent" else ("dotted" if kind == "provider" else "solid")
            lines.append(
                f'  "{resource_label(resource.urn)}" -> "{resource_label(target)}" [style={style}, tooltip="{kind}"];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_svg(dot_file: Path) -> Path | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    svg = dot_file.with_suffix(".svg")
    subprocess.run([dot, "-Tsvg", str(dot_file), "-o", str(svg)], check=True, timeout=120)
    return svg


def _json_document(value: Any, show: Callable[[Any], Any]) -> Any:
    value = reveal(value)
    document = json.loads(value) if isinstance(value, str) else value
    return show(document)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _yaml_text(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)


def _json_text(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _urns(recording: Recording) -> set[str]:
    return {resource.urn for resource in recording.resources}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-").lower() or "unnamed"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
