"""Depth pools of an image campaign (Touché Task 3): a run ranks images per topic and stance, and a depth-k pool
takes exactly each run's top k of each stance list, with every run that put an image there as its source."""

import pytest
from django.db.models import Count
from django.urls import reverse

from assessments.formats.image_runs import write_image_run
from assessments.metrics.pooling import Contribution, pool_of_heads
from assessments.models import Campaign, PoolEntry, PoolSource

pytestmark = pytest.mark.django_db


def image(n: int) -> str:
    return f"I{n:016x}"


# (topic, stance, image, rank) per run. "lopsided" has a short PRO list and a long CON list for topic 1, where a
# pool of its first 2k interleaved lines would take more CON images than k; "other" lists image 21 for both stances
# (PRO rank 3, CON rank 1), leaves topic 1 CON at one image and topic 2 out, and shares images 1 and 11 with it.
RUNS = {
    "lopsided": [
        *(("1", "PRO", image(n), rank) for rank, n in enumerate((1, 2), 1)),
        *(("1", "CON", image(n), rank) for rank, n in enumerate(range(11, 21), 1)),
        *(("2", "PRO", image(n), rank) for rank, n in enumerate(range(41, 51), 1)),
    ],
    "other": [
        *(("1", "PRO", image(n), rank) for rank, n in enumerate((22, 1, 21, 23, 24, 25, 26, 27, 28, 29), 1)),
        ("1", "CON", image(21), 1),
        ("1", "CON", image(11), 2),
    ],
}


def top_k(k: int) -> dict[str, dict[str, dict[str, int]]]:
    """topic -> image -> run -> its best position in a stance list of that run, for each run's first k per stance,
    worked out from the lines written (positions are ranks here: every list starts at 1 and has no gap)."""
    pooled: dict[str, dict[str, dict[str, int]]] = {}
    for tag, lines in RUNS.items():
        for topic, _, doc, rank in lines:
            if rank <= k:
                sources = pooled.setdefault(topic, {}).setdefault(doc, {})
                sources[tag] = min(rank, sources.get(tag, rank))
    return pooled


@pytest.fixture
def campaign(db, command, tmp_path):
    """An image campaign with two topics and the two runs above; no image is in its collection (pooled as stubs)."""
    assert command("create_campaign", "img-pool", "--name", "Image pools", "--preset", "touche-2023-task3").code == 0
    (tmp_path / "topics.tsv").write_text("1\tShould teachers get tenure?\n2\tIs vaping with e-cigarettes safe?\n")
    assert command("import_topics", "img-pool", tmp_path / "topics.tsv").code == 0
    paths = []
    for tag, lines in RUNS.items():
        paths.append(tmp_path / f"{tag}.txt")
        paths[-1].write_text(write_image_run([(t, s, i, r, 1.0 / r) for t, s, i, r in lines], tag=tag))
    done = command("import_runs", "img-pool", *paths)
    assert done.code == 0, done.err
    return Campaign.objects.get(slug="img-pool")


def pooled(campaign) -> dict[str, dict[str, dict[str, tuple]]]:
    """topic -> image -> run -> (rank position, score position), as stored."""
    found: dict[str, dict[str, dict[str, tuple]]] = {}
    for entry in PoolEntry.objects.filter(topic__campaign=campaign).select_related("topic", "document"):
        found.setdefault(entry.topic.number, {})[entry.document.doc_id] = {}
    rows = PoolSource.objects.filter(entry__topic__campaign=campaign).values_list(
        "entry__topic__number", "entry__document__doc_id", "run__tag", "rank_position", "score_position"
    )
    for topic, doc, tag, by_rank, by_score in rows:
        found[topic][doc][tag] = (by_rank, by_score)
    return found


def as_stored(expected: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, dict[str, tuple]]]:
    """A stance list is read by its rank only: its position is the source's rank position, and it has no score one."""
    return {topic: {doc: {tag: (p, None) for tag, p in runs.items()} for doc, runs in docs.items()} for topic, docs in expected.items()}


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_depth_k_build_takes_each_runs_top_k_of_each_stance_with_its_sources(campaign, command, k):
    done = command("build_pool", "img-pool", "--depth", k)

    assert done.code == 0, done.err
    assert pooled(campaign) == as_stored(top_k(k))
    assert f"img-pool: depth {k} per stance" in done.out


def test_a_short_pro_list_gives_no_extra_con_image(campaign, command):
    command("build_pool", "img-pool", "--depth", "3", "--runs", "lopsided")

    # The interleaved list's first six lines are PRO 1, CON 1, PRO 2, CON 2, CON 3, CON 4: CON 4 stays out.
    assert set(pooled(campaign)["1"]) == {image(1), image(2), image(11), image(12), image(13)}


def test_an_image_both_stance_lists_hold_keeps_its_better_position(campaign, command):
    command("build_pool", "img-pool", "--depth", "3", "--runs", "other")

    assert pooled(campaign)["1"][image(21)] == {"other": (1, None)}  # PRO rank 3, CON rank 1


@pytest.mark.parametrize("k", [10, 20])
def test_depth_ten_or_more_pools_every_submitted_image(campaign, command, k):
    command("build_pool", "img-pool", "--depth", k)

    submitted = {}
    for lines in RUNS.values():
        for topic, _, doc, _ in lines:
            submitted.setdefault(topic, set()).add(doc)
    assert {topic: set(docs) for topic, docs in pooled(campaign).items()} == submitted
    assert pooled(campaign) == as_stored(top_k(10))


def test_a_deeper_build_adds_what_the_deeper_lists_hold_and_names_its_entries(campaign, command):
    command("build_pool", "img-pool", "--depth", "2")
    command("build_pool", "img-pool", "--depth", "4")

    assert pooled(campaign) == as_stored(top_k(4))
    tags = dict(PoolEntry.objects.values("strategy").annotate(n=Count("pk")).values_list("strategy", "n"))
    added_by_4 = sum(len(docs) for docs in top_k(4).values()) - sum(len(docs) for docs in top_k(2).values())
    assert tags == {"depth-2-stance": sum(len(docs) for docs in top_k(2).values()), "depth-4-stance": added_by_4}


def test_the_api_builds_and_previews_per_stance(campaign, api, django_capture_on_commit_callbacks):
    base = "/api/campaigns/img-pool/pool/"
    expected = sum(len(docs) for docs in top_k(3).values())

    preview = api.get(base + "preview/", {"strategy": "depth", "depth": 3})
    assert preview.status_code == 200 and preview.json()["added"] == expected
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(base + "build/", {"strategy": "depth", "depth": 3, "order": "score"}, format="json")

    assert response.status_code == 202
    job = api.get(f"/api/jobs/{response.json()['id']}/").json()
    assert job["status"] == "succeeded" and job["result"]["summary"].startswith(f"depth 3 per stance (each run's top 3 of each stance list, by rank): added {expected}")
    assert pooled(campaign) == as_stored(top_k(3))


def test_the_command_and_the_page_preview_per_stance(campaign, command, client, organiser):
    expected = sum(len(docs) for docs in top_k(3).values())

    done = command("build_pool", "img-pool", "--depth", "3", "--preview")
    client.force_login(organiser)
    page = client.get(reverse("assessments:pool", args=["img-pool"]), {"strategy": "depth", "depth": 3, "order": "both"})

    assert f"{expected} documents to add" in done.out and "preview of depth 3 per stance" in done.out
    html = page.content.decode()
    assert page.context["preview"].added == expected and "Preview: depth 3 per stance" in html and "depth 10 per stance" in html
    assert not PoolEntry.objects.exists()


def test_pool_of_heads_cuts_each_stance_list_at_the_depth():
    heads = {"r": {"PRO": ["p1", "x"], "CON": ["x", "c2", "c3"]}, "s": {"PRO": [], "CON": ["c3"]}}

    assert pool_of_heads(heads, depth=2) == {
        "c2": [Contribution("r", "rank", 2)],
        "c3": [Contribution("s", "rank", 1)],
        "p1": [Contribution("r", "rank", 1)],
        "x": [Contribution("r", "rank", 2), Contribution("r", "rank", 1)],
    }
