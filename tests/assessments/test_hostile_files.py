"""Every file of the hostile corpus (tests/data/hostile/, named for its importer) goes through its import command
and comes out as `error: FILE:LINE: reason` with exit status 1, no traceback, and the database as it was.

The table is the corpus's specification: a file added there without an entry here fails the first test. Files
too large to keep (decompression bombs, a gigabyte of blank lines) are made at test time, in
test_decompression_bombs.py.
"""

from pathlib import Path

import pytest
from django.apps import apps

from assessments.models import Document, Topic
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, UserFactory

CORPUS = Path(__file__).resolve().parent.parent / "data" / "hostile"
COMMANDS = {
    "run": ["import_runs"],
    "qrels": ["import_qrels", "--kind", "relevance", "--assessor", "touche-archive"],
    "documents": ["import_documents"],
    "topics": ["import_topics"],
}
GZIP_CUT = "the gzip data is truncated or corrupt (Compressed file ended before the end-of-stream marker was reached)"

# file: (line, what the message starts with). The lines of the gzip files are the lines of what zlib itself
# decompresses from them before the break (the CRC of run-corrupt.gz fails after its last line).
EXPECTED = {
    "run-nul-in-doc-id.txt": (2, "the line contains a NUL byte"),
    "run-full-width-rank.txt": (2, "rank '２' is not an integer in ASCII digits"),
    "run-underscore-rank.txt": (2, "rank '1_000' is not an integer in ASCII digits"),
    "run-5000-digit-rank.txt": (2, "rank '999999999999999999999999999999999999999999999999999999999999'… (5,000 characters) is too large"),
    "run-overflowing-score.txt": (2, "score '1e400' is not a finite number"),
    "run-nan-score.txt": (2, "score 'NaN' is not a finite number"),
    "run-latin-1.txt": (2, "not UTF-8 text (byte 0xe9 at column 9)"),
    "run-encoded-surrogate.txt": (2, "not UTF-8 text (byte 0xed at column 7)"),
        "run-truncated.txt.gz": (2996, GZIP_CUT),
    "run-corrupt.gz": (2968, "the gzip data is truncated or corrupt (CRC check failed"),
    "run-gzip-not-gzip.gz": (1, "the gzip data is truncated or corrupt"),
    "run-duplicate-in-resumed-topic.txt": (4, "document doc-a appears twice for topic 1"),
    "run-no-break-space.txt": (2, "U+00A0 (no-break space) where only an ASCII space or tab may separate fields at column 2"),
    "run-unit-separator.txt": (2, "control character U+001F at column 2"),
    "run-control-in-doc-id.txt": (2, "control character U+0001 at column 7"),
    "qrels-nul-in-doc-id.txt": (2, "the line contains a NUL byte"),
    "qrels-control-in-doc-id.txt": (2, "control character U+0001 at column 6"),
    "qrels-ideographic-space.txt": (2, "U+3000 (ideographic space) where only an ASCII space or tab may separate fields at column 2"),
    "qrels-full-width-label.txt": (2, "relevance label '１' is not an integer of at most 6 ASCII digits"),
    "qrels-underscore-label.txt": (2, "relevance label '1_0' is not an integer of at most 6 ASCII digits"),
    "qrels-5000-digit-label.txt": (2, "relevance label '111111111111111111111111111111111111111111111111111111111111'… (5,000 characters)"),
    "qrels-latin-1.txt": (2, "not UTF-8 text (byte 0xe9 at column 8)"),
    "qrels-truncated.txt.gz": (2989, GZIP_CUT),
    "documents-nan.jsonl": (2, "NaN is not a JSON number"),
    "documents-infinity.jsonl": (2, "-Infinity is not a JSON number"),
    "documents-1e400.jsonl": (2, "a number in the JSON is too large for a finite float"),
    "documents-5000-digit-integer.jsonl": (2, "a number in the JSON has too many digits"),
    "documents-65-bit-integer.jsonl": (2, "integer -18446744073709551616 in the JSON is larger than 64 bits"),
    "documents-nested-2000-deep.jsonl": (2, "JSON nested more than 32 levels deep"),
    "documents-nested-33-deep.jsonl": (2, "JSON nested more than 32 levels deep"),
    "documents-nul-escape.jsonl": (2, "a string contains a NUL character (\\u0000)"),
    "documents-nul-escape-in-key.jsonl": (2, "a string contains a NUL character (\\u0000)"),
    "documents-lone-surrogate.jsonl": (2, "a string contains a lone surrogate (\\ud800–\\udfff), which is not text"),
    "documents-encoded-surrogate.jsonl": (2, "not UTF-8 text (byte 0xed at column 24)"),
    "documents-control-in-id.jsonl": (2, "id 'd\\x01x' contains a control character U+0001"),
    "documents-nul-byte.jsonl": (2, "invalid JSON: Invalid control character (column 24)"),
    "documents-latin-1.jsonl": (2, "not UTF-8 text (byte 0xe9 at column 26)"),
    "documents-truncated.jsonl.gz": (2994, GZIP_CUT),
    "documents-argsme-nan.json": (3, "NaN is not a JSON number"),
    "documents-argsme-nested-2000-deep.json": (3, "JSON nested more than 32 levels deep"),
    "documents-argsme-latin-1.json": (3, "not UTF-8 text"),
    "topics-nul.xml": (2, "malformed XML: Invalid character: Char 0x0 out of allowed range"),
    "topics-nested-300-deep.xml": (2, "malformed XML: Excessive depth in document: 256"),
    "topics-latin-1.xml": (3, "malformed XML: Invalid bytes in character encoding"),
    "topics-surrogate-reference.xml": (2, "malformed XML: xmlParseCharRef: invalid xmlChar value 55296"),
    "topics-5000-digit-number.xml": (2, "topic number '1111111111111111111111111111111111111111"),
    "topics-nul.tsv": (2, "the line contains a NUL byte"),
    "topics-control-in-number.tsv": (2, "topic number '2\\x01' contains a control character U+0001"),
    "topics-latin-1.tsv": (2, "not UTF-8 text (byte 0xe9 at column 6)"),
    "topics-truncated.xml.gz": (396, GZIP_CUT),
}


def test_every_file_of_the_corpus_has_its_expected_error():
    assert sorted(EXPECTED) == sorted(path.name for path in CORPUS.iterdir())


@pytest.fixture
def judged(import_campaign):
    """The campaign with a judged document, so that a change to labels, documents or topics would show."""
    document = DocumentFactory(collection=import_campaign.collection, doc_id="d1")
    topic = import_campaign.topics.get(number="1")
    record_judgment(topic=topic, document=document, assessor=UserFactory(username="carol"), labels=Labels({"relevance": 2}), phase="main")
    return import_campaign


def database() -> dict:
    """Every table's row count, plus the fields an import updates in place."""
    state: dict = {model._meta.label: model._default_manager.count() for model in apps.get_models()}
    state["topics"] = list(Topic.objects.order_by("pk").values_list("number", "title", "description"))
    state["documents"] = list(Document.objects.order_by("pk").values_list("doc_id", "text_hash", "title"))
    return state


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_file_is_refused_at_its_line_and_changes_nothing(judged, command, name):
    path = CORPUS / name
    line, reason = EXPECTED[name]
    before = database()

    result = command(*COMMANDS[name.split("-", 1)[0]][:1], judged.slug, path, *COMMANDS[name.split("-", 1)[0]][1:])

    assert result.code == 1 and result.out == ""
    assert "Traceback" not in result.err
    assert result.err.startswith(f"error: {path}:{line}: {reason}"), result.err
    assert database() == before
