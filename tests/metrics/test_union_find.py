"""Union-find: groups are the connected components of the links, and a group's root is its smallest member.

Components are checked against SciPy's connected_components on the same links (an independent implementation).
"""

import random

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from assessments.metrics.union_find import find, union


def scipy_groups(n: int, links: list[tuple[int, int]]) -> set[frozenset[int]]:
    rows, cols = zip(*links) if links else ((), ())
    graph = coo_matrix((np.ones(len(links)), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    groups: dict[int, set[int]] = {}
    for element, label in enumerate(labels):
        groups.setdefault(label, set()).add(element)
    return {frozenset(group) for group in groups.values()}


def our_groups(parent) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for element in range(len(parent)):
        groups.setdefault(find(parent, element), set()).add(element)
    return {frozenset(group) for group in groups.values()}


@pytest.mark.parametrize("seed", range(20))
def test_groups_are_the_connected_components_of_the_links(seed):
    rng = random.Random(seed)
    n = rng.randrange(1, 60)
    links = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randrange(0, 2 * n))]
    parent = list(range(n))
    for a, b in links:
        union(parent, a, b)

    assert our_groups(parent) == scipy_groups(n, links)
    # The root of every group is its smallest member, whatever the order of the links.
    for group in our_groups(parent):
        assert {find(parent, element) for element in group} == {min(group)}


def test_a_chain_linked_from_its_far_end_still_roots_at_its_smallest_member():
    parent = list(range(6))
    for a, b in [(4, 5), (3, 4), (2, 3), (1, 2), (0, 1)]:
        union(parent, b, a)

    assert [find(parent, x) for x in range(6)] == [0] * 6


def test_ids_in_a_dict_work_like_numbers_in_a_list():
    parent = {doc: doc for doc in ("b", "a", "d", "c", "e")}
    union(parent, "d", "b")
    union(parent, "c", "d")
    union(parent, "e", "e")  # a link to itself changes nothing

    assert {doc: find(parent, doc) for doc in parent} == {"a": "a", "b": "b", "c": "b", "d": "b", "e": "e"}


def test_finding_halves_long_paths():
    parent = [0, 0, 1, 2, 3, 4, 5, 6, 7]  # a chain 8 -> 7 -> … -> 0, as unions can leave it

    assert find(parent, 8) == 0
    # Every other element on the path (8, 6, 4, 2) now points at its old grandparent: the path is half as long.
    assert parent == [0, 0, 0, 2, 2, 4, 4, 6, 6]
