"""build_pool and export_pool: what they print and how they exit."""

import io

import pytest
from django.core.management import call_command

from assessments.models import PoolEntry
from tests.assessments.pool_fixtures import add_run, ranked
from tests.factories import DocumentFactory, TopicFactory


@pytest.fixture
def runs(campaign):
    topics = [TopicFactory(campaign=campaign, number=str(n), position=n) for n in (51, 52)]
    add_run(campaign, "alpha", {topics[0]: ranked("a", 10), topics[1]: ranked("b", 10)})
    add_run(campaign, "beta", {topics[0]: ranked("a", 2) + [("c-003", 3, -1.0)]})
    for doc in ("a-001", "a-002", "b-001"):
        DocumentFactory(collection=campaign.collection, doc_id=doc)
    return topics


def run(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except SystemExit as exc:
        return exc.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


class TestBuildPool:
    def test_it_prints_the_pool_size_per_topic_and_in_total(self, campaign, runs):
        code, out, err = run("build_pool", "touche22", "--depth", "3")

        assert code == 0
        lines = out.splitlines()
        assert lines[0] == "touche22: depth 3 (rank ∪ score)"
        assert lines[2].split() == ["51", "0", "4", "4", "2"]  # a-001..a-003, c-003; a-003 and c-003 have no text
        assert lines[3].split() == ["52", "0", "3", "3", "2"]
        assert lines[4].split() == ["total", "0", "7", "7", "4"]
        assert "missing from the collection (4):" in out and "  51 c-003" in lines
        assert "4 pooled documents are not in the collection" in err
        assert PoolEntry.objects.count() == 7

    def test_building_again_adds_only_what_is_new(self, campaign, runs):
        run("build_pool", "touche22", "--depth", "3")

        code, out, _ = run("build_pool", "touche22", "--depth", "5", "--order", "rank", "--runs", "alpha")

        assert code == 0
        total = next(line for line in out.splitlines() if line.split()[0] == "total")
        assert total.split() == ["total", "7", "4", "11", "8"]

    def test_a_preview_changes_nothing(self, campaign, runs):
        code, out, _ = run("build_pool", "touche22", "--strategy", "rbp", "--budget", "6", "--preview")

        assert code == 0
        assert "preview of RBP p=0.8 up to 6 per topic (score) (nothing changed)" in out
        assert out.splitlines()[4].split() == ["total", "0", "12", "12"]
        assert out.splitlines()[5] == "12 documents to add: 0.1 h of judging"
        assert not PoolEntry.objects.exists()

    @pytest.mark.parametrize("args, message", [
        (["nope"], "error: no campaign 'nope'"),
        (["touche22", "--runs", "alpha", "gamma"], "error: unknown run tags for campaign 'touche22': gamma"),
        (["touche22", "--strategy", "maxmean"], "error: the maxmean strategy needs a positive budget"),
        (["touche22", "--depth", "0"], "error: depth must be between 1 and 1000, got 0"),
    ])
    def test_it_exits_with_1_and_the_reason(self, campaign, runs, args, message):
        code, _, err = run("build_pool", *args)

        assert code == 1
        assert err.startswith(message)
        assert not PoolEntry.objects.exists()


class TestExportPool:
    def test_it_writes_one_line_per_entry_to_stdout(self, campaign, runs):
        run("build_pool", "touche22", "--depth", "2")

        code, out, _ = run("export_pool", "touche22")

        assert code == 0
        assert out == "51 a-001\n51 a-002\n52 b-001\n52 b-002\n"

    def test_it_writes_a_file_and_can_list_only_the_missing(self, campaign, runs, tmp_path):
        run("build_pool", "touche22", "--depth", "2")
        target = tmp_path / "missing.txt"

        code, _, err = run("export_pool", "touche22", "--missing", "--output", str(target))

        assert code == 0
        assert target.read_text() == "52 b-002\n"
        assert f"wrote 1 line to {target}" in err

    def test_an_unwritable_file_is_an_error(self, campaign, runs, tmp_path):
        code, _, err = run("export_pool", "touche22", "--output", str(tmp_path / "no" / "such" / "dir.txt"))

        assert code == 1
        assert err.startswith(f"error: {tmp_path / 'no' / 'such' / 'dir.txt'}: No such file or directory")
