"""NodePool requirements against the real bundled catalog, checked against the types' own fields."""

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import load_catalog
from sizing.karpenter.requirements import allowed_capacity_types, filter_instance_types, parse_requirements

CATALOG = load_catalog()

GETTING_STARTED = [
    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
]


def split(requirement_dicts):
    kept = filter_instance_types(CATALOG, parse_requirements(requirement_dicts))
    kept_names = {i.name for i in kept}
    return kept, [i for i in CATALOG if i.name not in kept_names]


def test_getting_started_nodepool():
    requirements = parse_requirements(GETTING_STARTED)
    kept, dropped = split(GETTING_STARTED)

    def wanted(i):
        return i.arch == "amd64" and i.category in ("c", "m", "r") and i.generation > 2

    assert kept and all(wanted(i) for i in kept)
    assert not any(wanted(i) for i in dropped)
    assert list(kept) == sorted(kept, key=lambda i: i.name)
    assert "m5.large" in {i.name for i in kept} and "m6g.large" not in {i.name for i in kept}
    assert allowed_capacity_types(requirements) == ("on-demand",)


def test_gpu_types_by_presence_of_the_gpu_label():
    without_gpu, with_gpu = split([{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"}])
    assert without_gpu and with_gpu
    assert all(i.gpu_count == 0 for i in without_gpu)
    assert all(i.gpu_count > 0 for i in with_gpu)


def test_cpu_and_memory_window():
    window = [
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["16"]},
        {"key": "karpenter.k8s.aws/instance-memory", "operator": "Lt", "values": ["65536"]},
    ]
    kept, dropped = split(window)
    assert all(4 <= i.vcpu <= 16 and i.memory_mib < 65536 for i in kept)
    assert not any(4 <= i.vcpu <= 16 and i.memory_mib < 65536 for i in dropped)


def test_instance_type_names_and_families():
    kept, _ = split(
        [
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["m5.large", "m5.xlarge", "c6g.xlarge"],
            },
            {"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn", "values": ["c6g"]},
        ]
    )
    assert [i.name for i in kept] == ["m5.large", "m5.xlarge"]


def test_bare_metal_by_hypervisor():
    kept, dropped = split(
        [{"key": "karpenter.k8s.aws/instance-hypervisor", "operator": "In", "values": ["nitro", "xen"]}]
    )
    assert all(i.hypervisor in ("nitro", "xen") for i in kept)
    assert dropped and all(i.hypervisor == "" for i in dropped)
    assert all("metal" in i.size for i in dropped)


def test_unknown_instance_type_name_leaves_nothing():
    with pytest.raises(
        SizingInputError, match=r"leave no instance type: node.kubernetes.io/instance-type In \[m5.lage\]"
    ):
        split([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.lage"]}])
