"""Evaluating by a measure that reads whole lists (AP) holds one run's lists at a time: the peak memory of
`evaluate_runs --measure AP` in a child process hardly moves from 4 runs to 48 runs of 20 topics × 1,000 lines
(bench/evaluate_memory.py measures Touché's largest scale), and the figures are those of the runs read together."""

import json
import os
import random
from pathlib import Path

import pytest
from django.db import connection

from assessments.models import Ranking, Run
from bench.peak_memory import run_manage
from tests.assessments.test_evaluation_service import judge_all
from tests.factories import CampaignFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)  # the child process reads the campaign: it must be committed

ROOT = Path(__file__).resolve().parent.parent.parent
TOPICS, LINES = 20, 1000
GROWTH_LIMIT_KIB = 12 * 1024  # 44 more runs of 20,000 ids each, read together, take some 80 MB


def add_runs(campaign, topics, first: int, count: int) -> None:
    rng = random.Random(first)
    for r in range(first, first + count):
        run = Run.objects.create(campaign=campaign, tag=f"run{r:02d}", line_count=TOPICS * LINES)
        Ranking.objects.bulk_create([
            Ranking(run=run, topic=topic, length=LINES,
                    docs=[f"clueweb12-{topic.number}-{d:05d}" for d in rng.sample(range(5 * LINES), LINES)],
                    ranks=list(range(1, LINES + 1)), scores=[float(LINES - i) for i in range(LINES)], stances=None,
                    by_rank=None, by_single=None)
            for topic in topics
        ])


def ap_in_child() -> tuple[list[dict], int]:
    db = connection.settings_dict
    env = {**os.environ, "SECRET_KEY": "test", "CELERY_BROKER_URL": "", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"}
    child, peak = run_manage(ROOT, ["evaluate_runs", "mem", "--measure", "AP", "--format", "json"], env)
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    return json.loads(child.stdout), peak


def test_ap_memory_does_not_grow_with_the_number_of_runs():
    campaign = CampaignFactory(slug="mem", preset="touche-2021-task2")
    topics = [TopicFactory(campaign=campaign, number=str(t), position=t) for t in range(1, TOPICS + 1)]
    judge_all(campaign, UserFactory(username="anna"),
              {t.number: {f"clueweb12-{t.number}-{d:05d}": d % 3 for d in range(0, 5 * LINES, 40)} for t in topics})
    add_runs(campaign, topics, 0, 4)
    few, few_peak = ap_in_child()
    add_runs(campaign, topics, 4, 44)
    many, many_peak = ap_in_child()

    assert len(few) == 4 and len(many) == 48
    assert [row for row in many if row["run"] in {r["run"] for r in few}] == few  # the first runs score alike
    assert len({row["mean"] for row in many}) > 40  # real AP figures, one per run
    assert many_peak - few_peak < GROWTH_LIMIT_KIB, (few_peak, many_peak)
