"""Time evaluate_run on a campaign-sized workload held in memory (no database).

The workload is 84 runs × 50 topics × 1000 lines, scored by nDCG@5 against two label sets (relevance and
quality) judged to pool depth 5. The whole evaluation, including reading the rows from PostgreSQL, should
take under 5 s, so this pure part should stay well under 2 s. It is timed twice: once with each topic's
rows in rank order (file order) and once with them shuffled, because a query without ORDER BY makes no
promise about row order.

    cd /work/main && .venv/bin/python -m bench.evaluate
"""

import random
import time

from assessments.metrics.evaluation import evaluate_run, order_run

RUNS, TOPICS, LINES, POOL_DEPTH, K = 84, 50, 1000, 5, 5
CANDIDATES = 2000  # documents per topic that the runs draw from
REPEATS = 3

Run = dict[int, list[tuple[str, int, float]]]


def make_runs(rng: random.Random) -> dict[str, Run]:
    candidates = [
        [f"clueweb12-{t:04d}wb-{i // 100:02d}-{i:05d}" for i in range(CANDIDATES)] for t in range(TOPICS)
    ]
    ranks = list(range(LINES))  # shared int objects keep the 4.2M entries near 400 MB
    runs = {}
    for r in range(RUNS):
        run: Run = {}
        for topic, docs in enumerate(candidates):
            # Low indices are the "good" documents, which every run tends to rank high, with noise. The pools
            # therefore overlap the way real ones do.
            picked = rng.sample(range(CANDIDATES), LINES)
            picked.sort(key=lambda i: i * rng.uniform(0.5, 1.5))
            # One decimal gives hundreds of tied scores per topic, as real runs have.
            scores = sorted((round(rng.gauss(10, 3), 1) for _ in ranks), reverse=True)
            run[topic] = [(docs[i], rank, score) for i, rank, score in zip(picked, ranks, scores)]
        runs[f"team{r // 4:02d}-run{r % 4}"] = run
    return runs


def make_qrels(runs: dict[str, Run], rng: random.Random) -> tuple[dict, dict]:
    relevance: dict[int, dict[str, int]] = {}
    quality: dict[int, dict[str, int]] = {}
    for run in runs.values():
        for topic, entries in run.items():
            for doc in order_run(entries, depth=POOL_DEPTH):
                if doc not in relevance.setdefault(topic, {}):
                    relevance[topic][doc] = rng.choices((0, 1, 2), weights=(5, 3, 2))[0]
                    quality.setdefault(topic, {})[doc] = rng.choice((0, 1, 2))
    return relevance, quality


def time_all(runs: dict[str, Run], label_sets: tuple[dict, dict]) -> list[float]:
    timings = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for name, run in runs.items():
            for qrels in label_sets:
                evaluate_run(run, qrels, measure=f"nDCG@{K}", name=name)
        timings.append(time.perf_counter() - start)
    return timings


def main() -> None:
    rng = random.Random(2020)
    start = time.perf_counter()
    runs = make_runs(rng)
    label_sets = make_qrels(runs, rng)
    judged = sum(len(docs) for docs in label_sets[0].values())
    print(
        f"workload: {RUNS} runs × {TOPICS} topics × {LINES} lines = {RUNS * TOPICS * LINES:,} entries; "
        f"2 label sets, {judged:,} judged documents each ({judged / TOPICS:.0f} per topic, pool depth "
        f"{POOL_DEPTH}); generated in {time.perf_counter() - start:.1f} s"
    )
    evaluations = len(runs) * len(label_sets)
    for layout in ("rank order", "shuffled"):
        if layout == "shuffled":
            for run in runs.values():
                for entries in run.values():
                    rng.shuffle(entries)
        timings = time_all(runs, label_sets)
        print(
            f"evaluate_run nDCG@{K}, rows in {layout}: {evaluations} evaluations in "
            f"best {min(timings):.3f} s (runs: {', '.join(f'{t:.3f}' for t in timings)} s), "
            f"{min(timings) / evaluations * 1000:.2f} ms per run and label set"
        )


if __name__ == "__main__":
    main()
