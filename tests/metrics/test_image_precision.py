"""assessments.metrics.image_precision, checked against the organisers' own Task 3 evaluator.

``submission-evaluator.sh`` (reference-evaluators/2022-task3) runs here with gawk in a subprocess on qrels and runs
generated from a seed, and on the organisers' baseline run over the real sample, and every figure it prints (per
topic, per topic and stance, overall) must equal ours printed as it prints them. The other expected values are worked
by hand. None was copied from this module's output.
"""

import random
import subprocess
import sys
from pathlib import Path

import pytest

from assessments.formats.image_collection import read_image_collection
from assessments.formats.image_qrels import parse_image_qrels, write_image_qrels
from assessments.formats.image_runs import parse_image_run, write_image_run
from assessments.metrics.image_precision import (
    ARGUMENTATIVENESS,
    MEASURES,
    STANCE_RELEVANCE,
    TOPIC_RELEVANCE,
    evaluate_image_run,
    image_qrels_table,
    script_csv,
    script_measures,
)
from tests.task3_scorer import HEADER, organisers_output

BASELINE = Path("reference-evaluators", "2022-task3", "original-rankings-baseline.py")


def image_id(rng: random.Random) -> str:
    return "I" + "".join(rng.choice("0123456789abcdef") for _ in range(16))


def ours(qrels: str, run: str) -> tuple[str, str]:
    report = evaluate_image_run(
        parse_image_run(run.encode(), source="run.txt"),
        image_qrels_table(parse_image_qrels(qrels.encode(), source="qrels.txt")),
    )
    return script_csv(report), script_measures(report)


# ---------------------------------------------------------------------------------------------------------
# Generated qrels and runs


def generated_qrels(rng: random.Random, topics: list[str], pools: dict[str, list[str]]) -> str:
    """Judge about two thirds of each topic's pool; some images on topic for neither stance or both, some off topic
    but marked for a stance (which never counts), and a few with a question left out (which reads as 0)."""
    rows, partial = [], []
    for topic in topics:
        for image in pools[topic]:
            if rng.random() < 0.35:
                continue  # unjudged
            on_topic = int(rng.random() < 0.6)
            pro, con = int(rng.random() < 0.4), int(rng.random() < 0.35)
            if rng.random() < 0.08:
                partial.append(f"{topic} ONTOPIC {image} {on_topic}\n{topic} PRO {image} {pro}\n")
            else:
                rows.append((topic, image, on_topic, pro, con))
    return write_image_qrels(rows) + "".join(partial)


def generated_run(rng: random.Random, topics: list[str], pools: dict[str, list[str]]) -> str:
    """Lists of 0 (a stance left out) to 12 images (ranks 11 and 12 never count), from the topic's pool, another
    topic's pool (judged, but not for this topic) and images nobody judged."""
    others = [image for pool in pools.values() for image in pool]
    rows = []
    for topic in topics:
        for stance in ("PRO", "CON"):
            length = rng.choice([0, 1, 3, 7, 10, 10, 12])
            chosen: list[str] = []
            while len(chosen) < length:
                kind = rng.random()
                image = rng.choice(pools.get(topic) or others) if kind < 0.7 else rng.choice(others) if kind < 0.85 else image_id(rng)
                if image not in chosen:
                    chosen.append(image)
            score = rng.uniform(5, 20)
            for rank, image in enumerate(chosen, 1):
                rows.append((topic, stance, image, rank, round(score, 3)))
                score -= rng.choice([0, 0.5, 1.25])  # ties included
    return write_image_run(rows, tag="generated")


def generated_case(seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    judged = [str(n) for n in rng.sample(range(1, 51), 8)]
    pools = {topic: [image_id(rng) for _ in range(25)] for topic in judged}
    run_topics = rng.sample(judged, 5) + [t for t in map(str, rng.sample(range(1, 51), 3)) if t not in judged]
    return generated_qrels(rng, judged, pools), generated_run(rng, run_topics, pools)


@pytest.mark.parametrize("seed", range(8))
def test_every_figure_equals_the_organisers_evaluator_on_generated_runs(touche_data, gawk_on_path, tmp_path, seed):
    qrels, run = generated_case(seed)

    table, measures = organisers_output(touche_data, gawk_on_path, tmp_path, qrels, run)

    assert ours(qrels, run) == (table, measures)


QUIRKY_RUN = """\
3 PRO I0000000000000001 1 9 first-tag
3 PRO I0000000000000002 3 10 first-tag
3 PRO I0000000000000003 2 8 first-tag
3 PRO I0000000000000004 4 7.5 second-tag
3 PRO I0000000000000005 5 1e-3 first-tag
3 PRO I0000000000000006 6 7 first-tag
3 PRO I0000000000000007 9 +6 first-tag
3 PRO I0000000000000008 7 6 first-tag
3 PRO I0000000000000009 11 1 first-tag
3 CON I0000000000000001 2 10 first-tag
3 CON I0000000000000002 1 9 first-tag
3 CON I0000000000000003 5 .5 first-tag
51 PRO I0000000000000001 1 1 first-tag
7 CON I0000000000000004 10 2 first-tag
7 CON I000000000000000a 01 2 first-tag
"""


def test_it_counts_the_lines_the_evaluator_counts_when_ranks_and_scores_misbehave(touche_data, gawk_on_path, tmp_path):
    # Line 2's score rises (skipped, though its rank 3 is remembered, so line 3's rank 2 is skipped too); line 5's
    # score has an exponent and line 7's a plus sign (skipped); rank 11 is skipped; line 10's rank 2 then line 11's
    # rank 1 does not increase; ".5" is not a score the script reads; topic 51 is beyond the script's topics.
    qrels = write_image_qrels(
        [("3", f"I000000000000000{n}", 1, n % 2, 1 - n % 2) for n in range(1, 10)]
        + [("7", "I0000000000000004", 1, 0, 1), ("51", "I0000000000000001", 1, 1, 1)]
    )
    run = QUIRKY_RUN.replace("7 CON I000000000000000a 01 2 first-tag\n", "")  # a leading zero is our error, below

    table, measures = organisers_output(touche_data, gawk_on_path, tmp_path, qrels, run)

    assert ours(qrels, run) == (table, measures)
    assert table.splitlines()[1:] == ["3,0.20,0.20,0.05,0.30,0.30,0.10,0.10,0.10,0.00", "7,0.05,0.05,0.05,0.00,0.00,0.00,0.10,0.10,0.10"]


def test_a_run_whose_every_line_is_skipped_scores_zero_on_no_topics(touche_data, gawk_on_path, tmp_path):
    qrels = write_image_qrels([("51", "I0000000000000001", 1, 1, 0)])
    run = "51 PRO I0000000000000001 1 1 tag\n"

    table, measures = organisers_output(touche_data, gawk_on_path, tmp_path, qrels, run)

    assert table.strip() == HEADER
    assert ours(qrels, run) == (table, measures)
    assert '"0.000"' in measures


def test_the_organisers_baseline_on_the_real_sample_scores_as_the_evaluator_says(touche_data, gawk_on_path, tmp_path):
    """The baseline's own run (stance from the query that found the page) against qrels judged from the sample's
    rankings: an image is on topic for the topics whose searches found it, and supports the stance of its query."""
    subprocess.run(
        [sys.executable, str(touche_data / BASELINE), "-i", str(touche_data / "2023-task3-sample"), "-o", str(tmp_path / "baseline")],
        check=True, capture_output=True,
    )
    run = (tmp_path / "baseline" / "run.txt").read_text()
    rng = random.Random(3)
    rows = []
    for record in read_image_collection(touche_data / "2023-task3-sample"):
        for topic in sorted({query.topic for page in record.pages for query in page.queries}):
            if rng.random() < 0.8:  # some found images stay unjudged
                words = [query.query for page in record.pages for query in page.queries if query.topic == topic]
                rows.append((topic, record.id, int(rng.random() < 0.7), int(any(w.endswith(" good") for w in words)),
                             int(any(w.endswith(" anti") for w in words))))
    qrels = write_image_qrels(rows)

    table, measures = organisers_output(touche_data, gawk_on_path, tmp_path, qrels, run)

    assert ours(qrels, run) == (table, measures)
    assert [line.split(",")[0] for line in table.splitlines()[1:]] == ["19", "31", "34", "39", "48"]


# ---------------------------------------------------------------------------------------------------------
# Known answers worked by hand


def test_a_short_list_is_divided_by_ten_and_a_missing_stance_scores_zero():
    qrels = write_image_qrels([
        ("1", "I00000000000000a1", 1, 1, 0),  # on topic, PRO
        ("1", "I00000000000000a2", 1, 0, 1),  # on topic, CON: argumentative in the PRO list, not on stance
        ("1", "I00000000000000a3", 1, 0, 0),  # on topic only
        ("1", "I00000000000000a4", 0, 1, 0),  # off topic: PRO does not count
    ])
    run = "".join(
        f"1 PRO {image} {rank} {10 - rank} t\n"
        for rank, image in enumerate(["I00000000000000a1", "I00000000000000a2", "I00000000000000a3", "I00000000000000a4", "I00000000000000ff"], 1)
    )
    report = evaluate_image_run(parse_image_run(run.encode(), source="run.txt"),
                                image_qrels_table(parse_image_qrels(qrels.encode(), source="qrels.txt")))

    (topic,) = report.topics
    assert topic.stances["PRO"].precision() == {TOPIC_RELEVANCE: 0.3, ARGUMENTATIVENESS: 0.2, STANCE_RELEVANCE: 0.1}
    assert topic.stances["PRO"].unjudged == 1
    assert topic.stances["CON"].precision() == dict.fromkeys(MEASURES, 0.0)
    assert topic.both.precision() == {TOPIC_RELEVANCE: 3 / 20, ARGUMENTATIVENESS: 2 / 20, STANCE_RELEVANCE: 1 / 20}
    assert report.measures() == topic.both.precision()


def test_topics_the_run_lacks_are_left_out_of_the_average_not_scored_zero():
    qrels = write_image_qrels([("1", "I00000000000000a1", 1, 1, 0), ("2", "I00000000000000b1", 1, 1, 0)])
    run = "1 PRO I00000000000000a1 1 1 t\n"
    report = evaluate_image_run(parse_image_run(run.encode(), source="run.txt"),
                                image_qrels_table(parse_image_qrels(qrels.encode(), source="qrels.txt")))

    assert [topic.topic for topic in report.topics] == ["1"]
    assert report.measures()[TOPIC_RELEVANCE] == 1 / 20  # over topic 1 alone; 1 / 40 if topic 2 counted as 0
