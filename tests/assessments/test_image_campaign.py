"""A Touché Task 3 campaign end to end on the organisers' sample (50 real images in the collection's layout): the
images imported and served only to who may see them, runs made from the sample's own search rankings imported and
pooled, images judged through the assessor API, the lab's qrels exported, and every figure of the three
precision@10 measures equal to the organisers' submission-evaluator.sh run on the exported qrels and each run file."""

import json
import random
from pathlib import Path

import pytest
from django.urls import reverse

from accounts.models import User
from assessments.formats.image_collection import read_image_collection
from assessments.formats.image_runs import write_image_run
from assessments.metrics.image_precision import MEASURES
from assessments.models import Assignment, Campaign, Document, PoolEntry, Ranking
from tests.task3_scorer import HEADER, organisers_output

pytestmark = pytest.mark.django_db


def sample_runs(sample: Path, topics: set[str]) -> dict[str, str]:
    """Two runs from the sample's rankings: the organisers' baseline rule (the page's search said " good": PRO,
    " anti": CON; its rank), and a shuffled one that leaves a topic out and lists fewer than ten."""
    found: dict[tuple[str, str], dict[str, int]] = {}
    for record in read_image_collection(sample / "images"):
        for page in record.pages:
            for q in page.queries:
                stance = "PRO" if " good" in q.query else "CON" if " anti" in q.query else None
                if stance and q.topic in topics:  # the crawl's searches cover more topics than the sample's queries
                    best = found.setdefault((q.topic, stance), {})
                    best[record.id] = min(best.get(record.id, q.rank), q.rank)
    rng = random.Random(3)
    baseline, shuffled = [], []
    numbers = sorted({topic for topic, _ in found})
    for (topic, stance), images in sorted(found.items()):
        ordered = sorted(images, key=lambda i: (images[i], i))[:10]
        baseline += [(topic, stance, image, rank, 1.0 / rank) for rank, image in enumerate(ordered, 1)]
        if topic != numbers[-1]:
            picked = rng.sample(ordered, max(1, len(ordered) // 2))
            shuffled += [(topic, stance, image, rank, 10.0 - rank) for rank, image in enumerate(picked, 1)]
    return {"baseline": write_image_run(baseline, tag="baseline"), "shuffled": write_image_run(shuffled, tag="shuffled")}


@pytest.fixture
def campaign(db, command, touche_data, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    sample = touche_data / "2023-task3-sample"
    topics = [json.loads(line) for line in (sample / "queries.jsonl").read_text().splitlines()]
    (tmp_path / "topics.tsv").write_text("".join(f"{t['qid']}\t{t['query']}\n" for t in topics))
    assert command("create_campaign", "img23", "--name", "Image retrieval", "--preset", "touche-2023-task3").code == 0
    assert command("import_topics", "img23", tmp_path / "topics.tsv").code == 0
    done = command("import_images", "img23", sample)
    assert done.code == 0, done.err
    assert "50 images stored" in done.out and "50 thumbnails made" in done.out
    runs = sample_runs(sample, {t["qid"] for t in topics})
    for tag, text in runs.items():
        (tmp_path / f"{tag}.txt").write_text(text)
    done = command("import_runs", "img23", tmp_path / "baseline.txt", tmp_path / "shuffled.txt")
    assert done.code == 0, done.err
    assert command("build_pool", "img23", "--depth", "20").code == 0
    command("create_user", "alice", "--role", "assessor", "--password", "images-alice-password")
    assert command("assign_topics", "img23", "--auto", "--assessors", "alice").code == 0
    return Campaign.objects.get(slug="img23"), runs


def test_images_are_stored_as_files_with_their_pages_and_pooled_from_both_stances(campaign):
    campaign, runs = campaign
    image = Document.objects.get(collection=campaign.collection, doc_id="Ibaa25a9245a3cd96")
    meta = image.metadata
    assert meta["image"]["content_type"] == "image/png"  # named image.webp, really a PNG: served as what it is
    assert meta["image"]["thumbnail"] and meta["pages"] and meta["pages"][0]["url"].startswith("http")
    assert image.body == "" and image.url.startswith("http")
    rankings = Ranking.objects.filter(run__tag="baseline")
    assert {s for r in rankings for s in r.stances} == {"PRO", "CON"}
    pooled = set(PoolEntry.objects.filter(topic__campaign=campaign).values_list("document__doc_id", flat=True))
    assert pooled == {r.docs[i] for r in rankings for i in range(r.length)} | {
        d for r in Ranking.objects.filter(run__tag="shuffled") for d in r.docs}


def test_an_image_is_served_as_its_checked_type_only_to_who_may_see_it(campaign, client):
    campaign, _ = campaign
    alice = User.objects.get(username="alice")
    assignment = Assignment.objects.filter(assessor=alice).first()
    entry = PoolEntry.objects.filter(topic=assignment.topic).select_related("document").first()
    client.force_login(alice)
    served = client.get(reverse("annotation:image", args=[assignment.pk, entry.pk]))
    assert served.status_code == 200 and served["Content-Type"] == entry.document.metadata["image"]["content_type"]
    assert served["X-Content-Type-Options"] == "nosniff" and "sandbox" in served["Content-Security-Policy"]
    thumb = client.get(reverse("annotation:thumbnail", args=[assignment.pk, entry.pk]))
    assert thumb.status_code == 200 and thumb["Content-Type"] == "image/webp"
    # Another assessor, and an organiser of no campaign using the collection, get nothing.
    bob = User.objects.create_user("bob", password="images-bob-password")
    client.force_login(bob)
    assert client.get(reverse("annotation:image", args=[assignment.pk, entry.pk])).status_code == 404
    olga = User.objects.create_user("olga", password="images-olga-password", role="organiser")
    client.force_login(olga)
    assert client.get(reverse("assessments:image", args=["img23", entry.document_id])).status_code == 404


def test_every_figure_equals_the_organisers_evaluator_on_the_exported_qrels(campaign, client, command, touche_data, gawk_on_path, tmp_path):
    campaign, runs = campaign
    rng = random.Random(11)
    alice = User.objects.get(username="alice")
    client.force_login(alice)
    for assignment in Assignment.objects.filter(assessor=alice):
        for entry in PoolEntry.objects.filter(topic=assignment.topic, duplicate_of__isnull=True):
            if rng.random() < 0.2:
                continue  # left unjudged: off topic for the evaluator
            labels = {"ONTOPIC": int(rng.random() < 0.7)}
            if labels["ONTOPIC"]:
                labels |= {side: 1 for side in ("PRO", "CON") if rng.random() < 0.5}  # an unmarked side is a no
            answer = client.put(reverse("work-judgment", args=[assignment.pk, entry.pk]), {"labels": labels},
                                content_type="application/json")
            assert answer.status_code == 200, answer.content

    exported = command("export_qrels", "img23")
    assert exported.code == 0 and exported.out.count("\n") % 3 == 0
    figures = json.loads(command("evaluate_runs", "img23", "--format", "json").out)
    for tag, text in runs.items():
        table, measures = organisers_output(touche_data, gawk_on_path, tmp_path, exported.out, text)
        theirs = {line.split(",")[0]: line.split(",")[1:] for line in table.splitlines() if line and line != HEADER}
        rows = {r["measure"]: r for r in figures if r["run"] == tag}
        # The output file: the three overall measures, as the script writes them.
        assert measures == "".join(f'measure {{\n key: "{m}"\n value: "{rows[m]["mean"]:.3f}"\n}}\n' for m in MEASURES), tag
        # The table: each topic's three measures over both stances, then per stance.
        for topic, cells in theirs.items():
            ours = [rows[m]["per_topic"][topic] for m in MEASURES]
            ours += [rows[m]["per_stance"][topic][stance] for stance in ("PRO", "CON") for m in MEASURES]
            assert [f"{v:.2f}" for v in ours] == cells, (tag, topic)
        assert set(rows[MEASURES[0]]["per_topic"]) == set(theirs) and theirs, tag  # the shuffled run lacks a topic
    assert len({r["mean"] for r in figures}) > 1  # the figures differ by run and measure: nothing trivially 0 or 1
