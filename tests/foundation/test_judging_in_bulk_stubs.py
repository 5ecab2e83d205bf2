"""record_judgments_in_bulk creates the stubs of documents the collection lacks with a plain INSERT. A collection is
shared by campaigns whose imports do not wait for each other: when another one adds some of the same documents at the
same time, the import still stores every row, on the documents as the other one made them."""

import io
import threading

import pytest
from django.db import connection, connections, transaction

from assessments.models import Document, Judgment
from assessments.services.judging import record_judgments_in_bulk
from tests.factories import TopicFactory, UserFactory


def record(campaign, topic, doc_ids, label=1):
    text = "".join(f"{key}\t{topic.pk}\t{doc}\t{label}\n" for key, doc in enumerate(doc_ids, 1))
    return record_judgments_in_bulk(campaign=campaign, rows=io.BytesIO(text.encode()), dimension="relevance",
                                    assessor=UserFactory(username="lastyear"), phase="main")


@pytest.mark.django_db(transaction=True)
def test_documents_another_import_adds_at_the_same_time_are_judged_as_it_made_them(campaign):
    topic = TopicFactory(campaign=campaign, number="1")
    inserted, release = threading.Event(), threading.Event()

    def another_import():
        """Adds d2 and commits only once the import below is waiting on it (its INSERT hits d2's index entry)."""
        try:
            with transaction.atomic():
                Document.objects.create(collection=campaign.collection, doc_id="d2", title="Added elsewhere")
                inserted.set()
                release.wait(10)
        finally:
            connections.close_all()

    other = threading.Thread(target=another_import)
    other.start()
    assert inserted.wait(10)
    threading.Timer(1.0, release.set).start()  # the import's stubs INSERT is blocked on d2 by then
    statements = []

    def logged(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(logged), transaction.atomic():
        recorded = record(campaign, topic, ["d1", "d2", "d3"])
    other.join(10)

    assert any("ON CONFLICT" in sql for sql in statements)  # the plain INSERT met d2, and the stubs were made again

    assert (recorded.created, recorded.stubs) == (3, 2)
    documents = dict(Document.objects.filter(collection=campaign.collection).values_list("doc_id", "title"))
    assert documents == {"d1": "", "d2": "Added elsewhere", "d3": ""}
    judged = Judgment.objects.filter(topic=topic).values_list("document__doc_id", "labels")
    assert sorted(judged) == [("d1", {"relevance": 1}), ("d2", {"relevance": 1}), ("d3", {"relevance": 1})]


@pytest.mark.django_db
def test_rows_on_known_documents_make_no_stubs(campaign):
    topic = TopicFactory(campaign=campaign, number="1")
    Document.objects.create(collection=campaign.collection, doc_id="d1")
    recorded = record(campaign, topic, ["d1", "d2", "d2x"])
    assert (recorded.created, recorded.stubs) == (3, 2)
