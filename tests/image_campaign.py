"""A Touché Task 3 campaign on the organisers' sample (50 real images), made from the command line: the fixture the
image tests share (tests/conftest.py makes it available everywhere)."""

import json
import random
from pathlib import Path

import pytest

from assessments.formats.image_collection import read_image_collection
from assessments.formats.image_runs import write_image_run
from assessments.models import Campaign, Document


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
def image_campaign(db, command, touche_data, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    sample = touche_data / "2023-task3-sample"
    topics = [json.loads(line) for line in (sample / "queries.jsonl").read_text().splitlines()]
    (tmp_path / "topics.tsv").write_text("".join(f"{t['qid']}\t{t['query']}\n" for t in topics))
    assert command("create_campaign", "img23", "--name", "Image retrieval", "--preset", "touche-2023-task3").code == 0
    assert command("import_topics", "img23", tmp_path / "topics.tsv").code == 0
    done = command("import_images", "img23", sample)
    assert done.code == 0, done.err
    assert "50 images stored" in done.out
    # Made once, by the job the import queued or by the command after it, whichever came first.
    images = Document.objects.filter(collection__slug="img23")
    assert images.count() == 50 and not images.filter(metadata__image__thumbnail=None).exists()
    runs = sample_runs(sample, {t["qid"] for t in topics})
    for tag, text in runs.items():
        (tmp_path / f"{tag}.txt").write_text(text)
    done = command("import_runs", "img23", tmp_path / "baseline.txt", tmp_path / "shuffled.txt")
    assert done.code == 0, done.err
    assert command("build_pool", "img23", "--depth", "20").code == 0
    command("create_user", "alice", "--role", "assessor", "--password", "images-alice-password")
    assert command("assign_topics", "img23", "--auto", "--assessors", "alice").code == 0
    return Campaign.objects.get(slug="img23"), runs
