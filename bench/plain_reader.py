"""The baseline the bulk benches compare against: plain Python reads the same run files and keeps a depth-k pool
in memory, with no checks, no database and no Django.

It is what any script that pools runs must do at least (split every line, keep each run's top k by rank and by
score per topic, take the union), so "N× the plain reader" says what storing and checking cost on top, on the
same machine in the same run, whatever its speed or load.
"""

import ctypes
import heapq
import multiprocessing
import resource
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path


def read_and_pool(paths: Iterable[Path], *, depth: int) -> tuple[int, int]:
    """Read every line of every file; return (lines, pool entries) of the union of each run's top `depth` by
    rank column and by score (ties by document id descending, as trec_eval), per topic."""
    pools: dict[str, set[str]] = defaultdict(set)
    lines = 0
    for path in paths:
        by_topic: dict[tuple[str, str], list[tuple[int, float, str]]] = defaultdict(list)
        with open(path) as stream:
            for line in stream:
                topic, _, doc, rank, score, tag = line.split()
                by_topic[topic, tag].append((int(rank), float(score), doc))
                lines += 1
        for (topic, _), rows in by_topic.items():
            pool = pools[topic]
            pool.update(doc for _, _, doc in heapq.nsmallest(depth, rows))
            pool.update(doc for _, _, doc in heapq.nlargest(depth, rows, key=lambda row: (row[1], row[2])))
    return lines, sum(map(len, pools.values()))


def timed_baseline(paths: list[Path], *, depth: int, repeats: int = 2) -> tuple[float, int, int]:
    """The fastest of `repeats` runs of read_and_pool: (seconds, lines, entries)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        lines, entries = read_and_pool(paths, depth=depth)
        best = min(best, time.perf_counter() - started)
    return best, lines, entries


def baseline_apart(paths: list[Path], *, depth: int) -> tuple[float, int, int]:
    """read_and_pool once in a forked child process: (seconds, lines, entries). The parent's memory stays as it was,
    so a peak measured after it is the parent's own."""
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        return pool.apply(_timed_once, (paths, depth))


def _timed_once(paths: list[Path], depth: int) -> tuple[float, int, int]:
    started = time.perf_counter()
    lines, entries = read_and_pool(paths, depth=depth)
    return time.perf_counter() - started, lines, entries


def reset_peak() -> None:
    """Start a new peak resident-memory measurement for this process (Linux ≥ 4.0: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def release_free_memory() -> None:
    """Give the memory the C allocator holds free back to the system (glibc's malloc_trim), so a peak measured next
    counts what the measured step holds, not what the setup before it freed without returning."""
    ctypes.CDLL(None).malloc_trim(0)


def resident_mib() -> float:
    """This process's resident memory now (VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mib() -> float:
    """This process's peak resident memory since the last reset_peak (VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
