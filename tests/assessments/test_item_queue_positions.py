"""A coder's queue stays in pool order after every change to their assignment's items: items given, given again after a
re-import, taken from a withdrawn coder and given to one who holds later items of the same proposal, restored from
an archive; and an overlap slice's. The queue is read from the items' stored positions (AssignmentItem), so these
check what the coder sees (the judge page's position, the queue API's list, the position of a document), never the
column."""

import pytest
from django.db import connection

from accounts.models import Role, User
from assessments.models import Assignment, AssignmentItem, Campaign, PoolEntry
from assessments.selectors.queues import assignment_queue, position_of, queue_position
from assessments.services import campaigns
from assessments.services.archive_export import export_campaign
from assessments.services.archive_import import import_campaign
from assessments.services.assignments import withdraw_assignment
from assessments.services.imports.items import import_items
from assessments.services.item_assignments import assign_items

pytestmark = pytest.mark.django_db

HEADER = "id\tid_prop\talignment\tcomment\tdepth\tthread_id\tlast_comment_in_thread\tupvote\tdownvote\tTopic\tlan\ttime\tlabel\n"
PROPOSALS = (
    "id\ttitle\tproposal\tproposal_en\ttitle_en\tTopic\tlan\tendorsements\n"
    "238\tFrontex stärken\tMehr Mittel.\tMore funds.\tStrengthen Frontex\tMigration\tde\t12\n"
    "239\tGrenzen öffnen\tWeniger Kontrollen.\tFewer checks.\tOpen borders\tMigration\tde\t3\n"
)


def write_comments(path, comments):
    """comments: (id, proposal, language) in file order."""
    path.write_text(HEADER + "".join(
        f"{cid}\t{proposal}\t---\tText of {cid}.\t0.0\t\tFalse\t1\t0\tMigration\t{lan}\t2021-04-21\t---\n"
        for cid, proposal, lan in comments
    ), encoding="utf-8")
    return path


def seen(assignment: Assignment) -> list[str]:
    """The doc ids of the coder's queue, position by position as the judge page walks it, after checking that the
    queue API lists the same and that each document is found at its position."""
    assignment = Assignment.objects.select_related("topic__campaign").get(pk=assignment.pk)
    walked, totals = [], set()
    while (here := queue_position(assignment, len(walked) + 1, with_document=True)) is not None:
        assert here.position == len(walked) + 1
        walked.append(here.document.doc_id)
        totals.add(here.total)
    assert totals <= {len(walked)}
    listed = [PoolEntry.objects.get(pk=e.entry_id).document.doc_id for e in assignment_queue(assignment)]
    assert listed == walked
    for position, doc_id in enumerate(walked, 1):
        entry = PoolEntry.objects.get(topic=assignment.topic, document__doc_id=doc_id)
        assert position_of(assignment, entry.document_id) == position
    return walked


def pool_order(assignment: Assignment) -> list[str]:
    """The doc ids of the assignment's items in the pool's order (entry `order`, then id): the queue it must show."""
    held = AssignmentItem.objects.filter(assignment=assignment).values("entry_id")
    return list(PoolEntry.objects.filter(pk__in=held).order_by("order", "pk").values_list("document__doc_id", flat=True))


@pytest.fixture
def cofe(db) -> Campaign:
    return campaigns.create_campaign(slug="cofe", name="CoFE", preset="touche-2023-task4")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "proposals.tsv").write_text(PROPOSALS, encoding="utf-8")
    return tmp_path


def coder(name: str, *languages: str) -> User:
    return User.objects.create_user(name, password=f"{name}-password-1", role=Role.ASSESSOR, languages=list(languages))


def assignment_of(user: User, proposal: str = "238") -> Assignment:
    return Assignment.objects.get(assessor=user, topic__number=proposal)


# Proposal 238: c0 en, c1 de, c2 en, c3 de, c4 en, c5 de; proposal 239: d0 en, d1 de.
FIRST = [(f"c{i}", "238", "en" if i % 2 == 0 else "de") for i in range(6)] + [("d0", "239", "en"), ("d1", "239", "de")]


def test_items_given_show_in_pool_order_and_a_reimport_adds_its_new_comments_after_them(cofe, files):
    import_items(campaign=cofe, comments=write_comments(files / "a.tsv", FIRST), proposals=files / "proposals.tsv")
    ann = coder("ann", "en", "de")
    assign_items(campaign=cofe, coders=[ann], batch=4)  # a batch: c0 to c3 now, the rest waits

    assert seen(assignment_of(ann)) == ["c0", "c1", "c2", "c3"]

    assign_items(campaign=cofe, coders=[ann])  # the next batch: c4, c5 after the first; d0, d1 on their own proposal
    assert seen(assignment_of(ann)) == ["c0", "c1", "c2", "c3", "c4", "c5"] == pool_order(assignment_of(ann))
    assert seen(assignment_of(ann, "239")) == ["d0", "d1"]

    # A re-import with new comments of both proposals, one of them written first in the file: the pool adds them
    # after the comments there already, and so does the coder's queue.
    again = [("c7", "238", "en"), *FIRST, ("c6", "238", "de"), ("d2", "239", "en")]
    import_items(campaign=cofe, comments=write_comments(files / "b.tsv", again), proposals=files / "proposals.tsv")
    assign_items(campaign=cofe, coders=[ann])

    assert seen(assignment_of(ann)) == ["c0", "c1", "c2", "c3", "c4", "c5", "c7", "c6"] == pool_order(assignment_of(ann))
    assert seen(assignment_of(ann, "239")) == ["d0", "d1", "d2"]


def test_items_of_a_withdrawn_coder_join_another_coders_queue_in_pool_order(cofe, files):
    import_items(campaign=cofe, comments=write_comments(files / "a.tsv", FIRST), proposals=files / "proposals.tsv")
    ann, ben = coder("ann", "en"), coder("ben", "de")
    assign_items(campaign=cofe, coders=[ann, ben])
    assert seen(assignment_of(ann)) == ["c0", "c2", "c4"]
    assert seen(assignment_of(ben)) == ["c1", "c3", "c5"]

    # Ann leaves proposal 238; Ben learns English and is given her items, between his own.
    withdraw_assignment(campaign=cofe, assignment_id=assignment_of(ann).pk, by=None)
    ben.languages = ["de", "en"]
    ben.save(update_fields=["languages"])
    assign_items(campaign=cofe, coders=[ben])

    assert seen(assignment_of(ben)) == ["c0", "c1", "c2", "c3", "c4", "c5"] == pool_order(assignment_of(ben))
    assert seen(assignment_of(ben, "239")) == ["d1"]  # Ann still holds d0

    # Ann comes back to the proposal she left (her assignment reopened): the items she held stay in her queue, in
    # order, with the newly imported comment after them.
    import_items(campaign=cofe, comments=write_comments(files / "b.tsv", [*FIRST, ("c6", "238", "en")]), proposals=files / "proposals.tsv")
    assign_items(campaign=cofe, coders=[ann])
    assert seen(assignment_of(ann)) == ["c0", "c2", "c4", "c6"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="importing a campaign archive needs PostgreSQL (COPY)")
def test_an_archived_coders_queue_comes_back_in_the_same_order(cofe, files, tmp_path):
    import_items(campaign=cofe, comments=write_comments(files / "a.tsv", FIRST), proposals=files / "proposals.tsv")
    ann, ben = coder("ann", "en"), coder("ben", "de")
    assign_items(campaign=cofe, coders=[ann, ben])
    withdraw_assignment(campaign=cofe, assignment_id=assignment_of(ann).pk, by=None)
    ben.languages = ["de", "en"]
    ben.save(update_fields=["languages"])
    assign_items(campaign=cofe, coders=[ben])
    before = {(a.assessor.username, a.topic.number): seen(a) for a in Assignment.objects.filter(topic__campaign=cofe)}

    exported = export_campaign(campaign=cofe, path=tmp_path / "cofe.zip")
    import_campaign(path=exported.path, slug="again")

    restored = Assignment.objects.filter(topic__campaign__slug="again").select_related("assessor", "topic")
    assert {(a.assessor.username, a.topic.number): seen(a) for a in restored} == before
    assert before[("ben", "238")] == ["c0", "c1", "c2", "c3", "c4", "c5"]


def test_saving_one_item_numbers_it_in_its_queue(cofe, files):
    import_items(campaign=cofe, comments=write_comments(files / "a.tsv", FIRST), proposals=files / "proposals.tsv")
    ann = coder("ann", "en")
    assign_items(campaign=cofe, coders=[ann])
    c1 = PoolEntry.objects.get(document__doc_id="c1")

    item = AssignmentItem.objects.create(assignment=assignment_of(ann), entry=c1)  # an admin's or a test's row

    assert item.queue_position == 2 and item.entry_document_id == c1.document_id
    assert seen(assignment_of(ann)) == ["c0", "c1", "c2", "c4"]
