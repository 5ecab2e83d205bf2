"""The 600 comments of tests/assessments/test_classification_agreement.py, labelled through the API and on the
labelling page by keys: one coder labels the comments of four of her proposals in the browser, one key each (f, a,
o, the touche-2023-task4 preset's) and j to the next, the other labels go through the assessor API, and the agreement
figures (alpha, Fleiss' kappa, Cohen's kappa per pair, AC1, per language and overall) still equal the reference
packages'. The browser part is a few dozen key presses (well under a minute)."""

import pytest
from django.test import Client
from playwright.sync_api import expect

from accounts.models import User
from assessments.models import Assignment, Document, Judgment
from assessments.selectors.queues import assignment_queue
from tests.assessments.test_classification_agreement import (
    assert_agreement_equals_the_references,
    build,
    label_through_the_api,
    planned_labels,
)
from tests.browser.test_judging_safely import open_position, pressed, saved

pytestmark = pytest.mark.browser
KEYS = {"In favor": "f", "Against": "a", "Other": "o"}
CODER = "dora"  # reads English only: her items include comments two other coders label too
ON_THE_PAGE = 4  # of her proposals: about 25 comments, some 6 s of key presses


def test_part_of_the_600_comments_labelled_on_the_page_by_keys_agrees_as_the_reference_packages_say(
    page, log_in, db, command, tmp_path,
):
    campaign = build(command, tmp_path)
    plan = planned_labels()
    assignments = list(Assignment.objects.filter(assessor__username=CODER).order_by("topic__position", "topic__number")[:ON_THE_PAGE])
    queues = {a: _doc_ids(a) for a in assignments}
    on_the_page = frozenset((CODER, doc) for docs in queues.values() for doc in docs)
    shared = {doc for _, doc in on_the_page if sum(1 for (_, d) in plan if d == doc) > 1}
    assert len(on_the_page) >= 20 and shared, "some of the comments labelled on the page are labelled by others too"
    label_through_the_api(Client(), plan, besides=on_the_page)

    log_in(User.objects.get(username=CODER))
    for assignment, docs in queues.items():
        open_position(page, assignment, 1)
        for position, doc in enumerate(docs, 1):
            expect(page.locator("#pos")).to_have_text(str(position))
            key = KEYS[plan[(CODER, doc)]]
            page.keyboard.press(key)
            expect(pressed(page, key)).to_have_attribute("aria-pressed", "true")
            saved(page)
            if position < len(docs):
                page.keyboard.press("j")
        expect(page.locator("#judged-count")).to_have_text(str(len(docs)))
    assert page.errors == []

    stored = dict(Judgment.objects.filter(topic__campaign=campaign, assessor__username=CODER).values_list("document__doc_id", "labels__stance"))
    assert {doc: stored[doc] for _, doc in on_the_page} == {doc: plan[(CODER, doc)] for _, doc in on_the_page}
    assert Judgment.objects.filter(topic__campaign=campaign).count() == len(plan)
    assert_agreement_equals_the_references(campaign, command)


def _doc_ids(assignment):
    """The comment ids of the assignment's queue, position 1 first."""
    ids = [entry.document_id for entry in assignment_queue(assignment)]
    names = dict(Document.objects.filter(pk__in=ids).values_list("pk", "doc_id"))
    return [names[i] for i in ids]
