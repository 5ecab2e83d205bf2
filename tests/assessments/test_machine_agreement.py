"""A machine judge against the assessors: Cohen's kappa and Krippendorff's alpha per dimension and per topic (checked
against scikit-learn and the krippendorff package), and the documents that differ enough going to adjudication,
furthest apart first, with both labels and the model's reason, beside the assessors' own disagreements."""

import random
from collections import Counter

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from accounts.models import Role
from assessments.labels import PRESETS
from assessments.models import Adjudication, AdjudicationEvent, MachineJudge, MachineLabel
from assessments.selectors.machine_judges import agreement, gap, machine_disagreements
from assessments.services.judging import Labels, record_judgment
from tests.factories import MembershipFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

STANCES = ("FIRST", "SECOND", "NEUTRAL", "NO")


def machine(judge, entry, labels, *, reason="", raw=""):
    """One successful call's rows, as services.machine_judges writes them (one row a dimension)."""
    for dimension, value in labels.items():
        MachineLabel.objects.create(
            judge=judge, topic=entry.topic, document=entry.document, dimension=dimension, status="ok",
            labels={dimension: value}, model=judge.model, reason=reason or f"reason {dimension}", raw_answer=raw,
        )


def human(entry, assessor, relevance, stance=None):
    labels = {"relevance": relevance, **({"quality": 1, "stance": stance} if relevance and stance else {})}
    record_judgment(topic=entry.topic, document=entry.document, assessor=assessor, phase="main", labels=Labels(labels))


def majority(values):
    """The qrels' majority (services.exports.AggregationRule): the most frequent label, the lowest on a tie."""
    counts = Counter(values).most_common()
    return min(value for value, n in counts if n == counts[0][1])


@pytest.fixture
def judge(campaign):
    return MachineJudge.objects.create(campaign=campaign, name="model-x", kind="endpoint", model="model-x", base_url="http://127.0.0.1:9/v1")


def test_kappa_and_alpha_per_dimension_and_topic_match_sklearn_and_krippendorff(campaign, judge):
    rng = random.Random(7)
    assessors = [UserFactory(username=name) for name in ("ann", "ben", "cy")]
    topics = [TopicFactory(campaign=campaign, number=str(n)) for n in (1, 2)]
    expected: dict[str, dict[str, list]] = {"relevance": {}, "stance": {}}
    for topic in topics:
        for _ in range(40):
            entry = PoolEntryFactory(topic=topic)
            given = [(rng.choice((0, 1, 2)), rng.choice(STANCES)) for _ in assessors[: rng.randint(0, 3)]]
            for assessor, (relevance, stance) in zip(assessors, given):
                human(entry, assessor, relevance, stance)
            asked = rng.random() < 0.85
            guess = {"relevance": rng.choice((0, 1, 2)), "stance": rng.choice(STANCES)}
            if asked:
                machine(judge, entry, {"relevance": rng.choice((0, 1, 2))})  # superseded by the newer row below
                machine(judge, entry, guess)
            if asked and given:
                expected["relevance"].setdefault(topic.number, []).append((majority([r for r, _ in given]), guess["relevance"]))
                stances = [s for r, s in given if r]
                if stances:
                    expected["stance"].setdefault(topic.number, []).append((majority_in_scheme_order(stances), guess["stance"]))

    found = agreement(campaign, [judge])["model-x"]

    by_name = {d.name: d for d in found.dimensions}
    for name, ordinal, scale in (("relevance", True, [0, 1, 2]), ("stance", False, list(STANCES))):
        every = [pair for pairs in expected[name].values() for pair in pairs]
        for figures, pairs in [(by_name[name].overall, every), *((by_name[name].topics[n], p) for n, p in expected[name].items())]:
            h, m = zip(*pairs)
            assert figures.n_items == len(pairs)
            assert figures.kappa == pytest.approx(cohen_kappa_score(h, m, labels=scale), abs=1e-12)
            if ordinal:
                assert figures.weighted == pytest.approx(cohen_kappa_score(h, m, labels=scale, weights="linear"), abs=1e-12)
            else:
                assert figures.weighted is None
            codes = np.array([[scale.index(v) for v in h], [scale.index(v) for v in m]], dtype=float)
            reference = krippendorff.alpha(reliability_data=codes, level_of_measurement="ordinal" if ordinal else "nominal",
                                           value_domain=list(range(len(scale))))
            assert figures.alpha == pytest.approx(reference, abs=1e-12)
    assert [number for number, _ in found.topic_rows()] == ["1", "2"]


def majority_in_scheme_order(stances):
    """The qrels' majority of a category: the most frequent, a tie to the value listed first in the scheme."""
    counts = Counter(stances).most_common()
    return min((s for s, n in counts if n == counts[0][1]), key=STANCES.index)


def test_nothing_to_compare_gives_no_coefficients(campaign, judge, pool, alice):
    human(pool[0], alice, 2, "FIRST")
    machine(judge, pool[1], {"relevance": 2})  # a document nobody judged
    relevance = agreement(campaign, [judge])["model-x"].dimensions[0]
    assert (relevance.overall.n_items, relevance.overall.kappa, relevance.overall.alpha, relevance.topics) == (0, None, None, {})


@pytest.fixture
def routed(campaign, judge, training_topic, alice, bob):
    """Five documents of topic 1, each judged by alice (bob too on the first) and by the machine:

    0: assessors 0 (alice 0, bob 2: majority 0), machine 2 → 2 grades apart
    1: alice 1, machine 2 → one grade apart
    2: alice 2 FIRST, machine 2 SECOND → the stance differs
    3: alice 2, machine 2 → agree
    4: alice 0, machine 1 → one grade apart
    """
    entries = [PoolEntryFactory(topic=training_topic, order=i) for i in range(5)]
    human(entries[0], alice, 0)
    human(entries[0], bob, 2, "FIRST")
    for entry, relevance, stance in zip(entries[1:], (1, 2, 2, 0), (None, "FIRST", None, None)):
        human(entry, alice, relevance, stance)
    machine(judge, entries[0], {"relevance": 2}, reason="It compares cats and dogs at length.", raw="ok\n##final answer: 2")
    machine(judge, entries[1], {"relevance": 2})
    machine(judge, entries[2], {"relevance": 2, "stance": "SECOND"}, reason="Dogs come out ahead.")
    machine(judge, entries[3], {"relevance": 2})
    machine(judge, entries[4], {"relevance": 1})
    return entries


def test_documents_apart_by_the_threshold_are_routed_furthest_first_with_both_labels_and_the_reason(campaign, judge, routed):
    cases = machine_disagreements(campaign, judge)

    assert [case.document_id for case in cases] == [routed[0].document_id, routed[2].document_id]
    first, second = cases
    assert (first.human, first.machine, first.routed_by) == ({"relevance": 0}, {"relevance": 2}, ["relevance"])
    assert first.reasons == {"relevance": "It compares cats and dogs at length."} and first.apart == {"relevance": 1.0}
    assert second.human == {"relevance": 2, "stance": "FIRST"} and second.machine == {"relevance": 2, "stance": "SECOND"}
    assert second.routed_by == ["stance"] and second.reasons["stance"] == "Dogs come out ahead."

    campaign.machine_disagreement = 1
    cases = machine_disagreements(campaign, judge)
    # One grade apart is enough now; 0 vs 2 still first, then the stance and the two one-grade cases (0.5 each).
    assert [case.document_id for case in cases] == [routed[i].document_id for i in (0, 2, 1, 4)]
    assert machine_disagreements(campaign, judge, topic="2") == []


def test_grades_are_apart_by_steps_of_the_scale():
    relevance = PRESETS["touche-2020-task1"][1].dimension("relevance")  # −2 (spam), 0, 1, 2
    assert [gap(relevance, -2, 0), gap(relevance, 0, 2), gap(relevance, -2, 2)] == [1, 2, 3]
    stance = PRESETS["touche-2022-task2"][1].dimension("stance")
    assert (gap(stance, "FIRST", "FIRST"), gap(stance, "FIRST", "NO")) == (0, 1)


@pytest.fixture
def judith(campaign):
    return MembershipFactory(campaign=campaign, user=UserFactory(username="judith", role=Role.ORGANISER), role="adjudicator").user


def test_an_adjudicator_decides_the_machine_cases_as_any_other(client, campaign, judge, routed, judith):
    client.force_login(judith)
    listing = client.get(reverse("assessments:machine_disagreements", args=[campaign.slug]))
    html = listing.content.decode()
    assert listing.status_code == 200 and html.count(">adjudicate</a>") == 2
    assert "It compares cats and dogs at length." in html and "Dogs come out ahead." in html
    assert html.index(routed[0].document.doc_id) < html.index(routed[2].document.doc_id)

    query = "source=machine&judge=model-x"
    first = reverse("assessments:adjudicate", args=[campaign.slug, "1", routed[0].document_id])
    following = reverse("assessments:adjudicate", args=[campaign.slug, "1", routed[2].document_id])
    page = client.get(f"{first}?{query}")
    assert "What the machine judge said" in page.content.decode() and "It compares cats and dogs at length." in page.content.decode()
    assert page.context["next_url"] == f"{following}?phase=training&{query}"  # the scope's phase, as every case link keeps

    response = client.post(f"{first}?{query}", {"relevance": "1", "quality": "1", "stance": "FIRST", "reason": "partly on topic"})

    assert response.status_code == 302 and response["Location"] == f"{following}?phase=training&{query}"
    decided = Adjudication.objects.get()
    assert (decided.document_id, decided.labels, decided.adjudicator) == (routed[0].document_id, {"relevance": 1, "quality": 1, "stance": "FIRST"}, judith)
    assert AdjudicationEvent.objects.get().reason == "partly on topic"
    listing = client.get(reverse("assessments:machine_disagreements", args=[campaign.slug])).content.decode()
    assert listing.count(">adjudicate</a>") == 1 and ">revise</a>" in listing


def test_the_assessors_disagreements_and_their_cases_stay_as_they_were(client, campaign, judge, routed, judith):
    client.force_login(judith)
    listing = client.get(reverse("assessments:disagreements", args=[campaign.slug]), {"phase": "main"})
    assert [row.document_id for row in listing.context["found"].page.object_list] == [routed[0].document_id]  # alice vs bob
    assert "It compares cats and dogs" not in listing.content.decode()
    case = client.get(reverse("assessments:adjudicate", args=[campaign.slug, "1", routed[0].document_id]), {"phase": "main"})
    assert "What the machine judge said" not in case.content.decode() and "It compares cats and dogs" not in case.content.decode()


@pytest.mark.parametrize("who", ["organiser", "alice", "oscar"])
def test_only_adjudicators_reach_the_machine_disagreements(client, campaign, judge, routed, organiser, alice, oscar, who):
    client.force_login({"organiser": organiser, "alice": alice, "oscar": oscar}[who])
    assert client.get(reverse("assessments:machine_disagreements", args=[campaign.slug])).status_code == 404
