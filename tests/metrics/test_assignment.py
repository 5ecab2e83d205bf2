"""Known-answer tests for assessments.metrics.assignment: LPT workload balancing and the overlap slice.

The balancing answers come from Graham (1969) (his instance on which LPT is as bad as it can be), from
worked examples done by hand in the comments, and from an exhaustive search for the optimum, never from the
module's own output.
"""

import itertools
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from assessments.metrics.assignment import balance_workload, overlap_sample, overlap_size

REPO = Path(__file__).resolve().parents[2]


def test_it_gives_the_biggest_topic_to_the_least_loaded_assessor():
    # By hand: 10 → ann (0, 0: ann listed first); 8 → ben (0); 5 → ben (8 < 10) = 13; 4 → ann (10 < 13) = 14;
    # 3 → ben (13 < 14) = 16.
    balance = balance_workload({"t1": 5, "t2": 10, "t3": 3, "t4": 8, "t5": 4}, ["ann", "ben"])

    assert balance.owner == {"t2": "ann", "t4": "ben", "t1": "ben", "t5": "ann", "t3": "ben"}
    assert balance.load == {"ann": 14, "ben": 16}


@pytest.mark.parametrize("m", [2, 3, 4, 5])
def test_it_reaches_grahams_bound_on_his_worst_case_instance(m):
    """Graham (1969): jobs 2m−1, 2m−1, 2m−2, 2m−2, …, m+1, m+1, m, m, m on m machines. LPT's largest load is
    4m − 1 while the optimum is 3m, which is the bound (4/3 − 1/(3m)) · OPT reached exactly."""
    sizes = [size for size in range(2 * m - 1, m, -1) for _ in range(2)] + [m, m, m]
    workload = {f"topic{i}": size for i, size in enumerate(sizes)}

    balance = balance_workload(workload, [f"a{i}" for i in range(m)])

    assert max(balance.load.values()) == 4 * m - 1
    assert sum(balance.load.values()) == sum(sizes)


def optimum(sizes, m):
    """The smallest possible largest load, by trying every way of placing the jobs on m machines."""
    best = float("inf")
    for placement in itertools.product(range(m), repeat=len(sizes)):
        loads = [0] * m
        for size, machine in zip(sizes, placement):
            loads[machine] += size
        best = min(best, max(loads))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_its_largest_load_stays_within_grahams_bound_of_the_optimum(seed):
    rng = random.Random(seed)
    m = rng.choice([2, 3])
    sizes = [rng.randint(1, 60) for _ in range(rng.randint(m + 1, 8))]

    balance = balance_workload(dict(enumerate(sizes)), list(range(m)))

    assert max(balance.load.values()) <= (4 / 3 - 1 / (3 * m)) * optimum(sizes, m) + 1e-9


def test_an_existing_load_counts_so_a_second_batch_evens_out_the_totals():
    # ben already has 30 documents from an earlier batch: 20 → ann, 10 → ann (20 < 30) = 30, 5 → ann (30 = 30,
    # ann listed first) = 35.
    balance = balance_workload({"t1": 20, "t2": 10, "t3": 5}, ["ann", "ben"], initial_load={"ben": 30})

    assert balance.owner == {"t1": "ann", "t2": "ann", "t3": "ann"}
    assert balance.load == {"ann": 35, "ben": 30}


def test_an_excluded_assessor_never_gets_the_topic_even_when_least_loaded():
    balance = balance_workload({"t1": 4, "t2": 3}, ["ann", "ben", "cat"], excluded={"t1": {"ann"}, "t2": {"ann", "ben"}})

    assert balance.owner == {"t1": "ben", "t2": "cat"}
    assert balance.load["ann"] == 0


def test_equal_topics_keep_their_order_and_equal_assessors_their_order():
    balance = balance_workload({"b": 1, "a": 1, "c": 1}, ["zoe", "yan"])

    assert balance.owner == {"b": "zoe", "a": "yan", "c": "zoe"}


@pytest.mark.parametrize(
    "workload, assessors, initial, excluded, message",
    [
        ({"t1": 1}, [], None, None, "no assessors"),
        ({"t1": 1}, ["ann", "ann"], None, None, "more than once"),
        ({"t1": -3}, ["ann"], None, None, "negative workload for 't1'"),
        ({"t1": 1}, ["ann"], None, {"t1": ["ann"]}, "every assessor is excluded from 't1'"),
    ],
)
def test_it_refuses_what_it_cannot_schedule(workload, assessors, initial, excluded, message):
    with pytest.raises(ValueError, match=message):
        balance_workload(workload, assessors, initial_load=initial, excluded=excluded)


@pytest.mark.parametrize(
    "n, share, expected",
    [
        (40, 0.05, 2),  # exactly 5 %
        (10, 0.05, 1),  # 0.5 rounds up: every topic gets at least one shared document
        (100, 0.07, 7),  # 0.07 · 100 is 7.000000000000001 in floating point, and must not round up to 8
        (3, 1.0, 3),
        (0, 0.05, 0),
        (50, 0.0, 0),
    ],
)
def test_the_overlap_is_the_share_rounded_up(n, share, expected):
    assert overlap_size(n, share) == expected


def test_an_overlap_share_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        overlap_size(10, 1.5)


def test_the_overlap_draw_repeats_with_its_seed_and_keeps_the_queue_order():
    entries = [f"e{i}" for i in range(200)]

    first = overlap_sample(entries, share=0.05, seed="overlap/17/3")
    again = overlap_sample(entries, share=0.05, seed="overlap/17/3")
    other = overlap_sample(entries, share=0.05, seed="overlap/18/3")

    assert first == again
    assert len(first) == 10 and set(first) <= set(entries)
    assert first == sorted(first, key=entries.index)
    assert other != first


def test_the_same_seed_gives_the_same_draw_in_another_process():
    """Python's hash() of a string changes between processes; the draw must not."""
    code = (
        "from assessments.metrics.assignment import overlap_sample\n"
        "print(overlap_sample(list(range(100)), share=0.1, seed='overlap/5/12'))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": str(hash_seed), "PATH": ""},
        ).stdout
        for hash_seed in (1, 2)
    }

    assert len(runs) == 1
    assert runs.pop().strip() == str(overlap_sample(list(range(100)), share=0.1, seed="overlap/5/12"))


def test_every_entry_is_equally_likely_to_be_drawn():
    """Over 2,000 seeds each of 20 entries is drawn about 2,000 · 5/20 = 500 times (binomial sd ≈ 19)."""
    counts = Counter(e for seed in range(2000) for e in overlap_sample(list(range(20)), share=0.25, seed=str(seed)))

    assert set(counts) == set(range(20))
    assert all(400 < n < 600 for n in counts.values())


def test_the_module_imports_without_django():
    code = "import sys, assessments.metrics.assignment; print('django' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "False"
