"""Shared handling of line-oriented files (runs, qrels)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain


def without_bom(lines: Iterable[str]) -> Iterator[str]:
    """Drop a UTF-8 byte-order mark (files saved by Windows editors) that would glue onto the first topic.

    Only the first line is touched, so the per-line cost stays that of the underlying iterator.
    """
    lines = iter(lines)
    first = next(lines, None)
    if first is None:
        return lines
    return chain((first.lstrip("\ufeff"),), lines)
