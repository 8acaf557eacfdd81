"""Karpenter's capacity and allocatable model: worked examples, kubelet overrides, bad input."""

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import (
    KubeletConfig,
    ReservedResources,
    allocatable,
    capacity,
    default_kube_reserved_cpu,
    default_kube_reserved_memory,
    eni_limited_pods,
    max_pods,
    memory_capacity_mib,
    node_overhead,
)
from sizing.karpenter.catalog import InstanceType, catalog_by_name, load_catalog
from sizing.kube.resources import Resources

# Allocatable ephemeral storage (MiB) on the default 20 GiB root volume, less 1 GiB kube-reserved and
# the 10 % eviction threshold.
STORAGE = 17 * 1024


def bundled(name: str) -> InstanceType:
    return catalog_by_name(load_catalog())[name]


# From Karpenter's reference for AL2023 without kubelet overrides:
# (type, capacity memory MiB, kube-reserved cpu m, kube-reserved memory MiB, allocatable);
# ephemeral storage on the default 20 GiB root volume: 20 - 1 (kube-reserved) - 2 (10 %) = 17 GiB.
WORKED_EXAMPLES = [
    ("m5.large", 7577, 70, 574, Resources(1930, 6903, 29, 17 * 1024)),
    ("m5.xlarge", 15155, 80, 893, Resources(3920, 14162, 58, 17 * 1024)),
    ("m5.2xlarge", 30310, 90, 893, Resources(7910, 29317, 58, 17 * 1024)),
    ("c6g.xlarge", 7518, 80, 893, Resources(3920, 6525, 58, 17 * 1024)),
]


@pytest.mark.parametrize("name, memory_capacity, reserved_cpu, reserved_memory, expected", WORKED_EXAMPLES)
def test_worked_examples(name, memory_capacity, reserved_cpu, reserved_memory, expected):
    instance = bundled(name)
    assert memory_capacity_mib(instance) == memory_capacity
    assert default_kube_reserved_cpu(instance.vcpu) == reserved_cpu
    assert default_kube_reserved_memory(instance) == reserved_memory
    assert allocatable(instance) == expected
    assert capacity(instance) == Resources(instance.vcpu * 1000, memory_capacity, expected.pods, 20 * 1024)
    assert max_pods(instance) == expected.pods


@pytest.mark.parametrize(
    "vcpu, reserved",
    [(1, 60), (2, 70), (3, 75), (4, 80), (8, 90), (96, 80 + 230), (192, 80 + 470)],
)
def test_kube_reserved_cpu_ladder(vcpu, reserved):
    assert default_kube_reserved_cpu(vcpu) == reserved


def test_kube_reserved_cpu_truncates_each_piece():
    # 5 cores: 0.25 % of 1000m is 2.5m, truncated to 2m.
    assert default_kube_reserved_cpu(5) == 60 + 10 + 10 + 2


def test_arm64_loses_cma_memory_before_the_overhead():
    amd = bundled("m5.large")
    arm = InstanceType(**{**amd.to_dict(), "name": "m6g.large", "family": "m6g", "generation": 6, "arch": "arm64"})
    assert memory_capacity_mib(amd) == 8192 - 615
    assert memory_capacity_mib(arm) == 8128 - 610


def test_vm_overhead_parameter():
    instance = bundled("m5.large")
    assert capacity(instance, vm_memory_overhead_percent=0).memory == 8192
    assert capacity(instance, vm_memory_overhead_percent=0.1).memory == 8192 - 820
    assert allocatable(instance, vm_memory_overhead_percent=0).memory == 8192 - 574 - 100


def test_max_pods_override_keeps_eni_limited_kube_reserved_memory():
    instance = bundled("m5.large")
    kubelet = KubeletConfig(max_pods=110)
    assert max_pods(instance, kubelet) == 110
    assert capacity(instance, kubelet).pods == 110
    assert allocatable(instance, kubelet) == Resources(1930, 6903, 110, STORAGE)


def test_max_pods_can_lower_the_pod_count():
    assert allocatable(bundled("m5.xlarge"), KubeletConfig(max_pods=20)) == Resources(3920, 14162, 20, STORAGE)


def test_pods_per_core_caps_eni_limit_and_max_pods():
    instance = bundled("m5.xlarge")
    assert max_pods(instance, KubeletConfig(pods_per_core=10)) == 40
    assert max_pods(instance, KubeletConfig(pods_per_core=100)) == 58
    assert max_pods(instance, KubeletConfig(max_pods=110, pods_per_core=10)) == 40
    assert max_pods(instance, KubeletConfig(pods_per_core=0)) == 58


def test_kube_reserved_override_replaces_only_the_fields_set():
    instance = bundled("m5.large")
    cpu_only = KubeletConfig(kube_reserved=ReservedResources(cpu=200))
    memory_only = KubeletConfig(kube_reserved=ReservedResources(memory=1000))
    assert allocatable(instance, cpu_only) == Resources(1800, 6903, 29, STORAGE)
    assert allocatable(instance, memory_only) == Resources(1930, 7577 - 1000 - 100, 29, STORAGE)


def test_kube_reserved_accepts_a_resources_value():
    kubelet = KubeletConfig(kube_reserved=Resources(cpu=100, memory=300))
    assert allocatable(bundled("m5.large"), kubelet) == Resources(1900, 7577 - 300 - 100, 29, STORAGE)


def test_system_reserved_and_eviction_threshold():
    instance = bundled("m5.large")
    kubelet = KubeletConfig(system_reserved=ReservedResources(cpu=100, memory=200), eviction_hard_memory_mib=500)
    assert node_overhead(instance, kubelet) == Resources(170, 574 + 200 + 500, 0, 1024 + 2048)
    assert allocatable(instance, kubelet) == Resources(1830, 7577 - 574 - 200 - 500, 29, STORAGE)
    assert allocatable(instance, KubeletConfig(eviction_hard_memory_mib=0)).memory == 7577 - 574


def test_capacity_does_not_depend_on_reservations():
    instance = bundled("m5.2xlarge")
    kubelet = KubeletConfig(kube_reserved=ReservedResources(1, 1), system_reserved=ReservedResources(500, 500))
    assert capacity(instance, kubelet) == capacity(instance)


def test_no_eni_data_means_no_pods():
    instance = InstanceType(**{**bundled("m5.large").to_dict(), "max_enis": 0})
    assert eni_limited_pods(instance) == 0
    assert allocatable(instance).pods == 0
    assert default_kube_reserved_memory(instance) == 255


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"max_pods": -1}, "kubelet.max_pods"),
        ({"max_pods": True}, "kubelet.max_pods"),
        ({"pods_per_core": 2.5}, "kubelet.pods_per_core"),
        ({"eviction_hard_memory_mib": "100Mi"}, "kubelet.eviction_hard_memory_mib"),
        ({"kube_reserved": ReservedResources(cpu=-5)}, "kubelet.kube_reserved.cpu"),
        ({"system_reserved": ReservedResources(memory=1.5)}, "kubelet.system_reserved.memory"),  # type: ignore[arg-type]  # the bad input under test
        ({"kube_reserved": {"cpu": 100}}, "kubelet.kube_reserved must have cpu"),
    ],
)
def test_bad_kubelet_config(kwargs, fragment):
    with pytest.raises(SizingInputError, match=fragment):
        KubeletConfig(**kwargs)


@pytest.mark.parametrize("percent", [-0.1, 1, 1.5, "0.075", True])
def test_bad_vm_overhead(percent):
    with pytest.raises(SizingInputError, match="vm_memory_overhead_percent"):
        allocatable(bundled("m5.large"), vm_memory_overhead_percent=percent)
