"""AWS regions as botocore knows them: its bundled partition data, read offline (`sizing.karpenter.regions`)."""

from __future__ import annotations

from sizing.karpenter.regions import known_regions, region_problem

__all__ = ["check_region", "known_regions"]


def check_region(value: str) -> str:
    problem = region_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value
