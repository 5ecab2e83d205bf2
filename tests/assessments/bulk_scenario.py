"""One small campaign stored through every writer of services.bulk, and everything it wrote, read back.

test_bulk.py runs it on PostgreSQL (COPY) in the test process and on a real SQLite database (the ORM branches) in a
subprocess, and compares the two. Values are chosen to trip COPY's and PostgreSQL arrays' syntax: backslashes,
tabs, CR/LF, quotes, commas, braces, and ids spelled NULL or \\N.
"""

import json
from pathlib import Path

from assessments.models import Document, PoolEntry, PoolSource, Ranking, Topic
from assessments.services.campaigns import create_campaign
from assessments.services.imports.documents import import_documents
from assessments.services.imports.runs import import_runs
from assessments.services.imports.topics import import_topics
from assessments.services.pooling import PoolSpec, build_pool

TOPICS = """<topics>
<topic><number>1</number><title>Cats or dogs?</title><objects>cats, dogs</objects></topic>
<topic><number>2</number><title>Tea or coffee?</title><objects>tea, coffee</objects></topic>
</topics>"""

TEXT = " ".join(f"word{i}" for i in range(40))
DOCUMENTS = [
    {"docno": "d\\1", "text": "tab\there, back\\slash,\r\nCRLF", "title": "\\N", "note": {"k": "a\\b\nc\td"}},
    {"docno": "plain", "text": "Cats."},
    {"docno": "plain", "text": "A repeated id: the first record wins."},
    {"docno": "copy-a", "text": TEXT},
    {"docno": "copy-b", "text": TEXT.upper() + "!"},  # the same normalised text: one duplicate group
    {"docno": "html", "html": "<p>Some <b>bold</b> text</p><script>x()</script>"},
]
# Ids that PostgreSQL's array and COPY syntax would misread unless quoted and escaped, and ids with no document.
ODD_IDS = ["back\\slash", 'quo"te', "com,ma", "{brace}", "NULL", "null", "\\N", "x\\\\y"]
RUN_A = "".join(
    f"1 Q0 {doc} {rank} {score} a\n"
    for rank, (doc, score) in enumerate([("d\\1", 2.9), ("copy-a", 3.0), ("copy-b", 2.5), ("plain", 2.0), ("html", 1.0)], 1)
) + "".join(f"1 FIRST {doc} {rank} 1.0 a\n" for rank, doc in enumerate(ODD_IDS, 6)) + "2 Q0 plain 1 1.0 a\n2 Q0 ghost 2 0.5 a\n"
RUN_B = "1 Q0 html 1 9.0 b\n1 Q0 only-b 2 8.0 b\n2 Q0 ghost 1 2.0 b\n"


def run(folder: Path) -> dict:
    """Store the campaign (documents twice: the second import must change nothing) and return what was stored."""
    campaign = create_campaign(slug="bulk", name="Bulk", preset="touche-2022-task2")
    (folder / "topics.xml").write_text(TOPICS)
    (folder / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS))
    (folder / "a.txt").write_text(RUN_A)
    (folder / "b.txt").write_text(RUN_B)
    import_topics(campaign=campaign, path=folder / "topics.xml")
    Topic.objects.filter(campaign=campaign).update(pool_seed=7)  # the order assessors see, the same on both databases
    counts = {
        "first": import_documents(campaign=campaign, paths=[folder / "documents.jsonl"]).counts,
        "again": import_documents(campaign=campaign, paths=[folder / "documents.jsonl"]).counts,
    }
    import_runs(campaign=campaign, paths=[folder / "a.txt", folder / "b.txt"])
    # Rank order first, then both orders: the second build adds entries and fills in the score positions of the
    # sources the first one recorded.
    builds = [build_pool(campaign=campaign, spec=PoolSpec(depth=3, order=order)) for order in ("rank", "both")]
    counts["builds"] = [[b.added, b.total, b.stubs_created, b.twins] for b in builds]
    return {"counts": counts, **stored(campaign)}


def stored(campaign) -> dict:
    """Every row the writers stored, keyed by ids that do not depend on the database (no primary keys)."""
    documents = Document.objects.filter(collection=campaign.collection).order_by("doc_id").values_list(
        "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash"
    )
    rankings = Ranking.objects.filter(run__campaign=campaign).order_by("run__tag", "topic__number").values_list(
        "run__tag", "topic__number", "length", "docs", "ranks", "scores", "stances", "by_rank"
    )
    entries = PoolEntry.objects.filter(topic__campaign=campaign).order_by("topic__number", "order").values_list(
        "topic__number", "document__doc_id", "order", "strategy", "duplicate_of__document__doc_id"
    )
    sources = PoolSource.objects.filter(entry__topic__campaign=campaign).order_by(
        "entry__topic__number", "entry__document__doc_id", "run__tag"
    ).values_list("entry__topic__number", "entry__document__doc_id", "run__tag", "rank_position", "score_position")
    return {
        "documents": [list(row) for row in documents],
        "rankings": [[tag, number, length, list(docs), list(ranks), list(scores), stances and list(stances),
                      by_rank and list(by_rank)] for tag, number, length, docs, ranks, scores, stances, by_rank in rankings],
        "entries": [list(row) for row in entries],
        "sources": [list(row) for row in sources],
    }
