"""The staging table a run import COPYs into while it reads (services.ranking_stage): whatever the import's end, it
leaves nothing there, and stores nothing it did not finish."""

import pytest
from django.db import connection

from assessments.formats.errors import FormatError
from assessments.models import Ranking, Run
from assessments.services.imports.runs import import_runs
from assessments.services.jobs import JobCancelled
from assessments.services.ranking_stage import TABLE
from tests.factories import CampaignFactory, TopicFactory

GOOD = "1\tQ0\td1\t1\t2.0\tgood\n1\tQ0\td2\t2\t1.5\tgood\n2\tQ0\td1\t1\t0.9\tgood\n"


@pytest.fixture
def campaign(db):
    made = CampaignFactory(slug="staged", preset="touche-2021-task2")
    for position, number in enumerate(("1", "2")):
        TopicFactory(campaign=made, number=number, position=position)
    return made


def staged() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {TABLE}")
        return cursor.fetchone()[0]


def test_a_finished_import_leaves_nothing_staged(campaign, tmp_path):
    path = tmp_path / "team-good.txt"
    path.write_text(GOOD)

    import_runs(campaign=campaign, paths=[path])

    assert sorted(Ranking.objects.values_list("topic__number", "length")) == [("1", 2), ("2", 1)]
    assert staged() == 0


def test_a_refused_import_leaves_nothing_staged_or_stored(campaign, tmp_path):
    """The first file was staged while the second was read; the second is refused."""
    (tmp_path / "team-good.txt").write_text(GOOD)
    (tmp_path / "team-bad.txt").write_text("1\tQ0\td1\t1\t2.0\tbad\n1\tQ0\td1\t2\t1.0\tbad\n")

    with pytest.raises(FormatError, match="team-bad.txt:2: document d1 appears twice"):
        import_runs(campaign=campaign, paths=[tmp_path / "team-good.txt", tmp_path / "team-bad.txt"])

    assert not Run.objects.exists() and not Ranking.objects.exists()
    assert staged() == 0


class CancelAtSecondFile:
    """A job's progress whose organiser cancels it once the second file is being read."""

    def __init__(self, first_file_bytes: int) -> None:
        self.first_file_bytes = first_file_bytes

    def advance(self, done: int, total: int | None = None) -> None:
        if done > self.first_file_bytes:
            raise JobCancelled()


def test_a_cancelled_import_leaves_nothing_staged_or_stored(campaign, tmp_path):
    paths = [tmp_path / "team-good.txt", tmp_path / "team-next.txt"]
    paths[0].write_text(GOOD)
    paths[1].write_text(GOOD.replace("good", "next"))

    with pytest.raises(JobCancelled):
        import_runs(campaign=campaign, paths=paths, progress=CancelAtSecondFile(len(GOOD)))

    assert not Run.objects.exists() and not Ranking.objects.exists()
    assert staged() == 0


@pytest.mark.django_db(transaction=True)  # the rows must be committed for the importing thread's connection to see them
def test_rows_a_killed_import_left_are_removed_by_the_next_import_after_a_day(campaign, tmp_path):
    with connection.cursor() as cursor:
        for key, age in ((1, "2 days"), (2, "1 hour")):
            cursor.execute(
                f"INSERT INTO {TABLE} (run_key, topic_id, length, docs, ranks, scores, staged_at)"
                f" VALUES (%s, %s, 1, '{{d}}', '{{1}}', '{{1.0}}', now() - interval '{age}')",
                [key, campaign.topics.first().pk],
            )
    path = tmp_path / "team-good.txt"
    path.write_text(GOOD)

    import_runs(campaign=campaign, paths=[path])

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT run_key FROM {TABLE}")
        assert cursor.fetchall() == [(2,)]  # an hour old: perhaps another import, still reading


def test_a_row_the_staging_copy_refuses_fails_the_import_instead_of_hanging_it(campaign):
    from psycopg2 import DataError

    from assessments.services.ranking_stage import RankingStage

    with pytest.raises(DataError, match="malformed array literal"), RankingStage() as stage:
        topic = campaign.topics.first().pk
        stage.add(0, f"{topic}\t1\tnot an array\t{{1}}\t{{1.0}}\t\\N\t\\N\t\\N".encode())
        for _ in range(200):  # more than the queue holds: the COPY has failed, so these must not wait for it
            stage.add(1, f"{topic}\t1\t{{d}}\t{{1}}\t{{1.0}}\t\\N\t\\N\t\\N".encode())
        stage.store({0: 1, 1: 2})
    assert staged() == 0
