"""AWS regions and availability zones, checked offline.

Regions are those of the partition data bundled with the installed botocore (every partition:
aws, aws-cn, aws-us-gov and the isolated ones). Zones are not in that data; a zone is recognised
by its name, which AWS forms from its region's: the region followed by one letter
(`us-east-1a`), or, for a Local Zone or a Wavelength Zone, the region, a hyphen and the zone's own
suffix (`us-west-2-lax-1a`, `us-east-1-wl1-bos-wlz-1`). A zone of another region, or a name
that starts with no known region, is refused; whether the letter exists in the account is not
known offline (`aws ec2 describe-availability-zones` says).
"""

from __future__ import annotations

import difflib
import functools
import re

import botocore
import botocore.session

from sizing.errors import SizingInputError, echo

_ZONE_SUFFIX = re.compile(r"^([a-z]|-[a-z0-9]+(-[a-z0-9]+)*)$")


@functools.lru_cache(maxsize=1)
def known_regions() -> frozenset[str]:
    """Every region botocore's partition data names, the `<partition>-global` pseudo-regions left out."""
    partitions = botocore.session.get_session().get_data("partitions")["partitions"]
    return frozenset(
        region for partition in partitions for region in partition["regions"] if not region.endswith("-global")
    )


def region_problem(value: object) -> str | None:
    """Why `value` is not an AWS region (None when it is one)."""
    regions = known_regions()
    if isinstance(value, str) and value in regions:
        return None
    close = difflib.get_close_matches(value, sorted(regions), n=3, cutoff=0.75) if isinstance(value, str) else []
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return (
        f"{echo(value)} is not an AWS region; such as us-east-1, eu-west-1 or ap-northeast-1{hint} "
        f"(the regions botocore {botocore.__version__} knows: {', '.join(sorted(regions))})"
    )


def check_region(value: object, where: str) -> str:
    """`value` if it is a known region; SizingInputError naming `where` otherwise."""
    problem = region_problem(value)
    if problem is not None:
        raise SizingInputError(f"{where}: {problem}")
    return str(value)


def zone_region(zone: str) -> str | None:
    """The known region a zone name belongs to (the longest region its name starts with), or None."""
    owners = [
        region for region in known_regions() if zone.startswith(region) and _ZONE_SUFFIX.match(zone[len(region) :])
    ]
    return max(owners, key=len) if owners else None


def check_zone(zone: object, region: str, where: str) -> str:
    """`zone` if it names a zone of `region`; SizingInputError naming `where`, the zone and the rule otherwise."""
    if not isinstance(zone, str) or not zone:
        raise SizingInputError(f"{where}: a zone name is expected, such as {region}a, got {echo(zone)}")
    owner = zone_region(zone)
    if owner == region:
        return zone
    if owner is not None:
        raise SizingInputError(
            f"{where}: {echo(zone)} is a zone of {owner}, not of {region}, the region planned; "
            f"give zones of {region} (such as {region}a), or plan for {owner}"
        )
    if zone in known_regions():
        raise SizingInputError(f"{where}: {echo(zone)} is a region, not a zone; a zone of it is named like {zone}a")
    raise SizingInputError(
        f"{where}: {echo(zone)} is not a zone of {region}: a zone is named after its region followed by a letter "
        f"({region}a, {region}b, ...) or, for a Local Zone, a hyphen and its own name ({region}-xyz-1a)"
    )
