"""The embedded judge for real: the bundled sentence-embedding model on the CPU, calibrated on judged documents,
labels the rest of the pool; on topic documents rank above off-topic ones."""

import pytest

from assessments.models import MachineLabel
from assessments.services import machine_judges
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, PoolEntryFactory, TopicFactory, UserFactory

ON_TOPIC = [
    "Cats are more independent than dogs, so for a busy owner a cat is the better pet.",
    "Dogs need walks every day, while cats use a litter box: compare the effort before you choose a pet.",
    "Choosing between a cat and a dog depends on your home: dogs need space, cats adapt to small flats.",
]
OFF_TOPIC = [
    "The central bank raised interest rates by a quarter point to curb inflation.",
    "Preheat the oven to 200 degrees and bake the bread for thirty minutes.",
    "The football season ended with a dramatic penalty shoot-out in the final.",
]


@pytest.fixture
def judged(db):
    campaign = CampaignFactory(slug="local-judge", preset="touche-2022-task2")
    topic = TopicFactory(campaign=campaign, number="1", title="Which is better, a cat or a dog?",
                         description="A user wants to choose a pet.", narrative="Relevant documents compare cats and dogs as pets.")
    assessor = UserFactory(username="ann")
    entries = [PoolEntryFactory(topic=topic, document__body=text) for text in ON_TOPIC + OFF_TOPIC]
    # Two of each judged by a person: the calibration's evidence. The other two are left to the machine.
    for entry, grade in zip(entries[:2] + entries[3:5], (2, 2, 0, 0), strict=True):
        record_judgment(topic=topic, document=entry.document, assessor=assessor, phase="main", labels=Labels({"relevance": grade}))
    return campaign, entries


def test_the_local_judge_calibrates_on_judged_documents_and_labels_the_pool(judged, command):
    campaign, entries = judged
    result = command("machine_judge", campaign.slug, "--local", "--kind", "relevance")
    assert result.code == 0, result.err
    assert "added judge local" in result.out and "estimate: 6 calls (relevance 6)" in result.out
    labels = {row.document_id: row for row in MachineLabel.objects.filter(dimension="relevance")}
    assert len(labels) == 6 and all(row.status == "ok" for row in labels.values())
    similarity = {doc: float(row.raw_answer) for doc, row in labels.items()}
    on, off = [e.document_id for e in entries[:3]], [e.document_id for e in entries[3:]]
    assert min(similarity[d] for d in on) > max(similarity[d] for d in off)
    # The held-out documents get the grades of their kind; provenance names the model and its thresholds.
    assert labels[on[2]].value == 2 and labels[off[2]].value == 0
    row = labels[on[2]]
    assert row.model.startswith("all-MiniLM-L6-v2") and row.parameters["thresholds"] and row.prompt_version == 0


def test_the_local_judge_cannot_tell_a_stance(judged):
    campaign, _ = judged
    judge = machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="cannot tell stance"):
        machine_judges.plan(judge=judge, dimensions=["stance"])


def test_calibration_needs_judged_documents(db):
    campaign = CampaignFactory(slug="unjudged", preset="touche-2022-task2")
    PoolEntryFactory(topic=TopicFactory(campaign=campaign))
    judge = machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=None)
    with pytest.raises(machine_judges.MachineJudgeError, match="no relevance labels yet"):
        machine_judges.run_judge(judge=judge, dimensions=["relevance"])
