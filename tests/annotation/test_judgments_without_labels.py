"""A flag or a note without any label is a judgment (it is how an assessor says "I cannot judge this"): stored with
its history, counted as not judged, and never a label in qrels or evaluation. And the save the judge page sends when
the assessor keeps their own version over one saved elsewhere."""

import pytest
from django.urls import reverse

from assessments.models import Judgment, JudgmentEvent
from assessments.selectors import queues
from assessments.services import evaluation
from assessments.services.exports import RULE_NAMES, export_qrels, qrels_rows
from assessments.services.judging import Labels, judge_entry, record_judgment

pytestmark = pytest.mark.django_db


def flag_then_note(assignment, entry) -> Judgment:
    """What the judge page sends for m, then a note, on a document without labels."""
    judge_entry(assignment=assignment, entry=entry, changes={"flagged": True}, base_revision=0, time_spent_ms=900)
    return judge_entry(
        assignment=assignment, entry=entry, changes={"note": "Cannot judge: the page is in Latin."}, base_revision=1,
        time_spent_ms=4000,
    )


def test_a_flag_and_a_note_alone_are_stored_with_their_history_and_leave_the_document_unjudged(assignment, pool):
    judgment = flag_then_note(assignment, pool[0])
    assert (judgment.labels, judgment.note, judgment.flagged, judgment.revision) == ({}, "Cannot judge: the page is in Latin.", True, 2)
    history = JudgmentEvent.objects.filter(judgment=judgment).order_by("revision").values_list("revision", "labels", "note", "flagged")
    assert list(history) == [(1, {}, "", True), (2, {}, "Cannot judge: the page is in Latin.", True)]
    here = queues.queue_position(assignment, 1)
    assert here is not None
    assert (here.is_judged, here.judged, here.labels and here.labels["flagged"]) == (False, 0, True)


@pytest.mark.parametrize("rule", [*RULE_NAMES, "assessor:alice"])
def test_a_judgment_without_labels_writes_no_qrels_line_whatever_the_rule(assignment, bob_assignment, pool, rule):
    flag_then_note(assignment, pool[0])
    flag_then_note(bob_assignment, pool[0])
    judge_entry(assignment=assignment, entry=pool[1], labels=Labels({"relevance": 1}, flagged=True), time_spent_ms=0)
    topic = assignment.topic
    expected = [(topic.number, pool[1].document.doc_id, 1)]
    assert list(qrels_rows(campaign=topic.campaign, phase="training", rule=rule)) == expected
    exported = b"".join(export_qrels(campaign=topic.campaign, phase="training", rule=rule))
    assert exported.decode().splitlines() == [f"{topic.number} 0 {pool[1].document.doc_id} 1"]


def test_evaluation_reads_no_label_from_a_judgment_without_labels(assignment, pool):
    flag_then_note(assignment, pool[0])
    judge_entry(assignment=assignment, entry=pool[1], labels=Labels({"relevance": 2}), time_spent_ms=0)
    topic = assignment.topic
    prepared = evaluation.prepare(
        campaign=topic.campaign, measure="nDCG@5", kinds=(), order="score", trec_eval=10, phase="training", rule="majority",
    )
    assert prepared.qrels == {"relevance": {topic.number: {pool[1].document.doc_id: 2}}}


def test_keeping_your_version_sends_every_field_that_differs_from_the_one_saved_elsewhere(login, assignment, pool):
    """Another tab stored 2 / high quality; this tab showed relevance 0 (which asks no quality). Its changes alone over
    the stored version make relevance 0 with high quality, which the scheme refuses; the whole difference is what
    the page showed."""
    entry = pool[0]
    record_judgment(topic=assignment.topic, document=entry.document, assessor=assignment.assessor, phase="training",
                    labels=Labels({"relevance": 2, "quality": 2}))
    client = login(assignment.assessor)
    url = reverse("work-judgment", args=[assignment.pk, entry.pk])

    changes_alone = client.patch(url, {"labels": {"relevance": 0}, "base_revision": 1}, content_type="application/json")
    assert changes_alone.status_code == 400 and "quality is asked only when" in changes_alone.json()["detail"]

    whole = client.patch(url, {"labels": {"relevance": 0, "quality": None}, "base_revision": 1}, content_type="application/json")
    assert whole.status_code == 200
    assert (whole.json()["labels"], whole.json()["revision"]) == ({"relevance": 0}, 2)
