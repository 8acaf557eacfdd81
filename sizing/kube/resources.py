"""Resource vectors of nodes and pods."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Resources:
    """cpu in millicores, memory in MiB, pods as a count of pod slots, ephemeral_storage in MiB.

    ephemeral_storage is a node's local disk for pods (container writable layers, logs,
    emptyDir volumes): Kubernetes' `ephemeral-storage` resource.
    """

    cpu: int = 0
    memory: int = 0
    pods: int = 0
    ephemeral_storage: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu + other.cpu,
            self.memory + other.memory,
            self.pods + other.pods,
            self.ephemeral_storage + other.ephemeral_storage,
        )

    def __sub__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu - other.cpu,
            self.memory - other.memory,
            self.pods - other.pods,
            self.ephemeral_storage - other.ephemeral_storage,
        )

    def scaled(self, factor: int) -> Resources:
        return Resources(self.cpu * factor, self.memory * factor, self.pods * factor, self.ephemeral_storage * factor)

    def fits_in(self, other: Resources) -> bool:
        return (
            self.cpu <= other.cpu
            and self.memory <= other.memory
            and self.pods <= other.pods
            and self.ephemeral_storage <= other.ephemeral_storage
        )

    @property
    def vector(self) -> tuple[int, int, int, int]:
        """(cpu, memory, pods, ephemeral_storage): the dimensions the simulation packs."""
        return (self.cpu, self.memory, self.pods, self.ephemeral_storage)

    def as_dict(self) -> dict[str, int]:
        """cpu, memory and pods, as the catalog and reports list them (ephemeral storage depends on the
        EC2NodeClass's volume, not the instance type: read it from the field)."""
        return {"cpu": self.cpu, "memory": self.memory, "pods": self.pods}
