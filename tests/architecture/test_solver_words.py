"""The solver layer explains itself in its own terms: bins of several types, items, dimensions.

`sizing/binpack/` knows nothing of Kubernetes in its imports (test_layers.py) and says nothing of
it in its prose either: a module that explains a technique with NodePools, instance types or
Karpenter reads as if it held Kubernetes logic, and a reader of the solver alone cannot follow it.
"""

from __future__ import annotations

import re

import pytest

from tests.architecture.imports import REPO_ROOT

BINPACK = REPO_ROOT / "sizing" / "binpack"
# Words of the layers above: none belongs anywhere in the solver's code or prose.
FOREIGN = re.compile(r"NodePool|instance[ -]types?\b|Kubernetes|Karpenter|DaemonSet|\bEC2\b", re.IGNORECASE)
# Merging two bins onto one is the solver's own technique: pods and nodes are no words of it.
MERGING_FOREIGN = re.compile(r"\b(pods?|nodes?)\b", re.IGNORECASE)


def _lines(path, pattern):
    return [
        f"{path.name}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


@pytest.mark.parametrize("path", sorted(BINPACK.glob("*.py")), ids=lambda path: path.name)
def test_solver_modules_name_nothing_of_the_layers_above(path):
    assert _lines(path, FOREIGN) == []


def test_merging_speaks_of_bins_items_and_types():
    merging = BINPACK / "merging.py"
    assert _lines(merging, MERGING_FOREIGN) == []
    text = merging.read_text(encoding="utf-8")
    assert "bin types" in text and "items" in text
