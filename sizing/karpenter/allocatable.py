"""Karpenter v1's estimate of a node's capacity and allocatable resources.

This follows aws/karpenter-provider-aws v1.14 (`pkg/providers/instancetype/
types.go`) for the AL2023 AMI family (also AL2 and Custom), Linux, VPC CNI
without prefix delegation and no reserved ENIs:

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

Ephemeral storage (bytes, given in MiB) follows the same file's `ephemeralStorage`,
`kubeReservedResources` and `evictionThreshold`:

    capacity.ephemeral-storage = the EC2NodeClass's root volume: the blockDeviceMappings
                                 entry with rootVolume: true and a volumeSize; else, for
                                 the Custom family, the last entry's volumeSize; else the
                                 entry on the AMI family's ephemeral device (/dev/xvda for
                                 AL2 and AL2023, /dev/xvdb for Bottlerocket, /dev/sda1 for
                                 Windows); else that device's default size (20 GiB, 50 GiB
                                 for Windows), 20 GiB for Custom (`block_device_storage`)
    kubeReserved.ephemeral-storage  = 1 GiB unless kubeReserved sets it
    eviction threshold (storage)    = ceil(10 % of capacity), or evictionHard
                                      `nodefs.available` (a percentage of capacity,
                                      100 % meaning none, or a quantity); evictionSoft
                                      is not counted, as in Karpenter 1.9 and later

so the default 20 GiB root volume leaves 20 - 1 - 2 = 17 GiB for pods. Allocatable
storage below 0 counts as 0: Karpenter checks only the resources a pod requests, so
such a node still takes pods that request no storage.

Karpenter counts capacity (not allocatable) against NodePool limits. Since
v1.1 a running Karpenter replaces the 7.5 % memory estimate with the memory
a first node of the type reported; this model keeps the estimate.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.kube.quantities import storage_mib
from sizing.kube.resources import Resources

DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075
ARM64_CMA_RESERVED_MIB = 64
DEFAULT_EVICTION_HARD_MEMORY_MIB = 100
KUBE_RESERVED_EPHEMERAL_STORAGE_MIB = 1024
DEFAULT_EVICTION_HARD_NODEFS_PERCENT = 10.0
_BYTES_PER_GIB = 2**30
# `amifamily.DefaultEBS.VolumeSize`: a volume whose size nothing else gives.
DEFAULT_EBS_VOLUME_BYTES = 20 * _BYTES_PER_GIB
# AMI family -> (the device kubelet's root dir, and so pods' storage, lives on; its size in the
# family's default block-device mappings, bytes). Custom names none (`pkg/providers/amifamily/*.go`).
EPHEMERAL_BLOCK_DEVICES: dict[str, tuple[str, int]] = {
    "AL2": ("/dev/xvda", DEFAULT_EBS_VOLUME_BYTES),
    "AL2023": ("/dev/xvda", DEFAULT_EBS_VOLUME_BYTES),
    "Bottlerocket": ("/dev/xvdb", DEFAULT_EBS_VOLUME_BYTES),
    "Windows2019": ("/dev/sda1", 50 * _BYTES_PER_GIB),
    "Windows2022": ("/dev/sda1", 50 * _BYTES_PER_GIB),
    "Windows2025": ("/dev/sda1", 50 * _BYTES_PER_GIB),
}
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

    cpu in millicores, memory and ephemeral_storage in MiB; a field left None
    keeps Karpenter's value for kubeReserved (computed cpu and memory, 1 GiB
    of storage) and 0 for systemReserved. A `Resources` value may be passed
    instead (cpu and memory then count as set; storage keeps the default).
    """

    cpu: int | None = None
    memory: int | None = None
    ephemeral_storage: int | None = None


@dataclass(frozen=True)
class BlockDeviceMapping:
    """One EC2NodeClass `spec.blockDeviceMappings` entry, as far as node storage goes.

    device_name: `deviceName` (None: unset); volume_size_bytes: `ebs.volumeSize` in bytes
    (None: unset, the volume then takes its snapshot's size, which Karpenter does not know);
    root_volume: `rootVolume`.
    """

    device_name: str | None = None
    volume_size_bytes: int | None = None
    root_volume: bool = False

    def __post_init__(self) -> None:
        size = self.volume_size_bytes
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise SizingInputError(f"blockDeviceMappings volumeSize must be 0 or more bytes, got {size!r}")


def block_device_storage(ami_family: str | None, mappings: tuple[BlockDeviceMapping, ...] = ()) -> int:
    """A node's ephemeral-storage capacity in bytes, as Karpenter's `ephemeralStorage` works it out.

    ami_family: the EC2NodeClass's family (None or one Karpenter does not know: AL2's rules, as
    `amifamily.GetAMIFamily` falls back to AL2); mappings: its blockDeviceMappings in order.
    """
    family = ami_family if ami_family in EPHEMERAL_BLOCK_DEVICES or ami_family == "Custom" else "AL2"
    if mappings:
        root = next((m for m in mappings if m.root_volume), None)
        if root is not None and root.volume_size_bytes is not None:
            return root.volume_size_bytes
        if family == "Custom":
            last = mappings[-1].volume_size_bytes
            return last if last is not None else DEFAULT_EBS_VOLUME_BYTES
        device = EPHEMERAL_BLOCK_DEVICES[family][0]
        named = next((m for m in mappings if m.device_name == device), None)
        if named is not None and named.volume_size_bytes is not None:
            return named.volume_size_bytes
    if family == "Custom":
        return DEFAULT_EBS_VOLUME_BYTES
    return EPHEMERAL_BLOCK_DEVICES[family][1]


@dataclass(frozen=True)
class KubeletConfig:
    """The EC2NodeClass `spec.kubelet` fields that change capacity or allocatable.

    max_pods: pods per node (overrides the ENI-limited count);
    pods_per_core: pods per vCPU, caps the pod count when > 0;
    kube_reserved / system_reserved: cpu in millicores, memory and ephemeral storage in MiB;
    eviction_hard_memory_mib: evictionHard `memory.available` in MiB;
    eviction_hard_nodefs_percent / eviction_hard_nodefs_mib: evictionHard `nodefs.available`
    as a percentage of the node's storage (100 disables it) or in MiB; at most one is set.
    """

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: ReservedResources | None = None
    system_reserved: ReservedResources | None = None
    eviction_hard_memory_mib: int | None = None
    eviction_hard_nodefs_percent: float | None = None
    eviction_hard_nodefs_mib: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_pods", "pods_per_core", "eviction_hard_memory_mib", "eviction_hard_nodefs_mib"):
            _check_non_negative_int(f"kubelet.{name}", getattr(self, name))
        percent = self.eviction_hard_nodefs_percent
        if percent is not None and (
            isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 <= percent <= 100
        ):
            raise SizingInputError(
                f"kubelet.eviction_hard_nodefs_percent must be a percentage from 0 to 100, got {percent!r}"
            )
        if percent is not None and self.eviction_hard_nodefs_mib is not None:
            raise SizingInputError(
                "kubelet.eviction_hard_nodefs_percent and eviction_hard_nodefs_mib are both set; "
                "evictionHard nodefs.available is one value, a percentage or a quantity"
            )
        for name in ("kube_reserved", "system_reserved"):
            reserved = getattr(self, name)
            if reserved is None:
                continue
            if not hasattr(reserved, "cpu") or not hasattr(reserved, "memory"):
                raise SizingInputError(f"kubelet.{name} must have cpu (millicores) and memory (MiB), got {reserved!r}")
            _check_non_negative_int(f"kubelet.{name}.cpu", reserved.cpu)
            _check_non_negative_int(f"kubelet.{name}.memory", reserved.memory)
            _check_non_negative_int(f"kubelet.{name}.ephemeral_storage", getattr(reserved, "ephemeral_storage", None))


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


NODEFS_FORMS = "a percentage of the node's storage such as '10%' (100% disables it) or a quantity such as 2Gi"
_NODEFS_PERCENT = re.compile(r"^([0-9]+(?:\.[0-9]+)?)%$")


def nodefs_available(value: Any, where: str) -> tuple[float | None, int | None]:
    """An evictionHard `nodefs.available` value: (percentage, None) or (None, MiB rounded up)."""
    if isinstance(value, str) and value.strip().endswith("%"):
        match = _NODEFS_PERCENT.match(value.strip())
        if not match or float(match.group(1)) > 100:
            raise SizingInputError(f"{where} must be {NODEFS_FORMS}, got {value!r}")
        return float(match.group(1)), None
    try:
        return None, storage_mib(value, where)
    except SizingInputError:
        raise SizingInputError(f"{where} must be {NODEFS_FORMS}, got {value!r}") from None


def _check_storage(storage_bytes: int) -> None:
    if isinstance(storage_bytes, bool) or not isinstance(storage_bytes, int) or storage_bytes < 0:
        raise SizingInputError(f"a node's ephemeral storage must be 0 or more bytes, got {storage_bytes!r}")


def capacity(
    instance: InstanceType,
    kubelet: KubeletConfig | None = None,
    vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
    storage_bytes: int = DEFAULT_EBS_VOLUME_BYTES,
) -> Resources:
    """Node capacity as Karpenter counts it against NodePool limits.

    cpu = vCPU x 1000 millicores, memory in MiB after VM overhead, pods = max_pods,
    ephemeral_storage = `storage_bytes` (see `block_device_storage`) in whole MiB.
    """
    _check_storage(storage_bytes)
    return Resources(
        cpu=instance.vcpu * 1000,
        memory=memory_capacity_mib(instance, vm_memory_overhead_percent),
        pods=max_pods(instance, kubelet),
        ephemeral_storage=storage_bytes // _BYTES_PER_MIB,
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


def eviction_storage_mib(storage_bytes: int, kubelet: KubeletConfig | None = None) -> int:
    """The kubelet's hard eviction threshold on the node's storage, in MiB (rounded up).

    Karpenter's `evictionThreshold`: ceil(storage x percent / 100) bytes, 10 % unless evictionHard
    `nodefs.available` sets a percentage (100 %: no threshold) or a quantity.
    """
    kubelet = kubelet or KubeletConfig()
    if kubelet.eviction_hard_nodefs_mib is not None:
        return kubelet.eviction_hard_nodefs_mib
    percent = kubelet.eviction_hard_nodefs_percent
    if percent is None:
        percent = DEFAULT_EVICTION_HARD_NODEFS_PERCENT
    if percent == 100:
        percent = 0.0
    # Karpenter computes in float64 bytes and rounds up; doing the same keeps the rounding identical.
    threshold = math.ceil(float(storage_bytes) / 100 * percent)
    return -(-threshold // _BYTES_PER_MIB)


def node_overhead(
    instance: InstanceType, kubelet: KubeletConfig | None = None, storage_bytes: int = DEFAULT_EBS_VOLUME_BYTES
) -> Resources:
    """kubeReserved + systemReserved + eviction threshold (cpu millicores, memory MiB, 0 pods,
    ephemeral storage MiB)."""
    kubelet = kubelet or KubeletConfig()
    kube_storage = KUBE_RESERVED_EPHEMERAL_STORAGE_MIB
    system_storage = 0
    if isinstance(kubelet.kube_reserved, ReservedResources) and kubelet.kube_reserved.ephemeral_storage is not None:
        kube_storage = kubelet.kube_reserved.ephemeral_storage
    if isinstance(kubelet.system_reserved, ReservedResources):
        system_storage = kubelet.system_reserved.ephemeral_storage or 0
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
        ephemeral_storage=kube_storage + system_storage + eviction_storage_mib(storage_bytes, kubelet),
    )


def allocatable(
    instance: InstanceType,
    kubelet: KubeletConfig | None = None,
    vm_memory_overhead_percent: float = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
    storage_bytes: int = DEFAULT_EBS_VOLUME_BYTES,
) -> Resources:
    """What pods may request on a node of this type: capacity - overhead.

    cpu in millicores, memory and ephemeral storage in MiB, pods as a count. cpu or
    memory can come out negative when the reservations exceed a tiny type's
    capacity; such a type fits no pod. Storage below 0 is 0: only pods that request
    storage are kept off such a node, as in Karpenter.
    """
    left = capacity(instance, kubelet, vm_memory_overhead_percent, storage_bytes) - node_overhead(
        instance, kubelet, storage_bytes
    )
    return replace(left, ephemeral_storage=max(left.ephemeral_storage, 0))
