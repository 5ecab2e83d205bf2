"""Importing document collections: every format, upserts by id (idempotent), only-pooled imports that fill stubs,
and refusals that name file and line and store nothing."""

import hashlib
import json
from types import SimpleNamespace

import pytest

from assessments.formats.errors import FormatError
from assessments.models import Document
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import import_documents
from tests.factories import CampaignFactory, DocumentFactory, PoolEntryFactory, TopicFactory

PASSAGES = "\n".join(
    json.dumps(record)
    for record in [
        {"id": "clueweb12-0000tw-00-00001___1", "contents": "Cats, dogs & MORE!\nBoth are pets.", "chatNoirUrl": "https://chatnoir.eu/1"},
        {"id": "clueweb12-0000tw-00-00001___2", "contents": "Dogs are loyal.", "chatNoirUrl": "https://chatnoir.eu/2"},
    ]
) + "\n"


def stored(campaign) -> dict[str, tuple]:
    return {
        row[0]: row[1:]
        for row in Document.objects.filter(collection=campaign.collection).values_list(
            "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash"
        )
    }


@pytest.fixture
def campaign(db):
    return CampaignFactory(slug="docs")


def test_it_stores_touche_passages_with_the_hash_of_their_normalised_text(campaign, write_file):
    summary = import_documents(campaign=campaign, paths=[write_file("passages.jsonl", PASSAGES)])
    docs = stored(campaign)
    assert docs["clueweb12-0000tw-00-00001___1"] == (
        "", "Cats, dogs & MORE!\nBoth are pets.", False, "https://chatnoir.eu/1", {}, True,
        # Case, punctuation and line breaks do not count: this is the sha1 of "cats dogs more both are pets".
        hashlib.sha1(b"cats dogs more both are pets").hexdigest(),
    )
    assert docs["clueweb12-0000tw-00-00001___2"][6] == hashlib.sha1(b"dogs are loyal").hexdigest()
    assert summary.text.endswith("passages.jsonl: 2 documents read, 2 new, 0 updated, 0 unchanged")


def test_it_reads_generic_jsonl_with_html_and_keeps_other_keys_as_metadata(campaign, write_file):
    lines = [
        {"docno": "web-1", "title": "A page", "html": "<p>Hello <b>world</b></p>", "url": "http://example.org/", "lang": "en"},
        {"doc_id": 7, "text": "plain"},
    ]
    import_documents(campaign=campaign, paths=[write_file("generic.jsonl", "\n".join(map(json.dumps, lines)))], fmt="jsonl")
    docs = stored(campaign)
    assert docs["web-1"][:5] == ("A page", "<p>Hello <b>world</b></p>", True, "http://example.org/", {"lang": "en"})
    assert docs["7"][:3] == ("", "plain", False)


def test_it_reads_an_args_me_corpus(campaign, write_file):
    corpus = {
        "arguments": [
            {
                "id": "S1f2-A3e4", "conclusion": "Cats are better",
                "premises": [{"text": "Cats are independent.", "stance": "PRO"}],
                "context": {"sourceUrl": "https://www.debate.org/1", "sourceTitle": "Cats"},
            },
            {"id": "S1f2-A3e5", "conclusion": "Dogs", "premises": [{"text": "Dogs are loyal.", "stance": "CON"}], "context": {}},
        ]
    }
    summary = import_documents(campaign=campaign, paths=[write_file("args.json.gz", json.dumps(corpus, indent=2))])
    docs = stored(campaign)
    assert docs["S1f2-A3e4"][:4] == ("Cats are better", "Cats are independent.", False, "https://www.debate.org/1")
    assert docs["S1f2-A3e4"][4]["stance"] == "PRO"
    assert docs["S1f2-A3e5"][4]["stance"] == "CON"
    assert summary.counts["created"] == 2


def test_importing_the_same_file_again_changes_nothing_and_a_changed_text_updates(campaign, write_file):
    path = write_file("passages.jsonl", PASSAGES)
    import_documents(campaign=campaign, paths=[path])
    before = stored(campaign)
    again = import_documents(campaign=campaign, paths=[path])
    assert (again.counts["created"], again.counts["updated"], again.counts["unchanged"]) == (0, 0, 2)
    assert stored(campaign) == before
    changed = write_file("changed.jsonl", PASSAGES.replace("Dogs are loyal.", "Dogs are very loyal."))
    update = import_documents(campaign=campaign, paths=[changed])
    assert (update.counts["created"], update.counts["updated"], update.counts["unchanged"]) == (0, 1, 1)
    assert stored(campaign)["clueweb12-0000tw-00-00001___2"][1] == "Dogs are very loyal."


def test_only_pooled_fills_the_stubs_and_skips_the_rest(campaign, write_file):
    topic = TopicFactory(campaign=campaign)
    for doc_id in ("clueweb12-0000tw-00-00001___2", "not-in-the-file"):
        PoolEntryFactory(topic=topic, document=DocumentFactory(collection=campaign.collection, doc_id=doc_id, body="", has_text=False))
    summary = import_documents(campaign=campaign, paths=[write_file("passages.jsonl", PASSAGES)], only_pooled=True)
    docs = stored(campaign)
    assert set(docs) == {"clueweb12-0000tw-00-00001___2", "not-in-the-file"}
    assert docs["clueweb12-0000tw-00-00001___2"][1:2] + docs["clueweb12-0000tw-00-00001___2"][5:6] == ("Dogs are loyal.", True)
    assert docs["not-in-the-file"][5] is False
    assert (summary.counts["created"], summary.counts["updated"], summary.counts["skipped"]) == (0, 1, 1)
    assert summary.warnings == ["1 pooled documents still have no text (not in the imported files)"]


def test_only_pooled_without_a_pool_is_refused(campaign, write_file):
    with pytest.raises(ImportProblem, match="no pool .* needs documents yet"):
        import_documents(campaign=campaign, paths=[write_file("passages.jsonl", PASSAGES)], only_pooled=True)


def test_the_first_record_of_a_repeated_id_wins(campaign, write_file):
    lines = [{"docno": "d1", "text": "first"}, {"docno": "d2", "text": "other"}, {"docno": "d1", "text": "second"}]
    summary = import_documents(campaign=campaign, paths=[write_file("rerank.jsonl", "\n".join(map(json.dumps, lines)))])
    assert stored(campaign)["d1"][1] == "first"
    assert (summary.counts["read"], summary.counts["created"], summary.counts["unchanged"]) == (3, 2, 1)


def test_importing_a_file_with_a_repeated_id_again_changes_nothing(campaign, write_file):
    # Once stored, the first record matches what the collection holds; the later one must still not replace it.
    lines = [{"docno": "d1", "text": "first"}, {"docno": "d1", "text": "second"}]
    path = write_file("rerank.jsonl", "\n".join(map(json.dumps, lines)))
    import_documents(campaign=campaign, paths=[path])

    again = import_documents(campaign=campaign, paths=[path])

    assert stored(campaign)["d1"][1] == "first"
    assert (again.counts["created"], again.counts["updated"], again.counts["unchanged"]) == (0, 0, 2)


def test_overlong_urls_are_left_out(campaign, write_file):
    long_url = "http://example.org/" + "a" * 2000
    summary = import_documents(campaign=campaign, paths=[write_file("long.jsonl", json.dumps({"docno": "d1", "text": "ab", "url": long_url}))])
    assert stored(campaign)["d1"][1:5] == ("ab", False, "", {})
    assert summary.warnings == ["1 documents had a URL longer than 2000 characters; it was left out"]


BAD_FILES = [
    ("json.jsonl", '{"id": "a", "contents": "x"}\n{"id": "b", "contents": "y"}\n{"id": "c", "contents": \n', 3, "invalid JSON"),
    ("noid.jsonl", '{"docno": "a", "text": "x"}\n\n{"text": "y"}\n', 3, "document has no id"),
    ("longid.jsonl", '{"docno": "a", "text": "x"}\n{"docno": "' + "d" * 256 + '", "text": "y"}\n', 2, "document id is longer than 255 characters"),
    # PostgreSQL text cannot hold NUL, and dropping it would store a text the file does not have.
    ("nul.jsonl", '{"docno": "a", "text": "x"}\n{"docno": "b", "text": "a\\u0000b"}\n', 2, "a string contains a NUL character"),
    ("nulmeta.jsonl", '{"docno": "a", "text": "x", "extra": "x\\u0000y"}\n', 1, "a string contains a NUL character"),
]


@pytest.mark.parametrize("name, content, line, reason", BAD_FILES)
def test_the_command_names_file_and_line_of_a_bad_record_and_stores_nothing(campaign, write_file, command, name, content, line, reason):
    good = write_file("good.jsonl", PASSAGES)
    path = write_file(name, content)
    result = command("import_documents", campaign.slug, good, path)
    assert result.code == 1
    assert result.err.startswith(f"error: {path}:{line}: {reason}")
    assert not Document.objects.exists()


def test_an_empty_file_is_refused(campaign, write_file, command):
    path = write_file("empty.jsonl", "\n")
    result = command("import_documents", campaign.slug, path)
    assert (result.code, result.err.strip()) == (1, f"error: {path}: the file contains no documents")


def test_progress_counts_lines_up_to_the_total(campaign, write_file):
    calls = []
    progress = SimpleNamespace(advance=lambda done, total=None: calls.append((done, total)))
    import_documents(campaign=campaign, paths=[write_file("a.jsonl", PASSAGES), write_file("b.jsonl.gz", PASSAGES)], progress=progress)
    assert calls[0] == (0, 4) and calls[-1] == (4, 4)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_the_2023_rerank_sample_imports(campaign, touche_data, command):
    path = touche_data / "2023-task2-sample" / "rerank.jsonl.gz"
    result = command("import_documents", campaign.slug, path)
    assert (result.code, result.out.strip()) == (0, f"{path}: 30 documents read, 30 new, 0 updated, 0 unchanged")
    docs = stored(campaign)
    assert len(docs) == 30
    title, body, is_html, url = docs["clueweb12-1106wb-16-17437"][:4]
    assert title == "Eyes hurt looking computer screen"
    assert body.startswith("Eyes hurt looking computer screen") and not is_html
    assert url.startswith("http://www.pingueculae.com/")
    again = command("import_documents", campaign.slug, path)
    assert again.out.strip().endswith("30 documents read, 0 new, 0 updated, 30 unchanged")


def test_a_bad_record_raises_before_anything_is_stored(campaign, write_file):
    with pytest.raises(FormatError) as error:
        import_documents(campaign=campaign, paths=[write_file("bad.jsonl", PASSAGES + "[1, 2]\n")])
    assert (error.value.line, error.value.reason) == (3, "expected a JSON object, got an array")
    assert not Document.objects.exists()


def test_an_import_costs_a_fixed_number_of_queries_not_one_per_document(campaign, write_file, django_assert_max_num_queries):
    lines = "".join(json.dumps({"id": f"p{i}", "contents": f"passage {i}"}) + "\n" for i in range(2000))
    with django_assert_max_num_queries(12):
        summary = import_documents(campaign=campaign, paths=[write_file("many.jsonl", lines)])
    assert summary.counts["created"] == 2000
