"""Intervals and paired tests for Touché Task 3's precision@10 measures, as the leaderboard of text runs has them:
each run's percentile-bootstrap interval over its own topics agrees with SciPy's bootstrap, and "≈ best" is the
set of runs that SciPy's paired t-test on the topics both runs have, Holm-corrected by statsmodels over all pairs,
does not tell from the best, on the command line, the API and the results page."""

import json
import random

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats
from statsmodels.stats.multitest import multipletests

from accounts.models import User
from assessments.formats.image_runs import write_image_run
from assessments.metrics.image_precision import MEASURES
from assessments.models import Campaign, Membership

pytestmark = pytest.mark.django_db
TOPICS = [str(n) for n in range(1, 15)]


def image_id(n: int) -> str:
    return f"I{n:016x}"


@pytest.fixture
def five_runs(db, command, tmp_path):
    """14 topics, 30 images each with the lab's three answers, and five runs of increasing quality; the worst
    leaves two topics out, so pairs are tested on the topics they share."""
    rng = random.Random(5)
    (tmp_path / "topics.tsv").write_text("".join(f"{t}\tTopic {t}\n" for t in TOPICS))
    assert command("create_campaign", "img", "--name", "Images", "--preset", "touche-2023-task3").code == 0
    assert command("import_topics", "img", tmp_path / "topics.tsv").code == 0
    qrels, good = [], {}
    for t in TOPICS:
        for n in range(30):
            image = image_id(int(t) * 100 + n)
            on_topic = int(n < 18)
            sides = {"PRO": int(on_topic and n % 3 != 0), "CON": int(on_topic and n % 3 != 1)}
            qrels += [f"{t} ONTOPIC {image} {on_topic}\n"] + [f"{t} {q} {image} {v}\n" for q, v in sides.items()]
            good.setdefault(t, []).append((on_topic + sides["PRO"] + sides["CON"], image))
    (tmp_path / "answers.qrels").write_text("".join(qrels))
    assert command("import_qrels", "img", tmp_path / "answers.qrels", "--assessor", "touche23").code == 0
    paths = []
    for quality, tag in enumerate(("worst", "poor", "fair", "good", "best")):
        rows = []
        for t in TOPICS if tag != "worst" else TOPICS[:-2]:
            ranked = sorted(good[t], key=lambda g: (-g[0] * quality + rng.random() * 6, g[1]))
            for stance in ("PRO", "CON"):
                picked = ranked[:10] if stance == "PRO" else ranked[10:20]
                rows += [(t, stance, image, rank, 100.0 - rank) for rank, (_, image) in enumerate(picked, 1)]
        path = tmp_path / f"{tag}.txt"
        path.write_text(write_image_run(rows, tag=tag))
        paths.append(path)
    done = command("import_runs", "img", *paths)
    assert done.code == 0, done.err
    return Campaign.objects.get(slug="img")


def rows_of(command, *args):
    done = command("evaluate_runs", "img", "--format", "json", *args)  # the majority: touche23's answers, the only ones
    assert done.code == 0, done.err
    return json.loads(done.out)


def test_intervals_agree_with_scipys_percentile_bootstrap_over_each_runs_topics(five_runs, command):
    rows = rows_of(command, "--ci", "0.95")
    assert len(rows) == 15
    assert {len(r["per_topic"]) for r in rows} == {12, 14}
    for row in rows:
        scores = np.array(list(row["per_topic"].values()))
        theirs = stats.bootstrap((scores,), np.mean, method="percentile", n_resamples=10_000, confidence_level=0.95,
                                 random_state=np.random.default_rng(1)).confidence_interval
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        assert row["ci_low"] == pytest.approx(theirs.low, abs=0.012), (row["run"], row["measure"])
        assert row["ci_high"] == pytest.approx(theirs.high, abs=0.012), (row["run"], row["measure"])
        assert (row["ci_level"], row["ci_seed"], row["ci_resamples"]) == (0.95, 2020, 10_000)
    assert len({(r["ci_low"], r["ci_high"]) for r in rows}) > 5  # not one interval for everything
    assert rows_of(command, "--ci", "0.95") == rows  # seeded: the same table again
    assert "ci_low" not in rows_of(command)[0]
    refused = command("evaluate_runs", "img", "--ci", "95")
    assert refused.code != 0 and "between 0 and 1" in refused.err


def reference_group(rows: list[dict], measure: str) -> set[str]:
    """The runs no paired t-test (SciPy) on their common topics, Holm over all pairs (statsmodels), tells from the
    run with the best mean."""
    per_topic = {r["run"]: r["per_topic"] for r in rows if r["measure"] == measure}
    means = {r["run"]: r["mean"] for r in rows if r["measure"] == measure}
    runs = sorted(per_topic)
    pairs, p_values = [], []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            common = sorted(set(per_topic[a]) & set(per_topic[b]))
            x = np.array([per_topic[a][t] for t in common])
            y = np.array([per_topic[b][t] for t in common])
            differences = x - y
            if np.all(differences == differences[0]):  # where ttest_rel has no answer: none, or a certain one
                p = 1.0 if differences[0] == 0 else 0.0
            else:
                p = stats.ttest_rel(x, y).pvalue
            pairs.append((a, b))
            p_values.append(p)
    reject = multipletests(p_values, alpha=0.05, method="holm")[0]
    best = max(runs, key=lambda run: means[run])
    beaten = {b if a == best else a for (a, b), r in zip(pairs, reject) if r and best in (a, b)}
    return set(runs) - beaten


def test_the_group_with_the_best_is_scipys_t_test_with_holm_for_each_measure(five_runs, command):
    rows = rows_of(command, "--test", "t")
    for measure in MEASURES:
        group = {r["run"] for r in rows if r["measure"] == measure and r["top_group"]}
        expected = reference_group(rows, measure)
        assert group == expected, measure
        assert "best" in group and "worst" not in group  # the test tells some runs apart: it is not trivially all
    table = command("evaluate_runs", "img", "--test", "t", "--ci", "0.9").out
    assert "90% interval" in table and "= not significantly different from the best run" in table
    best_line = next(line for line in table.splitlines() if line.startswith("best "))
    assert "=" in best_line and "[" in best_line


def test_the_results_page_and_api_show_the_intervals_and_the_group(five_runs, command, client):
    olivia = User.objects.create_user("olivia", password="images-olivia-password", role="organiser")
    Membership.objects.create(campaign=five_runs, user=olivia)
    client.force_login(olivia)
    expected = rows_of(command, "--ci", "0.95", "--test", "t")
    answer = client.get(reverse("api-results", args=["img"]), {"ci": "0.95", "test": "t"})
    assert answer.status_code == 200 and answer.json() == expected
    assert client.get(reverse("api-results", args=["img"]), {"ci": "1.5"}).status_code == 400

    page = client.get(reverse("assessments:leaderboard", args=["img"]),
                      {"measure": MEASURES[2]}).content.decode()
    in_group = {r["run"] for r in expected if r["measure"] == MEASURES[2] and r["top_group"]}
    assert page.count("≈ best</span>") == len(in_group)
    best = next(r for r in expected if r["run"] == "best" and r["measure"] == MEASURES[2])
    assert f"[{best['ci_low']:.4f}, {best['ci_high']:.4f}]" in page
    # The table is sorted by the measure chosen: its first row is the best run by it.
    assert page.index('?run=best"') < page.index('?run=worst"')
