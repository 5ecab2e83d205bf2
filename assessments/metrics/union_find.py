"""Disjoint sets (union-find), for grouping documents linked by "is a copy of" into their connected groups.

A parent table maps each element to its parent, and a root to itself: a list indexed by element numbers (the
near-duplicate search numbers its documents) or a dict keyed by ids (the pool's grouping of entries). A union
always makes the smaller root the root of both, so a group's root is its smallest member whatever order the
links arrive in: the canonical member duplicate grouping wants. Plain Python, no Django import.
"""

from __future__ import annotations

from collections.abc import MutableMapping, MutableSequence
from typing import TypeVar

T = TypeVar("T")

ParentTable = MutableSequence[T] | MutableMapping[T, T]


def find(parent: ParentTable, x: T) -> T:
    """The root of `x`'s group. Halves the path on the way (each element visited skips to its grandparent), so a
    chain of links stays short however the unions came."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def union(parent: ParentTable, x: T, y: T) -> None:
    """Merge the groups of `x` and `y` (nothing happens when they are one group already); the smaller root wins."""
    rx, ry = find(parent, x), find(parent, y)
    if rx != ry:
        parent[max(rx, ry)] = min(rx, ry)
