"""Identical pods handed out fewest-pods-first, in bulk.

Karpenter gives each pod to the in-flight NodeClaim holding the fewest pods (then the oldest)
among those with room for it. For a run of identical pods the outcome is a count per NodeClaim,
and while one claim stays first it takes the next pods too, so the counts come from a few heap
steps instead of one per pod.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def fewest_first(claims: Sequence[tuple[int, int, int]], pods: int) -> dict[int, int]:
    """How many of `pods` identical pods each claim takes, one pod at a time to the claim with the
    fewest pods (then the lowest index) that has room left.

    claims: (pods held, index, room in pods) per claim, indices distinct; returns the pods taken
    by index, claims that take none left out. Raises ValueError when the rooms hold fewer than
    `pods` together.
    """
    if pods < 0:
        raise ValueError(f"pods must be >= 0, got {pods}")
    heap = [[held, index, room] for held, index, room in claims if room > 0]
    if sum(entry[2] for entry in heap) < pods:
        raise ValueError(f"{pods} pods do not fit in the claims' room")
    heapq.heapify(heap)
    taken: dict[int, int] = {}
    left = pods
    while left > 0:
        head = heap[0]
        take = min(left, head[2])
        if len(heap) > 1:
            runner_up = heap[1] if len(heap) == 2 else min(heap[1], heap[2])
            # The head stays first while (held, index) sorts before the runner-up's.
            lead = runner_up[0] - head[0] + (1 if head[1] < runner_up[1] else 0)
            take = min(take, max(lead, 1))
        taken[head[1]] = taken.get(head[1], 0) + take
        left -= take
        head[0] += take
        head[2] -= take
        if head[2] == 0:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, head)
    return taken
