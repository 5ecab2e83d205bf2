"""The column reader (formats.trec_run_columns) against the line reader: a file either reader takes is stored the
same, row for row, with the same warnings, and a file the column reader is not sure of is left to the line reader.

Each generated file is imported twice into fresh campaigns: once as the importer does it (the column reader first)
and once with the column reader switched off. The stored rankings are compared with each other and with the orders
tests/rankings.py works out independently.
"""

import random
import re
from pathlib import Path

import pytest

from assessments.formats import trec_run_columns
from assessments.formats.errors import FormatError
from assessments.models import Campaign, Ranking, Run
from assessments.services.imports import runs as run_imports
from assessments.services.imports.runs import import_runs
from tests.factories import CampaignFactory, TopicFactory
from tests.rankings import rank_order, score_order, single_order

pytestmark = pytest.mark.django_db

TOPICS = [str(n) for n in range(1, 7)]


def campaign(slug: str):
    made = CampaignFactory(slug=slug, name=slug, preset="touche-2023-task1")  # stances PRO, CON, NEUTRAL, NO
    for position, number in enumerate(TOPICS):
        TopicFactory(campaign=made, number=number, position=position)
    return made


def plain_run(seed: int) -> str:
    """A run file the column reader should take: one separator, no blank line, every topic in one block, and
    (by seed) ties, ranks against scores, shuffled lines, ranks from 0, zero, negative, exponent and
    single-precision-tied scores, stances, several tags, a topic over 1,000 lines, missing topics."""
    rng = random.Random(seed)
    separator = "\t" if seed % 2 else " "
    tags = [f"tag{seed}"] if seed % 5 else [f"tag{seed}a", f"tag{seed}b"]
    pool = [f"doc-{rng.randrange(10**6):06d}-{chr(97 + rng.randrange(26))}" for _ in range(60)]
    lines = []
    for tag in tags:
        for topic in rng.sample(TOPICS, rng.randint(3, 6)):
            count = 1001 if seed == 7 and topic == "1" else rng.randint(1, 40)
            docs = rng.sample(pool, min(count, len(pool))) if count <= len(pool) else [f"long-{i}" for i in range(count)]
            first = rng.choice((0, 1))
            rows = []
            for i, doc in enumerate(docs):
                kind = seed % 4
                if kind == 0:
                    score = f"{round(50 - i * 0.5 - (i % 3 == 0) * 0.5, 2)}"  # neighbour ties
                elif kind == 1:
                    score = rng.choice(("0", "0.0", "-1.5", "1e-05", "2.5E3", "7", f"{rng.random():.6f}"))
                elif kind == 2:
                    score = rng.choice(("1.0000000001", "1.0", "1.00000001", "0.5", "3.25"))  # equal as C floats
                else:
                    score = f"{100 - i}.{rng.randrange(100):02d}"
                rank = first + i if rng.random() > 0.1 else first + max(0, i - 1)  # some equal ranks
                stance = rng.choice(("Q0", "PRO", "CON", "0")) if seed % 3 == 0 else "Q0"
                rows.append(separator.join((topic, stance, doc, str(rank), score, tag)))
            if seed % 6 == 1:
                rng.shuffle(rows)
            lines.extend(rows)
    return "\n".join(lines) + ("\n" if seed % 7 else "")


def stored(slug: str) -> dict:
    """(tag, topic) -> the stored ranking's lists; tag -> the Run's fields."""
    rankings = {
        (r.run.tag, r.topic.number): (r.length, r.docs, r.ranks, r.scores, r.stances, r.by_rank, r.by_single)
        for r in Ranking.objects.filter(run__campaign__slug=slug).select_related("run", "topic")
    }
    fields = {r.tag: (r.team, r.line_count, r.has_stance, r.warnings) for r in Run.objects.filter(campaign__slug=slug)}
    return {"rankings": rankings, "runs": fields}


def permuted(docs: list[str], positions: list[int] | None) -> list[str]:
    """A stored permutation (1-based, null: the score order) applied to the score-ordered documents."""
    return docs if positions is None else [docs[i - 1] for i in positions]


@pytest.fixture
def column_reads(monkeypatch) -> list[str]:
    """The files the column reader took (it was not declined)."""
    taken: list[str] = []
    read_columns = run_imports._Reading._columns

    def spy(self, file, stage):
        result = read_columns(self, file, stage)
        taken.append(Path(file.name).name)
        return result

    monkeypatch.setattr(run_imports._Reading, "_columns", spy)
    return taken


def import_both_ways(tmp_path: Path, monkeypatch, files: dict[str, str]) -> tuple[dict, dict, str, str]:
    paths = []
    for name, text in files.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    columns = import_runs(campaign=campaign("columns"), paths=paths)
    with monkeypatch.context() as switch:
        switch.setattr(run_imports._Reading, "_columns", _declined)
        lines = import_runs(campaign=campaign("lines"), paths=paths)
    return stored("columns"), stored("lines"), columns.text, lines.text


def _declined(self, file, stage):
    raise trec_run_columns.Declined


@pytest.mark.parametrize("seed", range(24))
def test_a_plain_file_is_stored_as_the_line_reader_stores_it(tmp_path, monkeypatch, column_reads, seed):
    by_columns, by_lines, text_columns, text_lines = import_both_ways(tmp_path, monkeypatch, {f"team-run{seed}.txt": plain_run(seed)})

    assert column_reads == [f"team-run{seed}.txt"]
    assert by_columns == by_lines
    assert text_columns == text_lines
    # And both are the orders worked out independently (tests/rankings.py).
    for length, docs, ranks, scores, _, by_rank, by_single in by_columns["rankings"].values():
        lines = list(zip(docs, ranks, scores))
        assert [line[0] for line in score_order(lines)] == docs
        assert permuted(docs, by_rank) == [line[0] for line in rank_order(lines)]
        assert permuted(docs, by_single) == [line[0] for line in single_order(lines)]
        assert length == len(docs)


def test_the_generated_files_cover_what_they_should(tmp_path, monkeypatch, column_reads):
    """The comparison above means something only if the files hold the cases: orders stored, warnings given."""
    files = {f"team-run{seed}.txt": plain_run(seed) for seed in range(24)}
    by_columns, *_ = import_both_ways(tmp_path, monkeypatch, files)

    rankings = by_columns["rankings"].values()
    warnings = " ".join(w for run in by_columns["runs"].values() for w in run[3])
    assert any(r[5] for r in rankings)  # by_rank stored
    assert any(r[6] for r in rankings)  # by_single stored
    assert any(r[4] for r in rankings)  # stances stored
    assert any(0.0 in r[3] for r in rankings)
    for expected in ("tied score", "score order disagrees", "has 1001 documents", "no results for"):
        assert expected in warnings
    assert len(column_reads) == 24


DECLINED = {
    "a blank line": "1 Q0 d1 1 2.0 t\n\n1 Q0 d2 2 1.0 t\n",
    "Windows line ends": "1 Q0 d1 1 2.0 t\r\n1 Q0 d2 2 1.0 t\r\n",
    "a BOM": "\ufeff1 Q0 d1 1 2.0 t\n",
    "both separators": "1\tQ0\td1\t1\t2.0\tt\n1 Q0 d2 2 1.0 t\n",
    "two spaces": "1 Q0  d1 1 2.0 t\n",
    "a tag with spaces": "1\tQ0\td1\t1\t2.0\tmy run\n",
    "a quoted tag": '1 Q0 d1 1 2.0 "t"\n',
    "a topic that resumes": "1 Q0 d1 1 2.0 t\n2 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n",
    "a document twice": "1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n",
    "a hexadecimal rank": "1 Q0 d1 0x1 2.0 t\n",
    "a rank with a plus": "1 Q0 d1 +1 2.0 t\n",
    "a rank beyond 32 bits": "1 Q0 d1 2147483648 2.0 t\n",
    "an infinite score": "1 Q0 d1 1 inf t\n",
    "a score that is not a number": "1 Q0 d1 1 nan t\n",
    "a comma in a document id": "1 Q0 d,1 1 2.0 t\n",
    "a document id spelled null": "1 Q0 NuLL 1 2.0 t\n",
    "a backslash": "1 Q0 d\\1 1 2.0 t\n",
    "a control character": "1 Q0 d\x0b1 1 2.0 t\n",
    "non-ASCII text": "1 Q0 dé 1 2.0 t\n",
    "an unknown topic": "99 Q0 d1 1 2.0 t\n",
    "an unknown stance": "1 MAYBE d1 1 2.0 t\n",
    "five fields": "1 Q0 d1 1 2.0\n",
    "seven fields": "1 Q0 d1 1 2.0 t x\n",
    "an empty file": "",
    "a document id too long": f"1 Q0 {'d' * 600} 1 2.0 t\n",
}


@pytest.mark.parametrize("text", DECLINED.values(), ids=DECLINED.keys())
def test_what_the_column_reader_is_not_sure_of_it_declines(tmp_path, text):
    path = tmp_path / "run.txt"
    path.write_text(text, newline="")
    with open(path, "rb") as stream, pytest.raises(trec_run_columns.Declined):
        reader = trec_run_columns.ColumnRunReader(stream, source="run.txt", known_topics=TOPICS, stances=("PRO", "CON"), max_doc_id_length=500)
        list(reader.blocks())


def test_a_file_larger_than_a_chunk_is_read_across_chunks(tmp_path, monkeypatch, column_reads):
    """Blocks that straddle a chunk boundary, and lines cut by it, come out whole, with the right line numbers."""
    monkeypatch.setattr(trec_run_columns, "CHUNK_BYTES", 64)
    text = plain_run(4)
    by_columns, by_lines, text_columns, text_lines = import_both_ways(tmp_path, monkeypatch, {"team-chunks.txt": text})

    assert column_reads == ["team-chunks.txt"]
    assert by_columns == by_lines and text_columns == text_lines


def test_a_gzip_file_is_read_by_columns_too(tmp_path, monkeypatch, column_reads):
    import gzip

    path = tmp_path / "team-zipped.txt.gz"
    path.write_bytes(gzip.compress(plain_run(3).encode()))
    import_runs(campaign=campaign("zipped"), paths=[path])
    assert column_reads == ["team-zipped.txt.gz"]
    assert Run.objects.get(campaign__slug="zipped").line_count == len(plain_run(3).splitlines())


def test_a_declined_file_is_refused_by_the_line_reader_naming_its_line(tmp_path, column_reads):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 0x2 1.0 t\n")
    with pytest.raises(FormatError, match=re.escape("run.txt:2: rank '0x2' is not an integer in ASCII digits")):
        import_runs(campaign=campaign("refused"), paths=[path])
    assert column_reads == []
    assert not Run.objects.filter(campaign__slug="refused").exists()


def test_real_touche_runs_are_read_by_columns_as_by_lines(touche_data, tmp_path, monkeypatch, column_reads):
    runs = sorted((touche_data / "2021-task1" / "runs").glob("*.txt"))[:3]
    topics = sorted({line.split()[0] for path in runs for line in path.read_text().splitlines() if line.strip()}, key=int)
    for slug in ("columns", "lines"):
        made = CampaignFactory(slug=slug, name=slug, preset="touche-2023-task1")
        for position, number in enumerate(topics):
            TopicFactory(campaign=made, number=number, position=position)
    columns = import_runs(campaign=Campaign.objects.get(slug="columns"), paths=runs)
    with monkeypatch.context() as switch:
        switch.setattr(run_imports._Reading, "_columns", _declined)
        lines = import_runs(campaign=Campaign.objects.get(slug="lines"), paths=runs)

    assert column_reads == [path.name for path in runs]
    assert stored("columns") == stored("lines")
    assert columns.text == lines.text
