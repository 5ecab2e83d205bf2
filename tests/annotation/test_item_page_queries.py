"""The labelling page of a classification item (a comment beside its proposal) reads no row per item: the page and
its htmx part (what moving to the next comment fetches) cost the same queries for a proposal of 6 comments as for
one of 300, half of them labelled, as the judge page of a pooled document does (test_pages)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from assessments.formats.cofe import COMMENT_COLUMNS, Comment, write_comments
from assessments.models import Assignment, AssignmentItem, Campaign

pytestmark = pytest.mark.django_db
LANGUAGES = ("en", "fr", "de")


def coded(command, tmp_path, slug: str, comments: int) -> Assignment:
    """A campaign of one proposal with `comments` comments, all given to cleo, every other one labelled by her."""
    rows = [Comment(id=f"{slug}_{n}", proposal="238", text=f"Comment {n} on the proposal.", language=LANGUAGES[n % 3], label=None)
            for n in range(comments)]
    (tmp_path / f"{slug}.tsv").write_text(write_comments(rows, COMMENT_COLUMNS), encoding="utf-8")
    command("create_campaign", slug, "--name", slug, "--preset", "touche-2023-task4")
    assert command("import_items", slug, tmp_path / f"{slug}.tsv").code == 0
    assert command("assign_items", slug, "--coders", "cleo").code == 0
    Campaign.objects.filter(slug=slug).update(phase="main")
    assignment = Assignment.objects.get(assessor__username="cleo", topic__campaign__slug=slug)
    assert assignment.scope == Assignment.Scope.OVERLAP  # an item assignment lists its items
    return assignment


def test_the_labelling_page_costs_the_same_queries_whatever_the_number_of_items(
    client, command, tmp_path, session_cache, django_assert_num_queries,
):
    command("create_user", "cleo", "--role", "assessor", "--password", "correct horse battery staple", "--languages", ",".join(LANGUAGES))
    client.force_login(User.objects.get(username="cleo"))
    counts = []
    for slug, size in (("small", 6), ("large", 300)):
        assignment = coded(command, tmp_path, slug, size)
        for item in AssignmentItem.objects.filter(assignment=assignment).order_by("entry__order")[::2]:
            response = client.put(reverse("work-judgment", args=[assignment.pk, item.entry_id]), {"labels": {"stance": "Other"}},
                                  content_type="application/json")
            assert response.status_code == 200
        url = reverse("annotation:judge", args=[assignment.pk, 3])
        client.get(url)  # warm the session cache
        for headers in ({}, {"HX-Request": "true"}):
            with CaptureQueriesContext(connection) as captured:
                response = client.get(url, headers=headers)
            assert response.status_code == 200 and b"Comment 2 on the proposal." in response.content
            counts.append(len(captured))
    assert counts[:2] == counts[2:], counts
    # The user, the assignment with its topic and campaign, the queue position with its comment (the session comes
    # from the cache), for the page and its htmx part alike.
    with django_assert_num_queries(3):
        client.get(reverse("annotation:judge", args=[assignment.pk, 150]), headers={"HX-Request": "true"})
    with django_assert_num_queries(3):
        client.get(reverse("annotation:judge", args=[assignment.pk, 151]))
