"""Bin-packing problems with a known optimum, for tests of the solver."""

import numpy as np

from sizing.binpack.model import BinType, ItemType, Problem


def triplets(bins: int, seed: int) -> Problem:
    """Items of 250 to 500 in bins of 1000, made as `bins` triplets that fill a bin exactly: the
    optimum is `bins`, and first-fit decreasing needs about a fifth more."""
    rng = np.random.default_rng(seed)
    sizes = []
    for _ in range(bins):
        a = int(rng.integers(380, 491))
        b = int(rng.integers(250, 1000 - a - 250 + 1))
        sizes += [a, b, 1000 - a - b]
    return Problem(
        (BinType("bin", {"cpu": 1000}, 1.0),),
        tuple(ItemType(f"i{k}", {"cpu": s}, 1) for k, s in enumerate(sizes)),
    )
