"""Node label keys as Karpenter v1 sorts them, and requirements on a label as Karpenter intersects them.

Keys (kubernetes-sigs/karpenter v1.14 `pkg/apis/v1/labels.go`, the AWS provider's labels and the
NodePool CRD's validation rules):

- restricted: the `karpenter.sh` domain (but `karpenter.sh/capacity-type`), `kubernetes.io/hostname`
  and the `karpenter.k8s.aws` domain (but its well-known instance labels) may not appear in a
  NodePool's requirements or template labels; `karpenter.sh/nodepool` is Karpenter's own. The
  NodePool CRD's validation rules say so, and are evaluated as they are (`sizing.karpenter.crd_rules`);
- well known: labels Karpenter and the AWS provider derive from the instance type, its offering or
  the NodePool. A pod may require one a NodePool does not mention (it is not "undefined");
- custom: any other qualified name, such as `example.com/team`. A NodePool defines it by a
  requirement or a template label, which narrows no instance type; its nodes then carry the label.
  A pod requiring a custom label (In, Exists, Gt, Lt) that its NodePool does not define cannot use
  the NodePool; NotIn and DoesNotExist need nothing of it.

`LabelRequirement` is Karpenter's `scheduling.Requirement` (`pkg/scheduling/requirement.go`): a set
of values or its complement, with integer bounds for Gt/Lt/Gte/Lte; `compatible` is
`Requirements.Intersects` for one key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

NODEPOOL_KEY = "karpenter.sh/nodepool"
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"

CORE_WELL_KNOWN = frozenset(
    {
        NODEPOOL_KEY,
        ZONE_KEY,
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        CAPACITY_TYPE_KEY,
        "node.kubernetes.io/windows-build",
    }
)
# The `karpenter.k8s.aws` labels the NodePool CRD lets requirements and template labels use.
AWS_WELL_KNOWN = frozenset(
    "karpenter.k8s.aws/" + name
    for name in (
        "instance-tenancy",
        "capacity-reservation-type",
        "capacity-reservation-id",
        "capacity-reservation-interruptible",
        "ec2nodeclass",
        "instance-encryption-in-transit-supported",
        "instance-category",
        "instance-hypervisor",
        "instance-family",
        "instance-generation",
        "instance-local-nvme",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
        "instance-capability-flex",
        "placement-group-id",
        "placement-group-partition",
    )
)
WELL_KNOWN = CORE_WELL_KNOWN | AWS_WELL_KNOWN
# Deprecated aliases Karpenter reads as the stable keys (`NormalizedLabels`).
NORMALIZED = {
    "failure-domain.beta.kubernetes.io/zone": ZONE_KEY,
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
}
# The NodePool CRD's pattern for a requirement key: an optional DNS-subdomain prefix and a name.
QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
QUALIFIED_NAME_MAX_LENGTH = 316
_INTEGER = re.compile(r"^-?[0-9]+$")


SHOWN_LENGTH = 80


def shown(value: object) -> str:
    """`value` as an error message quotes it, cut to SHOWN_LENGTH characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_LENGTH else text[:SHOWN_LENGTH] + f"… ({len(text)} characters)"


def restriction(key: str) -> str | None:
    """Why a NodePool may not use `key` in its requirements or template labels (None: it may), besides
    the restricted domains and labels the NodePool CRD's own rules refuse (`sizing.karpenter.crd_rules`)."""
    if len(key) > QUALIFIED_NAME_MAX_LENGTH or not QUALIFIED_NAME.match(key):
        return (
            f"label key {shown(key)} is not a qualified name (an optional DNS-subdomain prefix and '/', then up to 63 "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit)"
        )
    return None


def is_custom(key: str) -> bool:
    """Whether `key` is a label a NodePool may define that Karpenter derives from nothing (the keys the
    NodePool CRD's rules restrict are refused before, by those rules)."""
    return key not in WELL_KNOWN and key not in NORMALIZED and restriction(key) is None


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    if gte is None and lte is None:
        return True
    if not _INTEGER.match(value):
        return False
    number = int(value)
    return (gte is None or number >= gte) and (lte is None or number <= lte)


@dataclass(frozen=True)
class LabelRequirement:
    """Values a node's label `key` may take: `values` (In), or every value but them when
    `complement` (NotIn; Exists with none), within [gte, lte] for integer bounds. No value and no
    complement is DoesNotExist."""

    key: str
    values: frozenset[str] = frozenset()
    complement: bool = False
    gte: int | None = None
    lte: int | None = None

    @classmethod
    def of(cls, key: str, operator: str, values: Iterable[str] = ()) -> LabelRequirement:
        """The requirement of a `{key, operator, values}` node selector expression."""
        given = tuple(values)
        if operator == "In":
            return cls(key, frozenset(given))
        if operator == "NotIn":
            return cls(key, frozenset(given), complement=True)
        if operator == "Exists":
            return cls(key, complement=True)
        if operator == "DoesNotExist":
            return cls(key)
        bound = int(given[0])
        if operator == "Gt":
            return cls(key, complement=True, gte=bound + 1)
        if operator == "Gte":
            return cls(key, complement=True, gte=bound)
        if operator == "Lt":
            return cls(key, complement=True, lte=bound - 1)
        if operator == "Lte":
            return cls(key, complement=True, lte=bound)
        raise ValueError(f"unknown operator {operator!r}")

    @property
    def operator(self) -> str:
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def has(self, value: str) -> bool:
        """Whether a node whose label is `value` satisfies the requirement."""
        inside = value in self.values
        return (not inside if self.complement else inside) and _within(value, self.gte, self.lte)

    def admits(self, value: str | None) -> bool:
        """Whether a node whose label is `value` (None: no such label) satisfies the requirement."""
        if value is None:
            # Only NotIn and DoesNotExist hold on a node without the label, as in Kubernetes.
            return self.operator == "DoesNotExist" or (
                self.operator == "NotIn" and self.gte is None and self.lte is None
            )
        return self.has(value)

    def finite(self) -> frozenset[str] | None:
        """The values it allows when they are a finite set (In), else None."""
        return None if self.complement else self.values

    def intersection(self, other: LabelRequirement) -> LabelRequirement:
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return LabelRequirement(self.key)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, gte, lte))
        complement = self.complement and other.complement
        return LabelRequirement(self.key, values, complement, gte if complement else None, lte if complement else None)

    def has_intersection(self, other: LabelRequirement) -> bool:
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and _within(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and _within(v, gte, lte) for v in self.values)
        return any(v in other.values and _within(v, gte, lte) for v in self.values)

    def describe(self) -> str:
        operator = self.operator
        text = f"{self.key} {operator}"
        if self.values:
            text += " [" + ", ".join(sorted(self.values)) + "]"
        if self.gte is not None:
            text += f" >= {self.gte}"
        if self.lte is not None:
            text += f" <= {self.lte}"
        return text


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def compatible(existing: LabelRequirement, incoming: LabelRequirement) -> bool:
    """Whether a node with `existing` can take a pod with `incoming` on the same key: they share a
    value, or both keep the label off some values (NotIn or DoesNotExist)."""
    if existing.has_intersection(incoming):
        return True
    either_way = ("NotIn", "DoesNotExist")
    return incoming.operator in either_way and existing.operator in either_way


def merged(requirements: Iterable[LabelRequirement]) -> tuple[LabelRequirement, ...]:
    """One requirement per key, the intersection of those given, sorted by key."""
    by_key: dict[str, LabelRequirement] = {}
    for requirement in requirements:
        existing = by_key.get(requirement.key)
        by_key[requirement.key] = requirement if existing is None else existing.intersection(requirement)
    return tuple(by_key[key] for key in sorted(by_key))


def pool_admits(defined: Iterable[LabelRequirement], pod: Iterable[LabelRequirement]) -> str | None:
    """Why a NodePool whose nodes' custom labels are `defined` cannot take a pod requiring `pod` on
    custom keys (None: it can), as Karpenter's `Requirements.Compatible`."""
    by_key = {requirement.key: requirement for requirement in defined}
    for requirement in pod:
        existing = by_key.get(requirement.key)
        if existing is None:
            if requirement.operator not in ("NotIn", "DoesNotExist"):
                return f"label {requirement.key!r} is not defined by the NodePool (no requirement or template label)"
        elif not compatible(existing, requirement):
            return f"the NodePool's {existing.describe()} does not allow {requirement.describe()}"
    return None
