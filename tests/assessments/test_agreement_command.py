"""`manage.py agreement`: the agreement page's numbers as a table or as JSON."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from assessments.services.judging import Labels, record_judgment
from tests.factories import PoolEntryFactory, TopicFactory

pytestmark = pytest.mark.django_db

ALICE = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
BOB = [0, 1, 1, 1, 2, 1, 2, 0, 0, 2]


@pytest.fixture
def judged(campaign, training_topic, alice, bob):
    for i, (a, b) in enumerate(zip(ALICE, BOB)):
        entry = PoolEntryFactory(topic=training_topic, order=i)
        for person, label in ((alice, a), (bob, b)):
            record_judgment(
                topic=training_topic, document=entry.document, assessor=person, phase="training",
                labels=Labels({"relevance": label, "quality": label, "stance": "FIRST"} if label else {"relevance": 0}),
            )
    main = TopicFactory(campaign=campaign, number="9")
    entry = PoolEntryFactory(topic=main)
    for person, label in ((alice, 2), (bob, 0)):
        record_judgment(topic=main, document=entry.document, assessor=person, phase="main", labels=Labels({"relevance": label}), source="import")
    return campaign


def run(*args) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


def test_the_json_holds_cohen_fleiss_alpha_and_n_items_per_dimension_and_topic(judged):
    data = json.loads(run("touche22", "--phase", "training", "--format", "json"))

    relevance = data["dimensions"]["relevance"]
    assert {"cohen", "fleiss", "alpha", "n_items", "topics"} <= set(relevance)
    (pair,) = relevance["cohen"]
    assert {pair["a"], pair["b"]} == {"alice", "bob"}
    assert pair["unweighted"] == pytest.approx(cohen_kappa_score(ALICE, BOB))
    assert pair["weighted"] == pytest.approx(cohen_kappa_score(ALICE, BOB, weights="linear"))
    assert relevance["n_items"] == 10 and relevance["topics"]["1"]["n_items"] == 10
    assert set(data["dimensions"]["stance"]) >= {"cohen", "fleiss", "alpha", "n_items", "topics"}
    assert data["dimensions"]["stance"]["cohen"][0]["weighted"] is None


def test_the_phase_picks_the_judgments_and_imports_count(judged):
    main = json.loads(run("touche22", "--phase", "main", "--format", "json"))
    everything = json.loads(run("touche22", "--phase", "all", "--format", "json"))

    assert main["dimensions"]["relevance"]["n_items"] == 1
    assert everything["dimensions"]["relevance"]["n_items"] == 11


def test_the_table_prints_the_same_numbers(judged):
    out = run("touche22", "--phase", "training")

    assert "relevance (ordinal: 0, 1, 2): 10 documents judged by two or more assessors" in out
    assert f"{37 / 67:.3f}" in out and f"{29 / 44:.3f}" in out  # the pair's kappa and weighted kappa
    assert "alice – bob" in out and "Krippendorff's alpha" in out


def test_the_default_phase_follows_the_campaign(judged):
    assert json.loads(run("touche22", "--format", "json"))["phase"] == "training"
    judged.phase = "main"
    judged.save()
    assert json.loads(run("touche22", "--format", "json"))["phase"] == "main"


def test_kind_picks_one_dimension_of_the_scheme(judged):
    data = json.loads(run("touche22", "--phase", "training", "--kind", "stance", "--format", "json"))

    assert list(data["dimensions"]) == ["stance"] and data["dimensions"]["stance"]["alpha_level"] == "nominal"
    assert "quality (ordinal: 0, 1, 2)" in run("touche22", "--phase", "training", "--kind", "quality")


@pytest.mark.parametrize(
    "args, message",
    [
        (["nowhere"], "no campaign 'nowhere'"), (["touche22", "--phase", "main", "--round", "2"], "rounds belong to the training"),
        (["touche22", "--kind", "coherence"], "unknown label dimension 'coherence'"),
    ],
)
def test_mistakes_are_named(judged, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
