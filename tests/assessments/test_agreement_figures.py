"""Agreement figures (selectors.agreement) on judgments stored in the database, checked against hand computation
and reference tools.

scikit-learn (Cohen's kappa), statsmodels (Fleiss' kappa) and the krippendorff package run here on the same labels,
read back from the fixtures, never from the service's output.
"""

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from assessments.labels import GRADED, PRESETS, QUESTION, Dimension, LabelScheme, LabelValue, SchemeError
from assessments.selectors.agreement import AgreementError, Scope, compute_agreement, list_disagreements
from assessments.services.judging import Labels, record_judgment
from tests.factories import AssignmentFactory, PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

# Two assessors on ten documents, relevance 0–2. The confusion table (alice's labels as rows, bob's as columns)
# is [[2, 1, 0], [1, 2, 0], [0, 1, 3]], so p_o = 7/10. The marginals are alice (3, 3, 4) and bob (3, 4, 3), so
# p_e = (9 + 12 + 12)/100 = 0.33 and κ = (0.7 − 0.33)/(1 − 0.33) = 37/67. With linear weights |i − j| the observed
# disagreement is 3/10 (three cells one step off the diagonal). The expected one is
# (1·12 + 2·9 + 1·9 + 1·9 + 2·12 + 1·16)/100 = 0.88, so κ_w = 1 − 0.3/0.88 = 29/44.
ALICE = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
BOB = [0, 1, 1, 1, 2, 1, 2, 0, 0, 2]


def given(**labels):
    """The labels that have a value (None and "" stand for a dimension left without one)."""
    return {name: value for name, value in labels.items() if value not in (None, "")}


def judge(entry, assessor, relevance, quality=None, stance="", phase="training", source="web", ms=0):
    return record_judgment(
        topic=entry.topic, document=entry.document, assessor=assessor,
        labels=Labels(given(relevance=relevance, quality=quality, stance=stance)), phase=phase, source=source,
        time_spent_ms=ms,
    )


def training_pool(topic, size):
    return [PoolEntryFactory(topic=topic, order=i) for i in range(size)]


@pytest.fixture
def carol(training_topic):
    user = UserFactory(username="carol")
    AssignmentFactory(topic=training_topic, assessor=user, phase="training")
    return user


def test_two_assessors_kappa_is_the_hand_computed_one(campaign, training_topic, alice, bob):
    entries = training_pool(training_topic, 10)
    for entry, a, b in zip(entries, ALICE, BOB):
        judge(entry, alice, a)
        judge(entry, bob, b)

    relevance = compute_agreement(campaign=campaign, scope=Scope("training")).dimensions["relevance"]

    (pair,) = relevance.report.cohen
    assert {pair.rater_a, pair.rater_b} == {"alice", "bob"} and pair.n_items == 10
    assert pair.unweighted == pytest.approx(37 / 67)
    assert pair.linear == pytest.approx(29 / 44)
    assert pair.unweighted == pytest.approx(cohen_kappa_score(ALICE, BOB))
    assert pair.linear == pytest.approx(cohen_kappa_score(ALICE, BOB, weights="linear"))
    assert relevance.report.n_items == 10
    # Binary: relevant (1 or 2) or not (0), as trec_eval binarises; the reference runs on the collapsed labels.
    collapsed = ([int(x >= 1) for x in ALICE], [int(x >= 1) for x in BOB])
    table, _ = aggregate_raters(np.array(collapsed).T)
    assert relevance.report.binary_kappa == pytest.approx(statsmodels_fleiss_kappa(table))


def test_three_assessors_with_missing_details_match_the_reference_tools(campaign, training_topic, alice, bob, carol):
    # Quality is asked of relevant documents only, so it is missing where relevance is 0.
    labels = {
        alice: [(2, 2), (1, 1), (0, None), (2, 1), (1, 0), (0, None), (2, 2)],
        bob: [(2, 1), (1, 1), (0, None), (1, 1), (1, 1), (1, 0), (2, 2)],
        carol: [(1, 2), (0, None), (0, None), (2, 2), (1, 0), (0, None), (2, 1)],
    }
    entries = training_pool(training_topic, 7)
    for person, rows in labels.items():
        for entry, (relevance, quality) in zip(entries, rows):
            judge(entry, person, relevance, quality)

    result = compute_agreement(campaign=campaign, scope=Scope("training"))

    relevance = np.array([[r for r, _ in rows] for rows in labels.values()])
    quality = np.array([[np.nan if q is None else q for _, q in rows] for rows in labels.values()], dtype=float)
    table, _ = aggregate_raters(relevance.T)
    assert result.dimensions["relevance"].report.fleiss == pytest.approx(statsmodels_fleiss_kappa(table))
    assert result.dimensions["relevance"].report.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=relevance, level_of_measurement="ordinal", value_domain=[0, 1, 2])
    )
    assert result.dimensions["quality"].report.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=quality, level_of_measurement="ordinal", value_domain=[0, 1, 2])
    )
    # Quality: documents 1, 2, 4, 5, 7 have two or more quality labels; document 6 has bob's only.
    assert result.dimensions["quality"].report.n_items == 5
    kappas = {(p.rater_a, p.rater_b): p.unweighted for p in result.dimensions["relevance"].report.cohen}
    assert kappas[("alice", "carol")] == pytest.approx(cohen_kappa_score(relevance[0], relevance[2]))


def test_stance_is_nominal_and_has_no_weighted_kappa(campaign, training_topic, alice, bob):
    entries = training_pool(training_topic, 4)
    for entry, a, b in zip(entries, ["FIRST", "SECOND", "NEUTRAL", "FIRST"], ["FIRST", "SECOND", "FIRST", "NO"]):
        judge(entry, alice, 1, 1, a)
        judge(entry, bob, 1, 1, b)

    stance = compute_agreement(campaign=campaign, scope=Scope("training")).dimensions["stance"]

    (pair,) = stance.report.cohen
    assert pair.linear is None and stance.report.binary_kappa is None
    labels = (["FIRST", "SECOND", "NEUTRAL", "FIRST"], ["FIRST", "SECOND", "FIRST", "NO"])
    assert pair.unweighted == pytest.approx(cohen_kappa_score(*labels))
    codes = np.array([[["FIRST", "SECOND", "NEUTRAL", "NO"].index(x) for x in row] for row in labels], dtype=float)
    assert stance.report.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal", value_domain=[0, 1, 2, 3])
    )


USEFULNESS = Dimension("usefulness", "Usefulness", GRADED, (LabelValue(0, "Useless", "0"), LabelValue(1, "Useful", "1"), LabelValue(2, "Very useful", "2")), required=True)
ON_TOPIC = Dimension("ontopic", "On topic?", QUESTION, (LabelValue(1, "Yes", "y"), LabelValue(0, "No", "n")))


def judge_labels(entry, assessor, labels):
    return record_judgment(topic=entry.topic, document=entry.document, assessor=assessor, labels=Labels(labels), phase="training")


def test_each_dimension_of_the_scheme_is_measured_as_its_kind_says(campaign, training_topic, alice, bob):
    """A scheme that names none of Touché's dimensions: the graded one is ordinal, the yes/no question nominal."""
    campaign.preset, campaign.scheme = "custom", LabelScheme((USEFULNESS, ON_TOPIC)).to_json()
    campaign.save()
    on_topic = ([1, 0, 1, 1, 0, 1, 1, 0, 1, 1], [1, 1, 1, 0, 0, 1, 1, 0, 0, 1])
    for entry, a, b, a_on, b_on in zip(training_pool(training_topic, 10), ALICE, BOB, *on_topic):
        judge_labels(entry, alice, {"usefulness": a, "ontopic": a_on})
        judge_labels(entry, bob, {"usefulness": b, "ontopic": b_on})

    result = compute_agreement(campaign=campaign, scope=Scope("training"))

    assert list(result.dimensions) == ["usefulness", "ontopic"] and result.dimensions["ontopic"].title == "On topic?"
    useful = result.dimensions["usefulness"].report
    (pair,) = useful.cohen
    assert useful.ordinal and pair.unweighted == pytest.approx(37 / 67) and pair.linear == pytest.approx(29 / 44)
    assert useful.binary_kappa is not None
    question = result.dimensions["ontopic"].report
    (pair,) = question.cohen
    assert not question.ordinal and pair.linear is None and question.binary_kappa is None
    assert pair.unweighted == pytest.approx(cohen_kappa_score(*on_topic))
    assert question.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=np.array(on_topic, dtype=float), level_of_measurement="nominal", value_domain=[0, 1])
    )
    assert set(compute_agreement(campaign=campaign, scope=Scope("training"), kind="ontopic").dimensions) == {"ontopic"}
    with pytest.raises(SchemeError, match="unknown label dimension 'relevance'"):
        compute_agreement(campaign=campaign, scope=Scope("training"), kind="relevance")


def test_a_dimension_not_asked_counts_as_its_otherwise(campaign, training_topic, alice, bob):
    """Touché 2023 Task 2: a document whose causal direction alice found wrong is not relevant to her (relevance's
    `otherwise`), so it disagrees with bob's highly relevant, as the qrels would."""
    campaign.preset, campaign.scheme = "touche-2023-task2", PRESETS["touche-2023-task2"][1].to_json()
    campaign.save()
    (entry,) = training_pool(training_topic, 1)
    judge_labels(entry, alice, {"direction": "WRONG"})
    judge_labels(entry, bob, {"direction": "CAUSE_EFFECT", "relevance": 2})

    relevance = compute_agreement(campaign=campaign, scope=Scope("training")).dimensions["relevance"].report

    assert relevance.n_items == 1 and relevance.confusion[("alice", "bob")][0][2] == 1
    (row,) = list_disagreements(campaign=campaign, scope=Scope("training"), order="relevance").page.object_list
    assert row.spread == {"direction": 1.0, "relevance": 1.0, "evidence": 0.0, "stance": 0.0}
    assert row.labels == [{"direction": "WRONG"}, {"direction": "CAUSE_EFFECT", "relevance": 2}]


def test_per_topic_figures_use_only_that_topics_documents(campaign, training_topic, alice, bob):
    other = TopicFactory(campaign=campaign, number="7", is_training=True, position=7)
    first, second = training_pool(training_topic, 10), training_pool(other, 4)
    for entry, a, b in zip(first, ALICE, BOB):
        judge(entry, alice, a)
        judge(entry, bob, b)
    for entry, a, b in zip(second, [0, 2, 2, 1], [0, 2, 1, 1]):
        judge(entry, alice, a)
        judge(entry, bob, b)

    relevance = compute_agreement(campaign=campaign, scope=Scope("training")).dimensions["relevance"]

    topics = {t.number: t for t in relevance.topics}
    assert relevance.report.n_items == 14 and (topics["1"].n_items, topics["7"].n_items) == (10, 4)
    for number, a, b in (("1", ALICE, BOB), ("7", [0, 2, 2, 1], [0, 2, 1, 1])):
        data = np.array([a, b], dtype=float)
        table, _ = aggregate_raters(np.array([a, b]).T)
        assert topics[number].alpha == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2])
        )
        assert topics[number].fleiss == pytest.approx(statsmodels_fleiss_kappa(table))

    one_topic = compute_agreement(campaign=campaign, scope=Scope("training", topic="7")).dimensions["relevance"]
    assert one_topic.report.n_items == 4
    assert one_topic.report.cohen[0].unweighted == pytest.approx(cohen_kappa_score([0, 2, 2, 1], [0, 2, 1, 1]))


def test_each_training_round_has_its_own_figures(campaign, training_topic, alice, bob):
    later = TopicFactory(campaign=campaign, number="30", is_training=True)
    for person in (alice, bob):
        AssignmentFactory(topic=later, assessor=person, phase="training", round=2)
    for entry, a, b in zip(training_pool(training_topic, 10), ALICE, BOB):
        judge(entry, alice, a)
        judge(entry, bob, b)
    for entry in training_pool(later, 3):
        judge(entry, alice, 2)
        judge(entry, bob, 0)

    first = compute_agreement(campaign=campaign, scope=Scope("training", round=1)).dimensions["relevance"]
    second = compute_agreement(campaign=campaign, scope=Scope("training", round=2)).dimensions["relevance"]

    assert first.report.n_items == 10 and first.report.cohen[0].unweighted == pytest.approx(37 / 67)
    assert second.report.n_items == 3 and [t.number for t in second.topics] == ["30"]


def test_main_phase_counts_imported_judgments_but_not_copies_for_twins(campaign, alice, bob):
    topic = TopicFactory(campaign=campaign, number="5")
    entries = [PoolEntryFactory(topic=topic, order=i) for i in range(5)]
    for entry, a, b in zip(entries[:3], [0, 1, 2], [0, 1, 1]):
        judge(entry, alice, a, phase="main")
        judge(entry, bob, b, phase="main", source="import")
    judge(entries[3], alice, 2, phase="main")  # judged once: no agreement item
    judge(entries[4], alice, 2, phase="main", source="duplicate")
    judge(entries[4], bob, 0, phase="main")

    result = compute_agreement(campaign=campaign, scope=Scope("main"))
    training = compute_agreement(campaign=campaign, scope=Scope("training"))

    assert result.dimensions["relevance"].report.n_items == 3
    assert result.dimensions["relevance"].report.cohen[0].unweighted == pytest.approx(
        cohen_kappa_score([0, 1, 2], [0, 1, 1])
    )
    assert training.dimensions["relevance"].report.n_items == 0
    assert compute_agreement(campaign=campaign, scope=Scope("all")).dimensions["relevance"].report.n_items == 3


def test_assessors_below_the_threshold_are_flagged_by_mean_pairwise_kappa(campaign, training_topic, alice, bob, carol):
    # alice and bob agree completely; carol's labels agree with theirs at chance level (weighted κ ≈ −0.02), so
    # alice and bob average (1 − 0.02)/2 ≈ 0.49 and pass, carol averages −0.02 and fails.
    entries = training_pool(training_topic, 10)
    for entry, a, c in zip(entries, ALICE, [1, 0, 2, 1, 0, 1, 2, 2, 0, 1]):
        judge(entry, alice, a)
        judge(entry, bob, a)
        judge(entry, carol, c)
    campaign.agreement_threshold = 0.4
    campaign.save()

    result = compute_agreement(campaign=campaign, scope=Scope("training"))

    relevance = result.dimensions["relevance"]
    assert [r.rater for r in relevance.flagged] == ["carol"]
    means = {r.rater: r.mean_kappa for r in relevance.assessors}
    pairs = {frozenset((p.rater_a, p.rater_b)): p.linear for p in relevance.report.cohen}
    assert means["alice"] == pytest.approx((pairs[frozenset(("alice", "bob"))] + pairs[frozenset(("alice", "carol"))]) / 2)
    assert "carol" in result.flagged and result.flagged["carol"][0][0] == "relevance"


def test_the_json_holds_the_numbers_per_dimension_pair_and_topic(campaign, training_topic, alice, bob):
    for entry, a, b in zip(training_pool(training_topic, 10), ALICE, BOB):
        judge(entry, alice, a, 1 if a else None)
        judge(entry, bob, b, 1 if b else None)

    data = compute_agreement(campaign=campaign, scope=Scope("training")).to_json()

    assert data["phase"] == "training" and data["campaign"] == "touche22"
    relevance = data["dimensions"]["relevance"]
    assert {"cohen", "fleiss", "alpha", "n_items", "binary_kappa", "topics"} <= set(relevance)
    assert relevance["cohen"][0]["unweighted"] == pytest.approx(37 / 67)
    assert relevance["cohen"][0]["weighted"] == pytest.approx(29 / 44)
    assert relevance["topics"]["1"]["n_items"] == 10
    assert set(data["dimensions"]) == {"relevance", "quality", "stance"}


def test_a_scope_refuses_what_it_cannot_mean():
    with pytest.raises(AgreementError, match="unknown phase 'final'"):
        Scope("final")
    with pytest.raises(AgreementError, match="rounds belong to the training phase"):
        Scope("main", round=2)


# --- disagreements ------------------------------------------------------------------------------------------------


def test_disagreements_list_the_furthest_apart_first_and_leave_out_agreement(campaign, training_topic, alice, bob):
    entries = training_pool(training_topic, 5)
    # (alice, bob) relevance, quality, stance per document:
    #   0: 2/2 agree on everything → not listed          1: relevance 0 vs 2 → relevance spread 1.0
    #   2: relevance 1 vs 2, quality 2 vs 0 → 0.5 + 1.0   3: stance FIRST vs SECOND only → 1.0 on stance
    #   4: relevance 1 vs 2 → 0.5
    plan = [
        ((2, 1, "FIRST"), (2, 1, "FIRST")),
        ((0, None, ""), (2, 1, "NO")),
        ((1, 2, "NO"), (2, 0, "NO")),
        ((2, 2, "FIRST"), (2, 2, "SECOND")),
        ((1, 1, "NO"), (2, 1, "NO")),
    ]
    for entry, (a, b) in zip(entries, plan):
        judge(entry, alice, *a)
        judge(entry, bob, *b)
    doc = {entry.document_id: i for i, entry in enumerate(entries)}

    def order(by):
        found = list_disagreements(campaign=campaign, scope=Scope("training"), order=by)
        return [doc[row.document_id] for row in found.page.object_list]

    assert order("relevance") == [1, 2, 4, 3]  # 1.0, 0.5, 0.5 (topic order keeps 2 before 4), 0.0
    assert order("total") == [2, 1, 3, 4]  # 1.5, 1.0, 1.0, 0.5
    assert order("stance") == [3, 1, 2, 4]  # stance missing for alice on 1: one label, spread 0
    listing = list_disagreements(campaign=campaign, scope=Scope("training"))
    assert listing.assessors == ["alice", "bob"] and listing.count == 4
    first = listing.page.object_list[0]
    assert first.labels == [{"relevance": 1, "quality": 2, "stance": "NO"}, {"relevance": 2, "quality": 0, "stance": "NO"}]
    assert first.spread == {"relevance": 0.5, "quality": 1.0, "stance": 0.0}
    with pytest.raises(AgreementError, match="cannot sort by 'coherence'"):
        list_disagreements(campaign=campaign, scope=Scope("training"), order="coherence")  # not this scheme's


def test_disagreement_snippets_are_plain_text(campaign, training_topic, alice, bob):
    entry = PoolEntryFactory(
        topic=training_topic,
        document__body="<html><head><script>alert('x')</script><style>p{}</style></head><body><p>Cats &amp; dogs "
        + "word " * 100 + "</p></body></html>",
        document__is_html=True,
    )
    judge(entry, alice, 0)
    judge(entry, bob, 2)

    (row,) = list_disagreements(campaign=campaign, scope=Scope("training")).page.object_list

    assert row.snippet.startswith("Cats & dogs word word")
    assert "alert" not in row.snippet and "<" not in row.snippet and row.snippet.endswith(" …")
