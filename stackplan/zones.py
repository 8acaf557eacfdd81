"""The VPC's availability zones: which of a region's zones a stack may use, choosing them once, and
holding them by zone ID afterwards.

A zone's name (us-east-1a) maps to a different physical zone in each account; its ID (use1-az1)
does not. A stack's zones are therefore pinned by ID (`network.zoneIds`), which `make up` writes
into the stack file on first use (scripts/zones.py), and looked up by name in the account only to
hand them to the VPC. Plain data in, plain data out: the AWS look-ups are the callers' (the
program's provider, or the AWS CLI for `make up`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from stackconfig.errors import StackConfigError

# Zones whose subnets EKS refuses for a cluster, by region: Amazon EKS User Guide, "View Amazon EKS
# networking requirements for VPC and subnets", subnet requirements for clusters (the table of
# disallowed Availability Zone IDs). CreateCluster fails there with UnsupportedAvailabilityZoneException.
EKS_UNSUPPORTED_ZONE_IDS: Mapping[str, tuple[str, ...]] = {
    "us-east-1": ("use1-az3",),
    "us-west-1": ("usw1-az2",),
    "ca-central-1": ("cac1-az3",),
}


@dataclass(frozen=True)
class Zone:
    """One availability zone of the region, as the account sees it. offered: which of the node
    group's instance types EC2 offers there."""

    name: str
    zone_id: str
    available: bool = True
    offered: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RegionZones:
    """The availability zones of a region (no Local or Wavelength Zones), and the instance types
    whose offerings were looked up: the system node group's."""

    region: str
    zones: tuple[Zone, ...]
    instance_types: tuple[str, ...] = ()
    by_id: Mapping[str, Zone] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {zone.zone_id: zone for zone in self.zones})

    @property
    def available_names(self) -> list[str]:
        return sorted(zone.name for zone in self.zones if zone.available)

    def why_unsupported(self, zone: Zone) -> str | None:
        """Why no VPC of a cluster may have subnets in `zone`, or None."""
        if zone.zone_id in EKS_UNSUPPORTED_ZONE_IDS.get(self.region, ()):
            return "EKS does not support cluster subnets there"
        return None

    def missing_types(self, zone: Zone) -> list[str]:
        """The node group's instance types EC2 does not offer in `zone`."""
        return [name for name in self.instance_types if name not in zone.offered]

    def why_unusable(self, zone: Zone) -> str | None:
        """Why the stack's VPC may not use `zone`, or None. A zone that is not `available` at
        the moment is a reason not to choose it, not to leave a pinned one."""
        if zone.zone_id in EKS_UNSUPPORTED_ZONE_IDS.get(self.region, ()):
            return "EKS does not support cluster subnets there"
        missing = [name for name in self.instance_types if name not in zone.offered]
        if missing:
            return f"EC2 does not offer {', '.join(missing)} (nodeGroup.instanceTypes) there"
        return None

    def describe(self, zone: Zone) -> str:
        return f"{zone.zone_id} ({zone.name})"


@dataclass(frozen=True)
class VpcZones:
    """The zones a VPC is built in: names for awsx, IDs to pin; warnings to show."""

    names: tuple[str, ...]
    zone_ids: tuple[str, ...]
    pinned: bool
    warnings: tuple[str, ...] = ()


def choose_zones(region_zones: RegionZones, count: int) -> VpcZones:
    """The first `count` usable, available zones by name: the same zones an unpinned stack used
    before zone IDs were pinned, minus any that EKS or the node group's instance types rule out."""
    usable, left_out = [], []
    for zone in sorted(region_zones.zones, key=lambda zone: zone.name):
        reason = region_zones.why_unusable(zone) or (None if zone.available else "it is not available now")
        if reason is None:
            usable.append(zone)
        else:
            left_out.append(f"{region_zones.describe(zone)}: {reason}")
    if len(usable) < count:
        found = ", ".join(region_zones.describe(zone) for zone in usable) or "none"
        raise StackConfigError(
            [
                f"`network.availabilityZones` is {count} but {region_zones.region} has only {len(usable)} zones "
                f"the cluster can use ({found})" + (f"; left out: {'; '.join(left_out)}" if left_out else "")
            ]
        )
    chosen = usable[:count]
    return VpcZones(
        names=tuple(zone.name for zone in chosen),
        zone_ids=tuple(zone.zone_id for zone in chosen),
        pinned=False,
    )


def pinned_zones(region_zones: RegionZones, zone_ids: Sequence[str]) -> VpcZones:
    """The pinned zones by name, in the pinned order; StackConfigError for an ID the region does
    not have or cannot use. A pinned zone that is not available at the moment stays (its subnets
    exist), with a warning. So does one that lacks some of `nodeGroup.instanceTypes` (a zone read
    back from an older stack's VPC, where the node group already runs; or a type offered since the
    zones were chosen): the node group launches the offered ones there, and at least one must be."""
    problems, warnings = [], []
    for zone_id in zone_ids:
        zone = region_zones.by_id.get(zone_id)
        if zone is None:
            known = ", ".join(sorted(region_zones.by_id)) or "none"
            problems.append(
                f"`network.zoneIds`: {zone_id!r} is not an availability zone of {region_zones.region} "
                f"in this account (its zones: {known})"
            )
            continue
        reason = region_zones.why_unsupported(zone)
        missing = region_zones.missing_types(zone)
        if reason is None and missing and len(missing) == len(region_zones.instance_types):
            reason = (
                f"EC2 offers none of nodeGroup.instanceTypes ({', '.join(missing)}) there; list at least one "
                "type offered in every zone of network.zoneIds"
            )
        if reason is not None:
            problems.append(f"`network.zoneIds`: {region_zones.describe(zone)} cannot hold the VPC: {reason}")
            continue
        if missing:
            warnings.append(
                f"zone {region_zones.describe(zone)} of network.zoneIds lacks {', '.join(missing)} of "
                "nodeGroup.instanceTypes: the system node group launches only the other types there"
            )
        if not zone.available:
            warnings.append(
                f"zone {region_zones.describe(zone)} of network.zoneIds is not available at the moment: its "
                "subnets stay, but nodes may fail to launch there until it is"
            )
    if problems:
        raise StackConfigError(problems)
    return VpcZones(
        names=tuple(region_zones.by_id[zone_id].name for zone_id in zone_ids),
        zone_ids=tuple(zone_ids),
        pinned=True,
        warnings=tuple(warnings),
    )


def vpc_zones(region_zones: RegionZones, count: int, zone_ids: Sequence[str]) -> VpcZones:
    """The pinned zones, or, without pins, the chosen ones with a warning that says how to pin them."""
    if zone_ids:
        return pinned_zones(region_zones, zone_ids)
    chosen = choose_zones(region_zones, count)
    return VpcZones(
        names=chosen.names,
        zone_ids=chosen.zone_ids,
        pinned=False,
        warnings=(
            f"the VPC's zones are not pinned: chose {', '.join(chosen.zone_ids)} ({', '.join(chosen.names)}). "
            "Pin them before anything depends on them, so that a zone leaving the region's list never "
            "re-addresses the subnets: `make up` does it for a stack of this project, or, in one write of the "
            "whole list, pulumi config set-all --path "
            + " ".join(
                f"--plaintext 'eks-autoscaling:network.zoneIds[{index}]={zone_id}'"
                for index, zone_id in enumerate(chosen.zone_ids)
            )
            + "; a program that uses the component sets its input network.zoneIds to them",
        ),
    )


def region_zones_from(
    region: str,
    names: Sequence[str],
    zone_ids: Sequence[str],
    available_ids: Iterable[str],
    offerings: Iterable[tuple[str, str]],
    instance_types: Sequence[str],
) -> RegionZones:
    """RegionZones from look-up results: the zones' names and IDs (parallel), the IDs of those
    `available`, and (zone ID, instance type) offerings."""
    available = set(available_ids)
    offered: dict[str, set[str]] = {}
    for zone_id, instance_type in offerings:
        offered.setdefault(zone_id, set()).add(instance_type)
    return RegionZones(
        region=region,
        zones=tuple(
            Zone(name, zone_id, zone_id in available, frozenset(offered.get(zone_id, ())))
            for name, zone_id in zip(names, zone_ids, strict=True)
        ),
        instance_types=tuple(instance_types),
    )
