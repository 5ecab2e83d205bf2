"""Disjoint sets (union-find), for grouping documents linked by "is a copy of" into their connected groups.

A parent table maps each element to its parent, and a root to itself: a list indexed by element numbers (the
near-duplicate search numbers its documents) or a dict keyed by ids (the pool's grouping of entries). A union
always makes the smaller root the root of both, so a group's root is its smallest member whatever order the
links arrive in: the canonical member duplicate grouping wants. Plain Python, no Django import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

# Elements are compared: a union keeps the smaller root.
T = TypeVar("T", bound="SupportsRichComparison")


class ParentTable(Protocol[T]):
    """What both a list (indexed by element numbers) and a dict (keyed by ids) offer as a parent table."""

    def __getitem__(self, x: T, /) -> T: ...

    def __setitem__(self, x: T, parent: T, /) -> None: ...


def find(parent: ParentTable[T], x: T) -> T:
    """The root of `x`'s group. Halves the path on the way (each element visited skips to its grandparent), so a
    chain of links stays short however the unions came."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def union(parent: ParentTable[T], x: T, y: T) -> None:
    """Merge the groups of `x` and `y` (nothing happens when they are one group already); the smaller root wins."""
    rx, ry = find(parent, x), find(parent, y)
    if rx != ry:
        parent[max(rx, ry)] = min(rx, ry)
