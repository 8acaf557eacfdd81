"""Karpenter v1's estimate of a node's capacity and allocatable resources.

This follows aws/karpenter-provider-aws v1.14 (`pkg/providers/instancetype/
types.go`) for the AL2023 AMI family (also AL2 and Custom), Linux, VPC CNI
without prefix delegation, no reserved ENIs and no block-device mappings:

    capacity.cpu    = vCPU x 1000 millicores
    capacity.memory = M - ceil(M x vmMemoryOverheadPercent) MiB,
                      M = memory in MiB, less 64 MiB on arm64 (CMA reserve)
    capacity.pods   = maxPods if set, else ENIs x (IPv4 per ENI - 1) + 2;
                      podsPerCore x vCPU caps either
    allocatable     = capacity - kubeReserved - systemReserved - eviction threshold
    kubeReserved.cpu    = 6 % of the first core, 1 % of the second, 0.5 % of
                          cores 3-4, 0.25 % of the rest (each piece truncated
                          to whole millicores)
    kubeReserved.memory = 11 MiB x ENI-limited pods + 255 MiB (the ENI-limited
                          count even when maxPods is set)
    eviction threshold  = 100 MiB of memory unless evictionHard sets it

Karpenter counts capacity (not allocatable) against NodePool limits. Since
v1.1 a running Karpenter replaces the 7.5 % memory estimate with the memory
a first node of the type reported; this model keeps the estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.kube.resources import Resources

DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075
ARM64_CMA_RESERVED_MIB = 64
DEFAULT_EVICTION_HARD_MEMORY_MIB = 100
KUBE_RESERVED_MEMORY_BASE_MIB = 255
KUBE_RESERVED_MEMORY_PER_POD_MIB = 11

# (start millicores, end millicores, fraction reserved) of the kube-reserved CPU ladder.
_KUBE_RESERVED_CPU_LADDER: tuple[tuple[int, int, float], ...] = (
    (0, 1000, 0.06),
    (1000, 2000, 0.01),
    (2000, 4000, 0.005),
    (4000, 1 << 31, 0.0025),
)
_BYTES_PER_MIB = 1024 * 1024


@dataclass(frozen=True)
class ReservedResources:
    """An explicit kubeReserved or systemReserved setting.

    cpu in millicores, memory in MiB; a field left None keeps Karpenter's
    computed value for kubeReserved and 0 for systemReserved. A `Resources`
    value may be passed instead (both fields then count as set).
    """

    cpu: int | None = None
    memory: int | None = None


@dataclass(frozen=True)
class KubeletConfig:
    """The EC2NodeClass `spec.kubelet` fields that change capacity or allocatable.

    max_pods: pods per node (overrides the ENI-limited count);
    pods_per_core: pods per vCPU, caps the pod count when > 0;
    kube_reserved / system_reserved: cpu in millicores, memory in MiB;
    eviction_hard_memory_mib: evictionHard `memory.available` in MiB.
    """

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: ReservedResources | None = None
    system_reserved: ReservedResources | None = None
    eviction_hard_memory_mib: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_pods", "pods_per_core", "eviction_hard_memory_mib"):
            _check_non_negative_int(f"kubelet.{name}", getattr(self, name))
        for name in ("kube_reserved", "system_reserved"):
            reserved = getattr(self, name)
            if reserved is None:
                continue
            if not hasattr(reserved, "cpu") or not hasattr(reserved, "memory"):
                raise SizingInputError(f"kubelet.{name} must have cpu (millicores) and memory (MiB), got {reserved!r}")
            _check_non_negative_int(f"kubelet.{name}.cpu", reserved.cpu)
            _check_non_negative_int(f"kubelet.{name}.memory", reserved.memory)


def _check_non_negative_int(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SizingInputError(f"{name} must be a non-negative integer or unset, got {value!r}")


def _check_overhead_percent(vm_memory_overhead_percent: float) -> None:
    if (
        isinstance(vm_memory_overhead_percent, bool)
        or not isinstance(vm_memory_overhead_percent, (int, float))
        or not 0 <= vm_memory_overhead_percent < 1
    ):
        raise SizingInputError(
            f"vm_memory_overhead_percent must be a fraction in [0, 1) such as 0.075, got {vm_memory_overhead_percent!r}"
        )


def eni_limited_pods(instance: InstanceType) -> int:
    """ENIs x (IPv4 addresses per ENI - 1) + 2, or 0 without network-interface data."""
    if instance.max_enis <= 0 or instance.ipv4_per_eni <= 0:
        return 0
    return instance.max_enis * (instance.ipv4_per_eni - 1) + 2


def max_pods(instance: InstanceType, kubelet: KubeletConfig | None = None) -> int:
    """The pod capacity Karpenter gives a node of this type (a count of pods)."""
    kubelet = kubelet or KubeletConfig()
    count = kubelet.max_pods if kubelet.max_pods is not None else eni_limited_pods(instance)
    if kubelet.pods_per_core:
        count = min(count, kubelet.pods_per_core * instance.vcpu)
    return count


def memory_capacity_mib(
    instance: InstanceType, vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT
) -> int:
    """Memory in MiB after the arm64 CMA reserve and the VM-overhead estimate (rounded up)."""
    _check_overhead_percent(vm_memory_overhead_percent)
    memory = instance.memory_mib
    if instance.arch == "arm64":
        memory -= ARM64_CMA_RESERVED_MIB
    # Karpenter computes in bytes and float64; doing the same keeps the rounding identical.
    overhead = math.ceil(memory * _BYTES_PER_MIB * vm_memory_overhead_percent / 1024 / 1024)
    return memory - overhead


def capacity(
    instance: InstanceType,
    kubelet: KubeletConfig | None = None,
    vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
) -> Resources:
    """Node capacity as Karpenter counts it against NodePool limits.

    cpu = vCPU x 1000 millicores, memory in MiB after VM overhead, pods = max_pods.
    """
    return Resources(
        cpu=instance.vcpu * 1000,
        memory=memory_capacity_mib(instance, vm_memory_overhead_percent),
        pods=max_pods(instance, kubelet),
    )


def default_kube_reserved_cpu(vcpu: int) -> int:
    """Karpenter's kube-reserved CPU in millicores for `vcpu` cores."""
    millicores = vcpu * 1000
    reserved = 0
    for start, end, fraction in _KUBE_RESERVED_CPU_LADDER:
        if millicores >= start:
            span = min(millicores, end) - start
            reserved += int(span * fraction)
    return reserved


def default_kube_reserved_memory(instance: InstanceType) -> int:
    """Karpenter's kube-reserved memory in MiB: 11 MiB per ENI-limited pod + 255 MiB."""
    return KUBE_RESERVED_MEMORY_PER_POD_MIB * eni_limited_pods(instance) + KUBE_RESERVED_MEMORY_BASE_MIB


def node_overhead(instance: InstanceType, kubelet: KubeletConfig | None = None) -> Resources:
    """kubeReserved + systemReserved + eviction threshold (cpu millicores, memory MiB, 0 pods)."""
    kubelet = kubelet or KubeletConfig()
    kube_cpu = default_kube_reserved_cpu(instance.vcpu)
    kube_memory = default_kube_reserved_memory(instance)
    if kubelet.kube_reserved is not None:
        if kubelet.kube_reserved.cpu is not None:
            kube_cpu = kubelet.kube_reserved.cpu
        if kubelet.kube_reserved.memory is not None:
            kube_memory = kubelet.kube_reserved.memory
    system_cpu = system_memory = 0
    if kubelet.system_reserved is not None:
        system_cpu = kubelet.system_reserved.cpu or 0
        system_memory = kubelet.system_reserved.memory or 0
    eviction_memory = (
        kubelet.eviction_hard_memory_mib
        if kubelet.eviction_hard_memory_mib is not None
        else DEFAULT_EVICTION_HARD_MEMORY_MIB
    )
    return Resources(
        cpu=kube_cpu + system_cpu,
        memory=kube_memory + system_memory + eviction_memory,
        pods=0,
    )


def allocatable(
    instance: InstanceType,
    kubelet: KubeletConfig | None = None,
    vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
) -> Resources:
    """What pods may request on a node of this type: capacity - overhead.

    cpu in millicores, memory in MiB, pods as a count. A value can come out
    negative when the reservations exceed a tiny type's capacity; such a type
    fits no pod.
    """
    return capacity(instance, kubelet, vm_memory_overhead_percent) - node_overhead(instance, kubelet)
