"""Karpenter's own example files, passed together as a user passes them (`karpenter_examples/`).

Most of them carry the same `EC2NodeClass default`: given again identically, an object is one
object (planned once, listed in the notes). Objects of one kind, namespace and name that differ
are refused, naming both places and the first field where they differ, and these tests check,
from the files themselves, that each such refusal names a field that really differs.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from sizing.errors import SizingInputError
from sizing.kube.objects import MAX_REPEATED_LISTED, first_difference, read_objects, read_parsed_objects
from sizing.kube.safe_yaml import load_documents
from sizing.planning.objects import plan_input_from_objects, read_object_files
from sizing.planning.planner import plan_capacity
from sizing.planning.report import plan_data

EXAMPLES = Path(__file__).parent / "karpenter_examples"
NODE_POOLS = sorted((EXAMPLES / "v1").glob("*.yaml"))
WORKLOADS = sorted((EXAMPLES / "workloads").glob("*.yaml"))
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


@functools.cache
def _documents(path):
    """The file's YAML documents as the planner parses them, parsed once for all the pairs."""
    return tuple(load_documents(path.read_text(encoding="utf-8"), f"file {str(path)!r}"))


def _read(*paths):
    return read_parsed_objects([(f"file {str(path)!r}", _documents(path)) for path in paths])


def _objects_of(path):
    """(kind, namespace, name) -> the parsed object, read independently of the planner."""
    found = {}
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if document:
            metadata = document["metadata"]
            found[(document["kind"], metadata.get("namespace", "default"), metadata["name"])] = document
    return found


def _at(document, path):
    """The value at a field path such as `spec.template.spec.requirements[5]` or
    `metadata.annotations["kubernetes.io/description"]` (None if absent)."""
    value = document
    for key, index, quoted in re.findall(r'\.?([^.\[\]"]+)|\[(\d+)\]|\["([^"]+)"\]', path):
        if index:
            value = value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(key or quoted)
        else:
            return None
        if value is None:
            return None
    return value


def test_the_examples_are_the_pinned_versions_files():
    assert len(NODE_POOLS) == 22 and len(WORKLOADS) == 11
    assert "v1.14.1" in (EXAMPLES / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("first", "second"), list(itertools.combinations(NODE_POOLS, 2)), ids=lambda p: p.stem)
def test_two_example_files_read_as_one_unless_their_objects_really_differ(first, second):
    """Each pair of `examples/v1` files: read, with every object they share
    identically listed once; or refused naming both files and a field that differs."""
    mine, theirs = _objects_of(first), _objects_of(second)
    shared = sorted(set(mine) & set(theirs))
    differing = [key for key in shared if mine[key] != theirs[key]]
    if not differing:
        objects = _read(first, second)
        assert len(objects.repeated) == len(shared)
        for (kind, _, name), note in zip(shared, sorted(objects.repeated), strict=True):
            assert note.startswith(f"{kind} {name} (") and second.name in note and first.name in note
        assert len(objects.node_pools) == len({key for key in {**mine, **theirs} if key[0] == "NodePool"})
        return
    with pytest.raises(SizingInputError) as refused:
        _read(first, second)
    message = str(refused.value)
    # The first object of the second file that differs from the first file's is the one refused.
    kind, _, name = next(key for key in theirs if key in mine and mine[key] != theirs[key])
    assert f"{kind} {name} is given twice with different content" in message
    assert first.name in message and second.name in message
    path = message.split("they first differ at ")[1].split(")")[0]
    assert _at(mine[(kind, "default", name)], path) != _at(theirs[(kind, "default", name)], path)


def test_most_examples_share_an_identical_ec2nodeclass_default():
    # The reason identical repeats must be read once: a user passes several of these files at once.
    carrying = [path for path in NODE_POOLS if ("EC2NodeClass", "default", "default") in _objects_of(path)]
    identical = {yaml.safe_dump(_objects_of(path)[("EC2NodeClass", "default", "default")]) for path in carrying}
    assert len(carrying) >= 5 and len(identical) < len(carrying)


def test_a_mix_of_examples_plans_with_the_repeated_class_once_and_the_limits_of_one_copy():
    files = [EXAMPLES / "v1" / name for name in ("general-purpose.yaml", "spot.yaml", "large-instances.yaml")]
    files += [EXAMPLES / "workloads" / name for name in ("inflate.yaml", "spread-hostname.yaml", "spot.yaml")]
    repeated = plan_input_from_objects(read_object_files(files), zones=ZONES)
    plan = plan_capacity(replace(repeated, solver_work_limit=None))
    notes = [note for note in plan_data(plan)["notes"] if note.startswith("given again identically, planned once")]
    assert len(notes) == 2 and all("EC2NodeClass default" in note for note in notes)
    assert "spot.yaml' document 2 repeats" in notes[0] and "large-instances.yaml' document 2 repeats" in notes[1]
    # The same objects, the class given once: the same plan.
    texts = [(str(path), path.read_text(encoding="utf-8")) for path in files]
    once = [(where, text.split("\n---\napiVersion: karpenter.k8s.aws/v1")[0]) for where, text in texts[1:3]]
    single = plan_input_from_objects(read_objects([texts[0], *once, *texts[3:]]), zones=ZONES)
    assert single.repeated == ()
    alone = plan_capacity(replace(single, solver_work_limit=None))
    assert plan.node_pool_limits == alone.node_pool_limits
    assert [n.instance_type for n in plan.fleet.nodes] == [n.instance_type for n in alone.fleet.nodes]


ACCELERATORS = ["gpu-nvidia.yaml", "gpu-amd.yaml", "neuron.yaml"]


def test_every_workload_example_reads_together_the_idle_ones_listed_not_planned():
    objects = read_object_files(WORKLOADS)
    assert [w.name for w in objects.workloads] == ["arm64", "pdb", "inflate", "host-zone-spread", "host-spread"]
    # The accelerator examples run 0 replicas: their extended resources place no pod, so they are
    # listed as not planned, not refused as unmodelled.
    assert objects.unmodelled == ()
    idle = [note for note in objects.not_planned if "(0 replicas and no HPA: it runs no pods)" in note]
    assert [note.split(" (")[0] for note in idle] == [
        "Deployment default/gpu-amd",
        "Deployment default/gpu-nvidia",
        "Deployment default/neuron",
        "Deployment default/prefer-arm",
        "Deployment default/spot",
        "Deployment default/zone-spread",
    ]


@pytest.mark.parametrize("name", ACCELERATORS)
def test_accelerator_examples_scaled_up_are_refused_naming_their_extended_resource(name):
    text = (EXAMPLES / "workloads" / name).read_text(encoding="utf-8")
    assert "replicas: 0" in text
    files = [EXAMPLES / "v1" / "general-purpose.yaml", EXAMPLES / "workloads" / "inflate.yaml"]
    texts = [(str(path), path.read_text(encoding="utf-8")) for path in files] + [
        (name, text.replace("replicas: 0", "replicas: 2"))
    ]
    with pytest.raises(SizingInputError, match=r"resources\.limits\.[a-z.]+/(gpu|neuron) \(extended resources"):
        plan_input_from_objects(read_objects(texts))


def test_the_local_nvme_example_is_refused_naming_the_instance_store_then_the_requirement_key():
    files = [EXAMPLES / "v1" / "instance-store-ephemeral-storage.yaml", EXAMPLES / "workloads" / "inflate.yaml"]
    with pytest.raises(SizingInputError, match=r"spec\.instanceStorePolicy \(instance-store ephemeral storage"):
        plan_input_from_objects(read_object_files(files))
    plan_input = plan_input_from_objects(read_object_files(files), accept_unmodelled=True)
    with pytest.raises(SizingInputError, match=r"requirements\[5\]\.key 'karpenter\.k8s\.aws/instance-local-nvme'"):
        plan_capacity(replace(plan_input, solver_work_limit=None))


CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n"


def _deployment(replicas, image="nginx"):
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
        f"spec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n"
        f"        - {{name: main, image: {image}, resources: {{requests: {{cpu: 100m}}}}}}\n"
    )


@pytest.mark.parametrize(
    ("second", "field"),
    [
        (_deployment(3, "nginx:2"), "spec.template.spec.containers[0].image"),
        (_deployment(4), "spec.replicas"),
        (_deployment(3).replace("namespace: shop}", "namespace: shop, labels: {a: b}}"), "metadata.labels"),
    ],
)
def test_a_differing_repeat_is_refused_naming_both_places_and_the_first_field(second, field):
    with pytest.raises(SizingInputError) as refused:
        read_objects([("a.yaml", _deployment(3)), ("b.yaml", CONFIG_MAP + "---\n" + second)])
    message = str(refused.value)
    assert "Deployment shop/web is given twice with different content" in message
    assert "a.yaml document 1" in message and "b.yaml document 2" in message
    assert f"they first differ at {field})" in message


def test_an_identical_repeat_of_a_workload_plans_its_pods_once():
    objects = read_objects([("a.yaml", _deployment(3)), ("b.yaml", _deployment(3))])
    assert [w.replicas for w in objects.workloads] == [3]
    assert objects.repeated == ("Deployment shop/web (b.yaml document 1 repeats a.yaml document 1 identically)",)


def test_repeats_are_listed_up_to_a_bound_and_counted_beyond():
    text = "---\n".join(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(MAX_REPEATED_LISTED + 7)
    )
    objects = read_objects([("a.yaml", text), ("b.yaml", text)])
    assert len(objects.repeated) == MAX_REPEATED_LISTED + 1
    assert objects.repeated[-1] == "7 more objects given again identically"


def test_first_difference_walks_maps_lists_and_types():
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "a[1]"
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "z"
    assert first_difference({"a": 1}, {"a": True}) == "a"
    assert first_difference([1], {"a": 1}) == "(the whole object)"
    assert first_difference({"m": {"a.b/c": 1}}, {"m": {"a.b/c": 2}}) == 'm["a.b/c"]'
