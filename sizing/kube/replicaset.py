"""Which pods a ReplicaSet deletes when it scales in (Kubernetes' `getPodsToDelete`).

kubernetes/kubernetes `pkg/controller/replicaset/replica_set.go` ranks the pods to delete with
`ActivePodsWithRanks` (`pkg/controller/controller_utils.go`): unassigned before assigned,
pending before running, not ready before ready, lower `controller.kubernetes.io/pod-deletion-cost`
first, then pods on nodes that hold more pods of the same ReplicaSet first (each pod's rank is
the count on its node before any deletion), then the more recently ready and the newer. The ranks
are taken once per scale-in step, so a step empties the most crowded node before it touches the
next.

Here every pod is assigned, running and ready, with no deletion cost, and the pods of one node are
as old as the node: ties of the count on a node go to the newer node (then the name, descending).
Kubernetes compares ages on a logarithmic scale (`LogarithmicScaleDown`), so pods of close age tie
there and fall to the pod's UID; that is approximated by the node's age.
"""

from __future__ import annotations

from collections.abc import Iterable

from sizing.errors import SizingInputError


def pods_to_delete(nodes: Iterable[tuple[str, int, int]], count: int) -> dict[str, int]:
    """Node name -> pods to delete there, for `count` pods of one workload.

    nodes: (node name, creation time in seconds, pods of the workload on it) per node.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise SizingInputError(f"pods to delete must be a whole number >= 0, got {count!r}")
    ranked = sorted(
        ((name, created, pods) for name, created, pods in nodes if pods > 0),
        key=lambda entry: (-entry[2], -entry[1], tuple(-ord(c) for c in entry[0])),
    )
    taken: dict[str, int] = {}
    left = count
    for name, _, pods in ranked:
        if left <= 0:
            break
        take = min(pods, left)
        taken[name] = take
        left -= take
    return taken
