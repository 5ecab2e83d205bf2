"""Importing participants' TREC runs: what is stored, what is refused (with file and line), and that a refused or
failed import leaves the campaign exactly as it was."""

from types import SimpleNamespace

import pytest
from django.db.models import Sum

from assessments.formats.errors import FormatError
from assessments.metrics.evaluation import order_run
from assessments.models import PoolEntry, PoolSource, Ranking, Run
from assessments.services.imports import ImportProblem
from assessments.services.imports.runs import import_runs
from tests.factories import CampaignFactory, PoolEntryFactory, TopicFactory
from tests.rankings import stored_lines

GOOD = "1 Q0 d1 1 2.0 alpha\n1 Q0 d2 2 1.5 alpha\n2 Q0 d1 1 0.9 alpha\n"


def entries(tag: str) -> dict[tuple[str, str], tuple]:
    """(topic number, doc) -> (rank, score, stance, rank position, score position) of a stored run."""
    return {(topic, doc): line for (_, topic, doc), line in stored_lines(Ranking.objects.filter(run__tag=tag)).items()}


def stored_line_count(**filters) -> int:
    return Ranking.objects.filter(**filters).aggregate(lines=Sum("length"))["lines"] or 0


def snapshot() -> tuple:
    """Everything an import may touch, to compare before and after a refused import."""
    return (
        sorted(Run.objects.values_list("tag", "team", "line_count", "file_name", "has_stance")),
        sorted(stored_lines().items()),
    )


def test_it_stores_both_positions_with_trec_eval_tie_breaks(import_campaign, write_file):
    # Ranks and scores disagree, d2/d4 tie on rank and d3/d2 tie on score. By hand:
    # rank order (rank asc, ties by doc id desc): d1, d3, d4, d2
    # trec_eval order (score desc, ties by doc id desc): d3, d2, d1, d4
    run = write_file("run.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d3 2 3.0 t\n1 Q0 d2 3 3.0 t\n1 Q0 d4 3 1.0 t\n")
    summary = import_runs(campaign=import_campaign, paths=[run])
    assert entries("t") == {
        ("1", "d1"): (1, 2.0, "", 1, 3),
        ("1", "d3"): (2, 3.0, "", 2, 1),
        ("1", "d2"): (3, 3.0, "", 4, 2),
        ("1", "d4"): (3, 1.0, "", 3, 4),
    }
    assert summary.counts["lines"] == 4
    # The same orders the evaluation and pooling modules read runs in.
    stored = entries("t")
    lines = [(doc, rank, score) for (_, doc), (rank, score, *_) in stored.items()]
    for order, index in (("rank", 3), ("score", 4)):
        assert order_run(lines, by=order) == sorted((d for _, d in stored), key=lambda d: stored[("1", d)][index])


def test_it_stores_trec_eval_9s_order_where_scores_differ_only_beyond_single_precision(import_campaign, write_file):
    # Topic 1: d1 1.0000000001 and d2 1.0 are one C float apart from nothing: trec_eval 9 ties them and takes d2
    # (the larger id) first. Topic 2: scores a float step apart, so both versions agree and nothing is stored.
    run = write_file("near.txt", "1 Q0 d1 1 1.0000000001 t\n1 Q0 d2 2 1.0 t\n1 Q0 d0 3 0.5 t\n2 Q0 d1 1 1.5 t\n2 Q0 d2 2 1.0 t\n")
    import_runs(campaign=import_campaign, paths=[run])
    stored = {r.topic.number: r for r in Ranking.objects.select_related("topic")}
    assert (stored["1"].docs, stored["1"].by_single) == (["d1", "d2", "d0"], [2, 1, 3])
    assert stored["2"].by_single is None


@pytest.mark.parametrize(
    "name, content",
    [
        ("spaces.txt", "1 Q0 d1 1 2.5 alpha\n1 Q0 d2 2 1.5 alpha\n"),
        ("tabs.txt", "1\tQ0\td1\t1\t2.5\talpha\n1\tQ0\td2\t2\t1.5\talpha\n"),
        ("runs-of-spaces-crlf-blank-lines.txt", "1   Q0  d1 1   2.5 alpha\r\n\r\n1 0 d2 2 1.5 alpha\r\n\n"),
        ("bom.txt", "\ufeff1 Q0 d1 1 2.5 alpha\n1 Q0 d2 2 1.5 alpha\n"),
        ("run.txt.gz", "1 Q0 d1 1 2.5 alpha\n1 Q0 d2 2 1.5 alpha\n"),
        ("no-final-newline.txt", "1 Q0 d1 1 2.5 alpha\n1 Q0 d2 2 1.5 alpha"),
    ],
)
def test_it_reads_the_layouts_real_runs_use(import_campaign, write_file, name, content):
    import_runs(campaign=import_campaign, paths=[write_file(name, content)])
    assert entries("alpha") == {("1", "d1"): (1, 2.5, "", 1, 1), ("1", "d2"): (2, 1.5, "", 2, 2)}


def test_it_keeps_ranks_from_zero_negative_scores_and_quoted_tags_with_spaces(import_campaign, write_file):
    run = write_file("colbert.txt", '1 Q0 d1 0 -1.25 "Colbert fine tune on touche data"\n1 Q0 d2 1 -3 "Colbert fine tune on touche data"\n')
    import_runs(campaign=import_campaign, paths=[run])
    assert Run.objects.get().tag == "Colbert fine tune on touche data"
    assert entries("Colbert fine tune on touche data") == {("1", "d1"): (0, -1.25, "", 1, 1), ("1", "d2"): (1, -3.0, "", 2, 2)}


def test_it_stores_the_stance_column_and_q0_as_no_stance(import_campaign, write_file):
    run = write_file("stance.txt", "1 FIRST d1 1 4 s\n1 SECOND d2 2 3 s\n1 NEUTRAL d3 3 2 s\n1 NO d4 4 1 s\n1 Q0 d5 5 0 s\n")
    import_runs(campaign=import_campaign, paths=[run])
    assert Run.objects.get(tag="s").has_stance
    assert [stored[2] for stored in entries("s").values()] == ["FIRST", "SECOND", "NEUTRAL", "NO", ""]


def test_a_file_with_several_tags_gives_several_runs(import_campaign, write_file):
    import_runs(campaign=import_campaign, paths=[write_file("two.txt", "1 Q0 d1 1 1 a\n1 Q0 d1 1 1 b\n2 Q0 d2 1 1 a\n")])
    assert dict(Run.objects.values_list("tag", "line_count")) == {"a": 2, "b": 1}


def test_the_team_comes_from_the_option_or_the_file_name_and_survives_a_replacement(import_campaign, write_file):
    import_runs(campaign=import_campaign, paths=[write_file("Elrond-ElrondKRun.txt", "1 Q0 d1 1 1 ElrondKRun\n")])
    import_runs(campaign=import_campaign, paths=[write_file("other.txt", "1 Q0 d1 1 1 x\n")], team="Shanks")
    assert dict(Run.objects.values_list("tag", "team")) == {"ElrondKRun": "Elrond", "x": "Shanks"}
    import_runs(campaign=import_campaign, paths=[write_file("renamed.txt", "1 Q0 d2 1 1 ElrondKRun\n")])
    assert Run.objects.get(tag="ElrondKRun").team == "Elrond"


BAD_RUNS = [
    ("fields.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 t\n", 2, "expected 6 fields (topic, Q0 or stance, document, rank, score, tag), got 5"),
    ("rank.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d2 second 1.0 t\n", 2, "rank 'second' is not an integer in ASCII digits"),
    ("score.txt", "1 Q0 d1 1 2.0 t\n\n1 Q0 d2 2 high t\n", 3, "score 'high' is not a number in ASCII digits"),
    ("topic.txt", "1 Q0 d1 1 2.0 t\n99 Q0 d2 1 1.0 t\n", 2, "unknown topic '99'"),
    ("duplicate.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n1 Q0 d1 3 0.5 t\n", 3, "document d1 appears twice for topic 1"),
    # Topic 1's lines resume after topic 2's: the joined blocks are checked too.
    ("resumed.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d1 1 2.0 t\n\n1 Q0 d1 3 0.5 t\n", 5, "document d1 appears twice for topic 1"),
    # PRO is a stance of other Touché tasks, not of this campaign's comparative scheme.
    ("stance.txt", "1 FIRST d1 1 2.0 t\n1 PRO d2 2 1.0 t\n", 2, "unknown stance 'PRO' in column 2 (expected Q0 or one of FIRST, NEUTRAL, NO, SECOND)"),
    ("utf8.txt", b"1 Q0 d1 1 2.0 t\n1 Q0 d\xff 2 1.0 t\n", 2, "not UTF-8 text (byte 0xff at column 7)"),
    ("nul.txt", b"1 Q0 d1 1 2.0 t\n1 Q0 d\x002 2 1.0 t\n", 2, "the line contains a NUL byte"),
    ("range.txt", "1 Q0 d1 1 2.0 t\n1 Q0 d2 99999999999 1.0 t\n", 2, "rank 99999999999 is out of range"),
    ("long.txt", f"1 Q0 d1 1 2.0 t\n2 Q0 d1 1 2.0 t\n2 Q0 {'x' * 256} 2 1.0 t\n", 3, "document id is longer than 255 characters"),
]


@pytest.mark.parametrize("name, content, line, reason", BAD_RUNS)
def test_the_command_names_file_and_line_of_a_bad_run_and_stores_nothing(import_campaign, write_file, command, name, content, line, reason):
    import_runs(campaign=import_campaign, paths=[write_file("old.txt", GOOD)])
    before = snapshot()
    path = write_file(name, content)
    result = command("import_runs", import_campaign.slug, path)
    assert result.code == 1
    assert result.err.strip() == f"error: {path}:{line}: {reason}"
    assert result.out == ""
    assert snapshot() == before


def test_an_empty_run_is_refused(import_campaign, write_file, command):
    path = write_file("empty.txt", "\n\n")
    result = command("import_runs", import_campaign.slug, path)
    assert (result.code, result.err.strip()) == (1, f"error: {path}: the run has no result lines")
    assert not Run.objects.exists()


def test_a_bad_last_line_stores_nothing_of_a_long_run(import_campaign, write_file):
    good = "".join(f"{t} Q0 doc{i} {i} {1000 - i} big\n" for t in ("1", "2") for i in range(1, 1001))
    path = write_file("big.txt", good + "3 Q0 last 1 x big\n")
    with pytest.raises(FormatError) as error:
        import_runs(campaign=import_campaign, paths=[path])
    assert (error.value.line, error.value.reason) == (2001, "score 'x' is not a number in ASCII digits")
    assert (Run.objects.count(), Ranking.objects.count()) == (0, 0)


def test_a_bad_second_file_stores_nothing_of_the_first(import_campaign, write_file):
    first, second = write_file("a.txt", GOOD), write_file("b.txt", "1 Q0 d1 1 1.0 beta\n1 Q0 d1 2 0.5 beta\n")
    with pytest.raises(FormatError, match=r"b.txt:2: document d1 appears twice"):
        import_runs(campaign=import_campaign, paths=[first, second])
    assert (Run.objects.count(), Ranking.objects.count()) == (0, 0)


def test_a_failed_replacement_leaves_the_old_run_intact(import_campaign, write_file):
    import_runs(campaign=import_campaign, paths=[write_file("v1.txt", GOOD)])
    before, run_id = snapshot(), Run.objects.get(tag="alpha").pk
    v2 = "".join(f"1 Q0 new{i} {i} {100 - i} alpha\n" for i in range(1, 50)) + "2 Q0 new1 1 one alpha\n"
    with pytest.raises(FormatError):
        import_runs(campaign=import_campaign, paths=[write_file("v2.txt", v2)])
    assert snapshot() == before
    assert Run.objects.get(tag="alpha").pk == run_id


def test_a_failure_while_storing_rolls_everything_back(import_campaign, write_file, monkeypatch):
    import_runs(campaign=import_campaign, paths=[write_file("v1.txt", GOOD)])
    before = snapshot()

    def broken(runs):
        raise ImportProblem("the disk is full")

    monkeypatch.setattr("assessments.services.imports.runs._repoint_pool_sources", broken)
    with pytest.raises(ImportProblem):
        import_runs(campaign=import_campaign, paths=[write_file("v2.txt", "1 Q0 z 1 1 alpha\n"), write_file("new.txt", "2 Q0 y 1 1 beta\n")])
    assert snapshot() == before


def test_the_same_tag_in_two_files_is_refused(import_campaign, write_file):
    with pytest.raises(FormatError, match=r"b.txt: run alpha is also in .*a.txt; a tag names one run"):
        import_runs(campaign=import_campaign, paths=[write_file("a.txt", GOOD), write_file("b.txt", GOOD)])
    assert not Run.objects.exists()


def test_a_campaign_without_topics_is_told_to_import_them_first(db, write_file):
    campaign = CampaignFactory()
    with pytest.raises(ImportProblem, match="has no topics yet"):
        import_runs(campaign=campaign, paths=[write_file("run.txt", GOOD)])


def test_it_warns_about_what_is_suspicious_but_stores_it(import_campaign, write_file):
    deep = "".join(f"1 Q0 d{i} {i} {2000 - i} w\n" for i in range(1, 1002))  # 1001 documents for topic 1
    shuffled = "2 Q0 a 1 1.0 w\n2 Q0 b 2 5.0 w\n2 Q0 c 3 5.0 w\n"  # rank 2 scores more than rank 1; b and c tie
    summary = import_runs(campaign=import_campaign, paths=[write_file("w.txt", deep + shuffled)])
    text = "\n".join(summary.warnings)
    assert "w.txt:1: topic 1 has 1001 documents; Touché asks for at most 1000" in text
    assert "topic 2: score order disagrees with rank order (rank 2 scores 5, more than rank 1 with 1)" in text
    assert "w.txt: 1 tied score in 1 topic; trec_eval breaks ties by document id, not by rank" in text
    assert "w.txt: no results for 1 topic: 3" in text
    assert Run.objects.get(tag="w").warnings == summary.warnings
    assert stored_line_count(run__tag="w") == 1004


def test_a_tag_imported_again_replaces_its_lines_and_keeps_pool_entries(import_campaign, write_file):
    import_runs(campaign=import_campaign, paths=[write_file("v1.txt", GOOD)])
    run = Run.objects.get(tag="alpha")
    topic = import_campaign.topics.get(number="1")
    kept = PoolEntryFactory(topic=topic, document__doc_id="d2")
    gone = PoolEntryFactory(topic=topic, document__doc_id="d1")
    PoolSource.objects.create(entry=kept, run=run, rank_position=2, score_position=2)
    PoolSource.objects.create(entry=gone, run=run, rank_position=1)

    summary = import_runs(campaign=import_campaign, paths=[write_file("v2.txt", "1 Q0 d2 1 9.0 alpha\n1 Q0 d9 2 1.0 alpha\n")])

    assert Run.objects.get(tag="alpha").pk == run.pk
    assert entries("alpha") == {("1", "d2"): (1, 9.0, "", 1, 1), ("1", "d9"): (2, 1.0, "", 2, 2)}
    assert Run.objects.get(tag="alpha").line_count == 2
    assert set(PoolEntry.objects.values_list("pk", flat=True)) == {kept.pk, gone.pk}
    assert list(PoolSource.objects.values_list("entry_id", "rank_position", "score_position")) == [(kept.pk, 1, 1)]
    assert summary.counts["replaced"] == ["alpha"]
    assert "pool sources now pointing at the new lines: 1, cleared (their documents left the runs): 1;" in summary.warnings[-1]


def test_a_replaced_run_keeps_the_orders_its_sources_were_pooled_by(import_campaign, write_file):
    import_runs(campaign=import_campaign, paths=[write_file("v1.txt", GOOD)])
    entry = PoolEntryFactory(topic=import_campaign.topics.get(number="1"), document__doc_id="d2")
    PoolSource.objects.create(entry=entry, run=Run.objects.get(tag="alpha"), rank_position=2)

    import_runs(campaign=import_campaign, paths=[write_file("v2.txt", "1 Q0 d9 1 1.0 alpha\n1 Q0 d2 2 9.0 alpha\n")])

    assert list(PoolSource.objects.values_list("rank_position", "score_position")) == [(2, None)]


def test_progress_counts_the_bytes_of_all_files_up_to_the_total(import_campaign, write_file):
    calls = []
    progress = SimpleNamespace(advance=lambda done, total=None: calls.append((done, total)))
    paths = [write_file("a.txt", GOOD), write_file("b.txt", GOOD.replace("alpha", "beta"))]
    import_runs(campaign=import_campaign, paths=paths, progress=progress)
    total = sum(p.stat().st_size for p in paths)
    assert {t for _, t in calls} == {total}
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (total, total)


def test_the_command_prints_a_one_line_summary_and_warnings(import_campaign, write_file, command):
    path = write_file("Team-alpha.txt", GOOD)
    result = command("import_runs", import_campaign.slug, path)
    assert result.code == 0
    assert result.out.strip() == f"{path}: 1 run with 3 lines stored (1 new, 0 replaced); 1 warning"
    assert result.err.strip() == f"warning: {path}: no results for 1 topic: 3"
    assert Run.objects.get().team == "Team"


def test_the_command_refuses_an_unknown_campaign_or_a_missing_file(import_campaign, tmp_path, command):
    assert command("import_runs", "nope", tmp_path / "x.txt").err.strip() == "error: no campaign 'nope' (create it with create_campaign)"
    result = command("import_runs", import_campaign.slug, tmp_path / "x.txt")
    assert (result.code, result.err.strip()) == (1, f"error: {tmp_path / 'x.txt'}: no such file")


# --- The real runs (../shared/data/touche) -------------------------------------------------------------------


def test_every_2021_task1_run_imports(db, touche_data, command):
    campaign = CampaignFactory(slug="touche21", preset="touche-2020-task1")
    for number in range(51, 101):
        TopicFactory(campaign=campaign, number=str(number))
    runs = sorted((touche_data / "2021-task1" / "runs").glob("*.txt"))
    result = command("import_runs", campaign.slug, *runs)
    assert result.code == 0, result.err
    assert result.out.strip() == "9 files: 9 runs with 446,360 lines stored (9 new, 0 replaced); 9 warnings"
    assert result.err.count("tied scores in 50 topics") == 9
    stored = {tag: (team, lines) for tag, team, lines in Run.objects.values_list("tag", "team", "line_count")}
    elrond = {t: ("Elrond", 50_000) for t in ("ElrondKRun", "ElrondOpenNlpRun", "ElrondSimpleRun", "ElrondTaskBodyRun")}
    shanks = {f"shanks-run-{n}": ("Shanks", 49_272) for n in range(1, 6)}
    assert stored == elrond | shanks
    assert stored_line_count(run__campaign=campaign) == 446_360
    # Elrond's ranks start at 0, and thousands of scores tie: positions still follow both orders exactly.
    run = Run.objects.get(tag="ElrondKRun")
    rows = [(doc, *line) for (_, _, doc), line in stored_lines(run.rankings.filter(topic__number="51")).items()]
    lines = [row[:3] for row in rows]
    rows = [(doc, rank, score, by_rank, by_score) for doc, rank, score, _, by_rank, by_score in rows]
    assert [row[0] for row in sorted(rows, key=lambda r: r[3])] == order_run(lines, by="rank")
    assert [row[0] for row in sorted(rows, key=lambda r: r[4])] == order_run(lines, by="score")


def test_the_2020_task1_shanks_runs_import(db, touche_data, command):
    campaign = CampaignFactory(slug="touche20", preset="touche-2020-task1")
    for number in range(1, 51):
        TopicFactory(campaign=campaign, number=str(number))
    runs = sorted((touche_data / "2020-task1" / "runs-shanks-posthoc").glob("*.txt"))
    result = command("import_runs", campaign.slug, *runs, "--team", "Shanks")
    assert result.code == 0, result.err
    assert dict(Run.objects.values_list("tag", "line_count")) == {f"shanks-run-{n}": 48_781 for n in range(1, 6)}
    assert Ranking.objects.filter(run__tag="shanks-run-1").count() == 49
    assert "no results for 1 topic: 25" in result.err  # 2020 Task 1 has no topic 25


def test_an_import_costs_a_fixed_number_of_queries_not_one_per_line(import_campaign, write_file, django_assert_max_num_queries):
    # Query logging also swaps in Django's debug cursor (as DEBUG=1 does), whose copy_expert takes no keywords.
    big = "".join(f"{t} Q0 doc{i} {i} {1000 - i} {tag}\n" for tag in ("a", "b") for t in ("1", "2", "3") for i in range(1, 501))
    with django_assert_max_num_queries(20):
        summary = import_runs(campaign=import_campaign, paths=[write_file("big.txt", big)])
    assert summary.counts["lines"] == 3000
