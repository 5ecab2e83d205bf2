"""Time agreement_report at the size of a large training phase: 10 assessors × 10,000 documents.

Run with ``.venv/bin/python bench/agreement.py [n_items] [n_raters]``. The script prints figures and asserts
nothing. Target: every dimension of Touché 2023 Task 1's scheme (two graded 0–2, one category with 4 values:
ordinal and nominal figures as the agreement page computes them) in under a second in total. Every assessor labels every document, which is the worst case: missing labels only make the
count tables sparser.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

# Run as a script, Python puts bench/ rather than the repository on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assessments.labels import PRESETS  # noqa: E402
from assessments.metrics.agreement import agreement_report  # noqa: E402

REPEATS = 5
SCHEME = PRESETS["touche-2023-task1"][1]


def ratings(rng, n_items, n_raters, categories):
    """item -> rater -> label, where each rater copies a hidden true label 60% of the time and guesses otherwise."""
    truth = rng.integers(len(categories), size=n_items)
    guess = rng.integers(len(categories), size=(n_items, n_raters))
    codes = np.where(rng.random((n_items, n_raters)) < 0.6, truth[:, None], guess)
    raters = [f"assessor{r:02d}" for r in range(n_raters)]
    return {
        (f"topic{item // 100}", f"doc{item}"): {rater: categories[c] for rater, c in zip(raters, row)}
        for item, row in enumerate(codes.tolist())
    }


def main(n_items=10_000, n_raters=10):
    rng = np.random.default_rng(0)
    dimensions = {
        d.name: (ratings(rng, n_items, n_raters, SCHEME.values(d.name)), d.ordinal, SCHEME.values(d.name))
        for d in SCHEME.dimensions
    }
    print(f"{n_raters} assessors x {n_items:,} documents, {REPEATS} runs, every assessor labels every document")
    totals = [0.0] * REPEATS
    for name, (data, ordinal, categories) in dimensions.items():
        times = []
        for run in range(REPEATS):
            start = time.perf_counter()
            report = agreement_report(data, ordinal=ordinal, categories=categories)
            times.append(time.perf_counter() - start)
            totals[run] += times[-1]
        print(
            f"  {name:<9} median {statistics.median(times) * 1000:7.1f} ms  best {min(times) * 1000:7.1f} ms"
            f"  ({len(report.cohen)} pairs, alpha={report.alpha:.3f}, fleiss={report.fleiss:.3f})"
        )
    print(f"  all of them median {statistics.median(totals) * 1000:7.1f} ms  best {min(totals) * 1000:7.1f} ms")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:]))
