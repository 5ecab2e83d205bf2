"""Topics and qrels files may be gzip-compressed, as runs and documents may: recognised by their magic bytes, not
their names (an upload keeps whatever name the browser gives it), and a broken stream names the file, storing
nothing."""

import gzip
import re

import pytest

from assessments.models import Judgment, Topic
from tests.factories import CampaignFactory, TopicFactory

pytestmark = pytest.mark.django_db

TOPICS_XML = "<topics><topic><number>1</number><title>Is tea healthier than coffee?</title></topic></topics>"
TOPICS_TSV = "1\tIs tea healthier than coffee?\n2\tShould I learn Python first?\n"
QRELS = "1 0 doc-a 2\n1 0 doc-b 0\n"


@pytest.fixture
def campaign(db):
    return CampaignFactory(slug="gz", preset="touche-2021-task2")


def titles(campaign) -> dict[str, str]:
    return dict(Topic.objects.filter(campaign=campaign).values_list("number", "title"))


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("topics.xml.gz", TOPICS_XML, {"1": "Is tea healthier than coffee?"}),
    ("topics.tsv.gz", TOPICS_TSV, {"1": "Is tea healthier than coffee?", "2": "Should I learn Python first?"}),
    ("topics.tsv", TOPICS_TSV, {"1": "Is tea healthier than coffee?", "2": "Should I learn Python first?"}),
])
def test_topics_import_plain_or_gzip(campaign, command, write_file, name, content, expected):
    result = command("import_topics", "gz", write_file(name, content))
    assert result.code == 0, result.err
    assert titles(campaign) == expected


def test_gzip_is_told_by_its_bytes_not_its_name(campaign, command, tmp_path):
    compressed, plain = tmp_path / "topics.xml", tmp_path / "topics.gz"
    compressed.write_bytes(gzip.compress(TOPICS_TSV.encode()))
    plain.write_text(TOPICS_XML)
    assert command("import_topics", "gz", compressed).code == 0
    assert command("import_topics", "gz", plain).code == 0
    assert titles(campaign) == {"1": "Is tea healthier than coffee?", "2": "Should I learn Python first?"}


@pytest.mark.parametrize("kind", ["import_topics", "import_qrels"])
def test_a_truncated_gzip_names_the_file_and_stores_nothing(campaign, command, tmp_path, kind):
    TopicFactory(campaign=campaign, number="1")
    before = titles(campaign)
    path = tmp_path / "broken.gz"
    path.write_bytes(gzip.compress((TOPICS_TSV if kind == "import_topics" else QRELS).encode() * 50)[:-30])
    options = ["--kind", "relevance", "--assessor", "lastyear"] if kind == "import_qrels" else []
    result = command(kind, "gz", path, *options)
    assert result.code == 1
    assert re.match(rf"error: {re.escape(str(path))}:\d+: the gzip data is truncated or corrupt", result.err), result.err
    assert titles(campaign) == before
    assert not Judgment.objects.exists()


def test_qrels_import_plain_or_gzip(campaign, command, write_file):
    TopicFactory(campaign=campaign, number="1")
    for name in ("qrels.txt", "qrels.gz"):
        result = command("import_qrels", "gz", write_file(name, QRELS), "--kind", "relevance", "--assessor", name.replace(".", "-"))
        assert result.code == 0, result.err
    labels = Judgment.objects.order_by("assessor__username", "document__doc_id")
    assert list(labels.values_list("assessor__username", "document__doc_id", "labels")) == [
        ("qrels-gz", "doc-a", {"relevance": 2}), ("qrels-gz", "doc-b", {"relevance": 0}),
        ("qrels-txt", "doc-a", {"relevance": 2}), ("qrels-txt", "doc-b", {"relevance": 0}),
    ]


def test_a_bad_line_in_gzip_qrels_is_named_by_its_line(campaign, command, write_file):
    TopicFactory(campaign=campaign, number="1")
    result = command("import_qrels", "gz", write_file("qrels.gz", QRELS + "1 0 doc-c 7\n"), "--kind", "relevance", "--assessor", "x")
    assert result.code == 1 and ":3: relevance 7 is not in the campaign's scheme" in result.err
    assert not Judgment.objects.exists()
