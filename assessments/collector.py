"""Pausing CPython's cyclic garbage collector around bulk work that allocates millions of acyclic objects.

Pooling and imports build one tuple or list per contribution, line or row, and none of them form reference cycles.
While such work holds millions of objects, the allocations keep triggering full collections, which re-scan
everything alive: two thirds of the time at depth 100 in bench/pooling_pure.py, and more than a second of a
depth-100 build in bench/pooling.py. Pausing the collector loses nothing, because reference counting frees it all.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
