"""Resource vectors of nodes and pods."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Resources:
    """cpu in millicores, memory in MiB, pods as a count of pod slots."""

    cpu: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: "Resources") -> "Resources":
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.pods + other.pods)

    def __sub__(self, other: "Resources") -> "Resources":
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.pods - other.pods)

    def scaled(self, factor: int) -> "Resources":
        return Resources(self.cpu * factor, self.memory * factor, self.pods * factor)

    def fits_in(self, other: "Resources") -> bool:
        return self.cpu <= other.cpu and self.memory <= other.memory and self.pods <= other.pods

    def as_dict(self) -> dict[str, int]:
        return {"cpu": self.cpu, "memory": self.memory, "pods": self.pods}
