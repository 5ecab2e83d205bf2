"""Time the pure pooling and duplicate-detection functions at campaign size (no database).

Pooling workload: 84 runs × 50 topics × 1000 lines, with realistic quirks (ranks from 0, scores rounded so they
tie, documents shared between runs). The pooling service should build a pool, including reading the rows from
PostgreSQL, in under 5 s at depth 5 and at depth 100, so this pure part should stay well under that. Rows are
shuffled, because a query without ORDER BY makes no promise about row order.

Duplicates workload: 100,000 documents of 100 words with 1% planted near-duplicates.

    cd /work/main && .venv/bin/python -m bench.pooling_pure

The script prints figures and asserts nothing. Each figure is the best of REPEATS runs, as wall-clock time and as
this process's CPU time (the fairer figure on a shared machine).
"""

import random
import time

from assessments.metrics.duplicates import exact_groups, near_duplicate_groups
from assessments.metrics.pooling import depth_pool, next_documents, pool_cost, rbp_pool, unique_contributions

RUNS, TOPICS, LINES = 84, 50, 1000
CANDIDATES = 4000  # documents per topic that the runs draw from
REPEATS = 3


def make_topics(rng: random.Random) -> dict[str, dict[str, list[tuple[str, int, float]]]]:
    """topic -> run -> entries. Runs favour the same "good" documents, so pools overlap as real ones do."""
    topics = {}
    for t in range(TOPICS):
        candidates = [f"S{rng.getrandbits(32):08x}-A{rng.getrandbits(28):07x}" for _ in range(CANDIDATES)]
        quality = [rng.random() for _ in candidates]
        runs = {}
        for r in range(RUNS):
            noisy = sorted(range(CANDIDATES), key=lambda i: quality[i] + rng.random(), reverse=True)[:LINES]
            entries = [(candidates[i], rank, round(10 - rank / 100, 1)) for rank, i in enumerate(noisy)]
            rng.shuffle(entries)
            runs[f"team{r // 4:02d}-run{r % 4}"] = entries
        topics[str(51 + t)] = runs
    return topics


class Timing(float):
    """Best wall-clock seconds, printed together with the CPU seconds of the same run."""

    cpu: float

    def __format__(self, spec: str) -> str:
        return f"{format(float(self), spec)} s wall, {format(self.cpu, spec)} s CPU"


def best_of(function) -> tuple[Timing, object]:
    best, result = None, None
    for _ in range(REPEATS):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        timing = Timing(time.perf_counter() - wall)
        timing.cpu = time.process_time() - cpu
        if best is None or timing < best:
            best = timing
    return best, result


def main() -> None:
    rng = random.Random(2024)
    topics = make_topics(rng)
    print(f"pooling: {RUNS} runs × {TOPICS} topics × {LINES} lines, rows shuffled")
    for depth in (5, 100):
        seconds, pools = best_of(lambda depth=depth: {topic: depth_pool(runs, depth=depth) for topic, runs in topics.items()})
        size = sum(len(pool) for pool in pools.values())
        print(f"  depth_pool depth={depth:<3} both orders   {seconds:5.2f}   {size:,} documents pooled")
        seconds, _ = best_of(lambda pools=pools: {topic: unique_contributions(pool) for topic, pool in pools.items()})
        print(f"  unique_contributions over it     {seconds:5.2f}")
    seconds, _ = best_of(lambda: pool_cost(topics, strategy="depth", depth=5, orders=("score",)))
    print(f"  pool_cost depth=5 score only      {seconds:5.2f}")
    seconds, _ = best_of(lambda: {topic: rbp_pool(runs, budget=200) for topic, runs in topics.items()})
    print(f"  rbp_pool budget=200               {seconds:5.2f}")
    runs = topics["51"]
    judged = {doc: i % 3 - 1 for i, doc in enumerate(depth_pool(runs, depth=5, orders=("score",)))}
    print(f"  next_documents, one topic, {len(judged)} judged, n=20, depth 100:")
    for strategy in ("maxmean", "mtf"):
        seconds, _ = best_of(lambda strategy=strategy: next_documents(runs, judged, n=20, seed=1, strategy=strategy, depth=100))
        print(f"    {strategy:<7}                       {seconds:5.3f}")

    vocab = [f"w{i}" for i in range(20_000)]
    docs = {f"doc{i:06d}": " ".join(rng.choices(vocab, k=100)) for i in range(100_000)}
    for i in range(1000):
        words = docs[f"doc{i:06d}"].split()
        words[rng.randrange(100)] = "changed"
        docs[f"near{i:04d}"] = " ".join(words)
    print(f"duplicates: {len(docs):,} documents of 100 words")
    seconds, groups = best_of(lambda: exact_groups(docs))
    print(f"  exact_groups                      {seconds:5.2f}   {len(groups)} groups")
    seconds, groups = best_of(lambda: near_duplicate_groups(docs))
    print(f"  near_duplicate_groups             {seconds:5.2f}   {len(groups)} groups")


if __name__ == "__main__":
    main()
