"""The EC2 instance-type catalog: facts per type, as Karpenter sees them.

The catalog bundled in `sizing/karpenter/data/catalog.json` is generated offline (see
`scripts/generate_catalog.py` and `sizing/karpenter/data/README.md`); a catalog file of
the same format can be written by a live refresh (`sizing.karpenter.catalog_refresh`).
Memory is in MiB, prices in USD/hour (on-demand, Linux, shared tenancy).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sizing.errors import SizingInputError
from sizing.kube.safe_yaml import read_text

BUNDLED_CATALOG_PATH = Path(__file__).resolve().parent / "data" / "catalog.json"
CATALOG_FORMAT_VERSION = 1
ARCHITECTURES = ("amd64", "arm64")
HYPERVISORS = ("", "nitro", "xen")

LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_OS = "kubernetes.io/os"
LABEL_CATEGORY = "karpenter.k8s.aws/instance-category"
LABEL_FAMILY = "karpenter.k8s.aws/instance-family"
LABEL_GENERATION = "karpenter.k8s.aws/instance-generation"
LABEL_SIZE = "karpenter.k8s.aws/instance-size"
LABEL_CPU = "karpenter.k8s.aws/instance-cpu"
LABEL_MEMORY = "karpenter.k8s.aws/instance-memory"
LABEL_HYPERVISOR = "karpenter.k8s.aws/instance-hypervisor"
LABEL_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"

_NAME_PATTERN = re.compile(r"^[a-z0-9-]+\.[a-z0-9-]+$")


@dataclass(frozen=True)
class InstanceType:
    """One EC2 instance type.

    vcpu: default vCPU count; memory_mib: memory as EC2 reports it, in MiB;
    max_enis / ipv4_per_eni: network interfaces of the default network card
    and IPv4 addresses per interface (0 ENIs means no pod networking data);
    hypervisor: "nitro", "xen", or "" for bare metal;
    prices: region -> on-demand Linux USD/hour, possibly empty.
    """

    name: str
    category: str
    family: str
    generation: int
    size: str
    arch: str
    hypervisor: str
    vcpu: int
    memory_mib: int
    max_enis: int
    ipv4_per_eni: int
    gpu_count: int
    prices: Mapping[str, float] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # A read-only view keeps the frozen dataclass honest about its prices.
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    def labels(self) -> Mapping[str, str]:
        """The well-known node labels Karpenter v1 puts on a node of this type.

        As in Karpenter, `instance-gpu-count` exists only on types with GPUs,
        and bare-metal types carry `instance-hypervisor` with an empty value.
        """
        labels = {
            LABEL_INSTANCE_TYPE: self.name,
            LABEL_ARCH: self.arch,
            LABEL_OS: "linux",
            LABEL_CATEGORY: self.category,
            LABEL_FAMILY: self.family,
            LABEL_GENERATION: str(self.generation),
            LABEL_SIZE: self.size,
            LABEL_CPU: str(self.vcpu),
            LABEL_MEMORY: str(self.memory_mib),
            LABEL_HYPERVISOR: self.hypervisor,
        }
        if self.gpu_count > 0:
            labels[LABEL_GPU_COUNT] = str(self.gpu_count)
        return MappingProxyType(labels)

    def price(self, region: str) -> float | None:
        """On-demand Linux USD/hour in `region`, or None when the catalog has none."""
        return self.prices.get(region)

    def to_dict(self) -> dict[str, Any]:
        """The catalog-file form of this type (see `instance_type_from_dict`)."""
        return {
            "name": self.name,
            "category": self.category,
            "family": self.family,
            "generation": self.generation,
            "size": self.size,
            "arch": self.arch,
            "hypervisor": self.hypervisor,
            "vcpu": self.vcpu,
            "memory_mib": self.memory_mib,
            "max_enis": self.max_enis,
            "ipv4_per_eni": self.ipv4_per_eni,
            "gpu_count": self.gpu_count,
            "prices": {region: self.prices[region] for region in sorted(self.prices)},
        }


_INT_FIELDS = ("generation", "vcpu", "memory_mib", "max_enis", "ipv4_per_eni", "gpu_count")
_STR_FIELDS = ("name", "category", "family", "size", "arch", "hypervisor")


def instance_type_from_dict(obj: Any, where: str = "instance type") -> InstanceType:
    """Build an InstanceType from its catalog-file form, validating every field."""
    if not isinstance(obj, Mapping):
        raise SizingInputError(f"{where}: expected an object, got {type(obj).__name__}")
    expected = set(_INT_FIELDS) | set(_STR_FIELDS) | {"prices"}
    missing = sorted(expected - set(obj))
    unknown = sorted(set(obj) - expected)
    if missing or unknown:
        raise SizingInputError(
            f"{where}: missing fields {missing}, unknown fields {unknown}; allowed fields are {sorted(expected)}"
        )
    name = obj["name"]
    where = f"{where} {name!r}" if isinstance(name, str) else where
    for key in _STR_FIELDS:
        if not isinstance(obj[key], str):
            raise SizingInputError(f"{where}: {key} must be a string, got {obj[key]!r}")
    for key in _INT_FIELDS:
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SizingInputError(f"{where}: {key} must be a non-negative integer, got {value!r}")
    if not _NAME_PATTERN.match(name):
        raise SizingInputError(f"{where}: name must look like 'family.size', got {name!r}")
    if obj["arch"] not in ARCHITECTURES:
        raise SizingInputError(f"{where}: arch must be one of {list(ARCHITECTURES)}, got {obj['arch']!r}")
    if obj["hypervisor"] not in HYPERVISORS:
        raise SizingInputError(f"{where}: hypervisor must be one of {list(HYPERVISORS)}, got {obj['hypervisor']!r}")
    if obj["vcpu"] < 1 or obj["memory_mib"] < 1:
        raise SizingInputError(
            f"{where}: vcpu and memory_mib must be at least 1, got {obj['vcpu']} and {obj['memory_mib']}"
        )
    prices = obj["prices"]
    if not isinstance(prices, Mapping):
        raise SizingInputError(f"{where}: prices must be an object region -> USD/hour, got {prices!r}")
    for region, price in prices.items():
        if (
            not isinstance(region, str)
            or isinstance(price, bool)
            or not isinstance(price, (int, float))
            or not math.isfinite(price)
            or price <= 0
        ):
            raise SizingInputError(f"{where}: prices[{region!r}] must be a positive number of USD/hour, got {price!r}")
    return InstanceType(
        name=name,
        category=obj["category"],
        family=obj["family"],
        generation=obj["generation"],
        size=obj["size"],
        arch=obj["arch"],
        hypervisor=obj["hypervisor"],
        vcpu=obj["vcpu"],
        memory_mib=obj["memory_mib"],
        max_enis=obj["max_enis"],
        ipv4_per_eni=obj["ipv4_per_eni"],
        gpu_count=obj["gpu_count"],
        prices={region: float(price) for region, price in prices.items()},
    )


def catalog_from_document(document: Any, where: str = "catalog") -> tuple[InstanceType, ...]:
    """Validate a parsed catalog file and return its types sorted by name."""
    if not isinstance(document, Mapping) or not isinstance(document.get("instanceTypes"), list):
        raise SizingInputError(f"{where}: expected an object with an 'instanceTypes' list")
    version = document.get("formatVersion")
    if version != CATALOG_FORMAT_VERSION:
        raise SizingInputError(f"{where}: formatVersion must be {CATALOG_FORMAT_VERSION}, got {version!r}")
    instances = [
        instance_type_from_dict(obj, f"{where}: instanceTypes[{index}]")
        for index, obj in enumerate(document["instanceTypes"])
    ]
    names = [instance.name for instance in instances]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SizingInputError(f"{where}: instance types listed more than once: {duplicates}")
    if not instances:
        raise SizingInputError(f"{where}: instanceTypes is empty; a catalog needs at least one type")
    return tuple(sorted(instances, key=lambda instance: instance.name))


def catalog_document(instances: Iterable[InstanceType], source: str) -> dict[str, Any]:
    """The catalog-file document for `instances` (sorted by name)."""
    return {
        "formatVersion": CATALOG_FORMAT_VERSION,
        "source": source,
        "instanceTypes": [instance.to_dict() for instance in sorted(instances, key=lambda i: i.name)],
    }


def dump_catalog_document(document: Mapping[str, Any]) -> str:
    """Stable text of a catalog document: header keys, then one line per type."""
    header = {key: value for key, value in document.items() if key != "instanceTypes"}
    lines = ["{"]
    for key in sorted(header):
        lines.append(f"  {json.dumps(key)}: {json.dumps(header[key], sort_keys=True)},")
    lines.append('  "instanceTypes": [')
    # Field order is the order of InstanceType.to_dict, which reads better than sorted keys.
    rows = [json.dumps(obj, separators=(", ", ": ")) for obj in document["instanceTypes"]]
    lines.extend(f"    {row}," for row in rows[:-1])
    if rows:
        lines.append(f"    {rows[-1]}")
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def _bundled_catalog() -> tuple[InstanceType, ...]:
    return _read_catalog_file(BUNDLED_CATALOG_PATH)


def _read_catalog_file(path: Path) -> tuple[InstanceType, ...]:
    # Read as every input file is: a regular UTF-8 text file of bounded size.
    text = read_text(path, f"catalog file {str(path)!r}", kind="a catalog (JSON)")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise SizingInputError(f"catalog file {str(path)!r}: not valid JSON ({error})") from error
    except RecursionError:
        raise SizingInputError(f"catalog file {str(path)!r}: not a catalog (its JSON nests too deep)") from None
    return catalog_from_document(document, where=f"catalog file {str(path)!r}")


def load_catalog(path: Path | None = None) -> tuple[InstanceType, ...]:
    """The instance types of a catalog file, sorted by name.

    Without `path`, the catalog bundled with the package (loaded once).
    """
    if path is None:
        return _bundled_catalog()
    return _read_catalog_file(Path(path))


def catalog_by_name(catalog: Iterable[InstanceType]) -> Mapping[str, InstanceType]:
    """Index the catalog by instance-type name."""
    return MappingProxyType({instance.name: instance for instance in catalog})
