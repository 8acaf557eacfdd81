"""Reading the `.vbp` vector bin packing format (VPSolver) into a `Problem`.

Whitespace-separated integers: the number of dimensions d; the d bin
capacities; the number m of item types; then m lines of d sizes followed by
the number of items of that type. There is one bin type, named "bin", of cost
1 and unlimited count; dimensions are named "d0", "d1", ...; item types "i0",
"i1", ... in file order.
"""

from __future__ import annotations

from typing import List, Optional

from sizing.errors import SizingInputError
from sizing.binpack.model import BinType, ItemType, Problem


def parse_vbp(text: str, time_limit_seconds: Optional[float] = None, source: str = "vbp input") -> Problem:
    """The problem in `text`; SizingInputError naming the position of anything malformed."""
    tokens = text.split()
    position = 0

    def next_int(what: str, minimum: int) -> int:
        nonlocal position
        if position >= len(tokens):
            raise SizingInputError(f"{source}: ends before {what}")
        token = tokens[position]
        position += 1
        try:
            value = int(token)
        except ValueError:
            raise SizingInputError(f"{source}: {what} must be an integer, got {token!r}") from None
        if value < minimum:
            raise SizingInputError(f"{source}: {what} must be at least {minimum}, got {value}")
        return value

    dimensions = next_int("the number of dimensions", 1)
    names = [f"d{k}" for k in range(dimensions)]
    capacity = {name: next_int(f"the capacity in dimension {k}", 1) for k, name in enumerate(names)}
    item_types = next_int("the number of item types", 0)
    items: List[ItemType] = []
    for index in range(item_types):
        size = {name: next_int(f"item type {index}: size in dimension {k}", 0) for k, name in enumerate(names)}
        count = next_int(f"item type {index}: count", 0)
        items.append(ItemType(f"i{index}", size, count))
    if position != len(tokens):
        raise SizingInputError(f"{source}: unexpected text after the last item type: {tokens[position]!r}")
    return Problem((BinType("bin", capacity, 1.0, None),), tuple(items), time_limit_seconds)
