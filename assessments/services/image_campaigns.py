"""What an image campaign (Touché Task 3) reads back: each image's decided answers and a run's two lists per topic.

A run of Task 3 ranks images for each topic twice, once per stance (PRO, CON); its Ranking keeps every line of a
topic with the stance in `stances` and the per-stance rank in `ranks`, so a stance's list is its lines in rank
order. The decided answer to each question (a dimension of the scheme) is what a qrels export of that dimension
writes (services.exports.qrels_rows, the same aggregation rules), so the run browser, the measures and an exported
file agree.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from assessments.formats.image_qrels import write_image_qrels
from assessments.labels import Value
from assessments.models import Campaign, Document, Ranking, Run, Topic
from assessments.services.exports import qrels_rows

STANCES = ("PRO", "CON")


def decided_answers(campaign: Campaign, *, rule: str = "majority", phase: str = "main") -> dict[tuple[str, str], dict[str, Value]]:
    """(topic number, image id) -> dimension -> the decided answer, for every judged image (one query per dimension)."""
    answers: dict[tuple[str, str], dict[str, Value]] = defaultdict(dict)
    for name in campaign.label_scheme.names:
        for topic, image, value in qrels_rows(campaign=campaign, kind=name, phase=phase, rule=rule):
            answers[(topic, image)][name] = value
    return dict(answers)


def stance_lists(ranking: Ranking) -> dict[str, list[tuple[int, str]]]:
    """stance -> [(rank, image id)] in rank order, for the two stances (a stance the run left out: empty)."""
    lists: dict[str, list[tuple[int, str]]] = {stance: [] for stance in STANCES}
    for doc, rank, stance in zip(ranking.docs, ranking.ranks, ranking.stances or [None] * ranking.length, strict=True):
        if stance in lists:
            lists[stance].append((rank, doc))
    return {stance: sorted(entries) for stance, entries in lists.items()}


@dataclass(frozen=True)
class BrowsedImage:
    rank: int
    image_id: str
    document_id: int | None  # None: the collection lacks the image
    answers: dict[str, Value]  # decided answers by dimension; empty: unjudged


def topic_answers(campaign: Campaign, topic: Topic, *, rule: str = "majority") -> dict[str, dict[str, Value]]:
    """image id -> dimension -> decided answer, for one topic's judged images."""
    return {image: labels for (number, image), labels in decided_answers(campaign, rule=rule).items() if number == topic.number}


def browse(campaign: Campaign, run: Run, topic: Topic, answers: dict[str, dict[str, Value]]) -> dict[str, list[BrowsedImage]]:
    """A run's two lists for a topic, each image with its decided answers (`topic_answers`, read once a page)."""
    ranking = Ranking.objects.filter(run=run, topic=topic).first()
    lists = stance_lists(ranking) if ranking else {stance: [] for stance in STANCES}
    ids = {image for entries in lists.values() for _, image in entries}
    documents = dict(Document.objects.filter(collection=campaign.collection, doc_id__in=ids).values_list("doc_id", "pk"))
    return {
        stance: [BrowsedImage(rank, image, documents.get(image), answers.get(image, {})) for rank, image in entries]
        for stance, entries in lists.items()
    }


def image_qrels_text(campaign: Campaign, *, rule: str = "majority", phase: str = "main") -> str:
    """The lab's qrels file (`topic QUESTION imageId 0|1`, the three questions of every judged image): what
    submission-evaluator.sh reads. An image is written once its on-topic question is decided; a side left unmarked is
    0 (the scheme's `unanswered`)."""
    rows = [
        (topic, image, int(answers["ONTOPIC"]), int(answers.get("PRO", 0)), int(answers.get("CON", 0)))
        for (topic, image), answers in decided_answers(campaign, rule=rule, phase=phase).items()
        if "ONTOPIC" in answers
    ]
    return write_image_qrels(rows)
