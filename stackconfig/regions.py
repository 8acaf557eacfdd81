"""AWS regions as botocore knows them: its bundled partition data, read offline."""

from __future__ import annotations

import difflib
import functools

import botocore.session


@functools.lru_cache(maxsize=1)
def known_regions() -> frozenset[str]:
    """Every region of every partition (aws, aws-cn, aws-us-gov, the isolated ones) in the
    partition data of the installed botocore; the `<partition>-global` pseudo-regions left out."""
    partitions = botocore.session.get_session().get_data("partitions")["partitions"]
    return frozenset(
        region for partition in partitions for region in partition["regions"] if not region.endswith("-global")
    )


def check_region(value: str) -> str:
    regions = known_regions()
    if value in regions:
        return value
    close = difflib.get_close_matches(value, sorted(regions), n=3, cutoff=0.75)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ValueError(
        f"{value!r} is not an AWS region; such as us-east-1, eu-west-1 or ap-northeast-1{hint} "
        f"(the regions botocore {botocore.__version__} knows: {', '.join(sorted(regions))})"
    )
