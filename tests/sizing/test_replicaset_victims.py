"""The pods a ReplicaSet deletes first when it scales in (kubernetes/kubernetes
pkg/controller/replicaset/replica_set.go `getPodsToDelete`, ranked by `ActivePodsWithRanks`)."""

import pytest

from sizing.errors import SizingInputError
from sizing.kube.replicaset import pods_to_delete


def test_the_most_crowded_node_is_emptied_first():
    """Ranked by pods of the set on the same node (counted before any deletion), a step takes whole
    nodes in rank order."""
    nodes = [("a", 0, 3), ("b", 10, 5), ("c", 20, 1)]
    assert pods_to_delete(nodes, 6) == {"b": 5, "a": 1}


def test_ties_go_to_the_newer_node():
    assert pods_to_delete([("old", 0, 2), ("new", 100, 2)], 3) == {"new": 2, "old": 1}


def test_nothing_to_delete_and_more_than_there_is():
    assert pods_to_delete([("a", 0, 2)], 0) == {}
    assert pods_to_delete([("a", 0, 2)], 5) == {"a": 2}


def test_a_negative_count_is_refused():
    with pytest.raises(SizingInputError, match="pods to delete"):
        pods_to_delete([("a", 0, 2)], -1)
