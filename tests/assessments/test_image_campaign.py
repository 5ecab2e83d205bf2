"""A Touché Task 3 campaign end to end on the organisers' sample (50 real images in the collection's layout): the
images imported and served only to who may see them, runs made from the sample's own search rankings imported and
pooled, images judged through the assessor API, the lab's qrels exported, and every figure of the three
precision@10 measures equal to the organisers' submission-evaluator.sh run on the exported qrels and each run file."""

import json
import random

import pytest
from django.urls import reverse

from accounts.models import User
from assessments.metrics.image_precision import MEASURES
from assessments.models import Assignment, Campaign, Document, PoolEntry, Ranking
from tests.task3_scorer import HEADER, organisers_output

pytestmark = pytest.mark.django_db


def test_images_are_stored_as_files_with_their_pages_and_pooled_from_both_stances(image_campaign):
    campaign, runs = image_campaign
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


def test_an_image_is_served_as_its_checked_type_only_to_who_may_see_it(image_campaign, client):
    campaign, _ = image_campaign
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


def test_every_figure_equals_the_organisers_evaluator_on_the_exported_qrels(image_campaign, client, command, touche_data, gawk_on_path, tmp_path):
    campaign, runs = image_campaign
    Campaign.objects.filter(pk=campaign.pk).update(phase="main")  # main-phase topics open with the main phase
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

    # The exported file read back as an import source's answers gives the same figures, and exports the same.
    (tmp_path / "exported.qrels").write_text(exported.out)
    imported = command("import_qrels", "img23", tmp_path / "exported.qrels", "--assessor", "touche23")
    assert imported.code == 0, imported.err
    assert f"{exported.out.count(chr(10))} answers" in imported.out
    again = json.loads(command("evaluate_runs", "img23", "--format", "json", "--rule", "assessor:touche23").out)
    assert again == figures
    assert command("export_qrels", "img23", "--rule", "assessor:touche23").out == exported.out


def test_copies_of_one_picture_are_grouped_by_phash_distance_and_judged_once(image_campaign, settings):
    from assessments.services.duplicates import group_duplicates

    campaign, _ = image_campaign
    assert not PoolEntry.objects.filter(topic__campaign=campaign, duplicate_of__isnull=False).exists()  # ≥ 18 bits apart
    topic = campaign.topics.order_by("number").first()
    first, second, third = PoolEntry.objects.filter(topic=topic).select_related("document").order_by("order")[:3]
    base = int(first.document.metadata["image"]["phash"], 16)
    for entry, flipped in ((second, 0b1011), (third, 0b11111 << 8)):  # 3 and 5 bits away (8 from each other)
        entry.document.metadata["image"]["phash"] = f"{base ^ flipped:016x}"
        entry.document.save(update_fields=["metadata"])
    settings.IMAGE_PHASH_DISTANCE = 4

    group_duplicates(campaign=campaign)

    twins = dict(PoolEntry.objects.filter(topic=topic, duplicate_of__isnull=False).values_list("pk", "duplicate_of_id"))
    assert twins == {second.pk: first.pk}  # the third is 5 bits away: another picture at this threshold


def test_the_results_page_and_api_give_the_commands_figures(image_campaign, client, command, django_assert_max_num_queries):
    from assessments.services.image_runs import evaluate_image_runs

    campaign, _ = image_campaign
    with django_assert_max_num_queries(7):  # topics, rankings, runs and one per question: not one per run
        assert len(evaluate_image_runs(campaign)) == 2
    olivia = User.objects.create_user("olivia", password="images-olivia-password", role="organiser")
    from assessments.models import Membership

    Membership.objects.create(campaign=campaign, user=olivia)
    client.force_login(olivia)
    figures = json.loads(command("evaluate_runs", "img23", "--format", "json").out)
    assert client.get(reverse("api-results", args=["img23"])).json() == figures
    page = client.get(reverse("assessments:leaderboard", args=["img23"])).content.decode()
    baseline = next(r for r in figures if r["run"] == "baseline" and r["measure"] == "topicRelevanceP@10")
    assert "submission-evaluator.sh" in page and "baseline" in page and f"{baseline['mean']:.3f}" in page
