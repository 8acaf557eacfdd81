"""Bin-packing problems with a known optimum, for tests of the solver."""

import numpy as np

from sizing.binpack.colgen import GenerationResult, column_generation
from sizing.binpack.ffd import first_fit_decreasing
from sizing.binpack.instance import Instance
from sizing.binpack.master_lp import ColumnPool, MasterLP
from sizing.binpack.model import BinType, ItemType, Problem
from sizing.binpack.packing import Packing
from sizing.binpack.pricers import TablePricer


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


def converged_root(instance: Instance) -> tuple[Packing, MasterLP, TablePricer, GenerationResult]:
    """For items sized in one dimension and one bin type: the first-fit decreasing packing, and the
    master LP over its bins grown by column generation to convergence (exact pricing by table).
    Run it under a work clock of the caller's."""
    start = first_fit_decreasing(instance)
    assert start is not None
    pool = ColumnPool(instance.shape_count)
    for (t, counts), _ in start.bins:
        pool.add(t, counts)
    master_lp = MasterLP(instance, pool, exchanges=False)
    pricer = TablePricer(instance)
    root = column_generation(instance, master_lp, pricer, instance.demand, np.array([-1]), 10**6, 500)
    assert root.converged and root.master is not None
    return start, master_lp, pricer, root
