"""Coding a multilingual classification campaign: 600 comments in six languages given to coders by the languages
they read, with an overlap share coded by three; the labels given through the assessor API (and, in
tests/browser/test_item_agreement_by_keys.py, part of them on the labelling page by keys); agreement per language
and overall (Krippendorff's alpha, Fleiss' kappa, Cohen's kappa per pair, Gwet's AC1) equal to the krippendorff
package, statsmodels, scikit-learn and irrCAC run here on the same labels."""

import json
import random

import krippendorff
import numpy as np
import pandas as pd
import pytest
from django.urls import reverse
from irrCAC.raw import CAC
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from accounts.models import User
from assessments.formats.cofe import COMMENT_COLUMNS, Comment, write_comments
from assessments.models import Assignment, AssignmentItem, Campaign, Judgment

pytestmark = pytest.mark.django_db
LANGUAGES = ("en", "fr", "de", "it", "el", "hu")
LABELS = ("In favor", "Against", "Other")
CODERS = {"ana": LANGUAGES, "ben": LANGUAGES, "cai": LANGUAGES, "dora": ("en",)}


def build(command, tmp_path) -> Campaign:
    """The campaign of 600 comments, given to the coders by the languages they read, in its main phase."""
    comments = [
        Comment(id=f"comment_{n}", proposal=str(1000 + n % 60), text=f"Comment {n} on the proposal.",
                language=LANGUAGES[n % 6], label=None)
        for n in range(600)
    ]
    (tmp_path / "comments.tsv").write_text(write_comments(comments, COMMENT_COLUMNS), encoding="utf-8")
    command("create_campaign", "cofe600", "--name", "CoFE 600", "--preset", "touche-2023-task4")
    assert command("import_items", "cofe600", tmp_path / "comments.tsv").code == 0
    for name, reads in CODERS.items():
        command("create_user", name, "--role", "assessor", "--password", "correct horse battery staple", "--languages", ",".join(reads))
    given = command("assign_items", "cofe600", "--coders", ",".join(CODERS), "--overlap", "0.4", "--per-overlap-item", "3", "--seed", "7")
    assert given.code == 0, given.err
    Campaign.objects.filter(slug="cofe600").update(phase="main")  # the items open with the main phase
    return Campaign.objects.get(slug="cofe600")


def planned_labels() -> dict[tuple[str, str], str]:
    """(coder, comment id) -> the label the coder gives. Each item has a true stance, mostly In favor (as the lab's
    data); each coder errs at their own rate. Drawn in a fixed order, so the same however the labels are given."""
    rng = random.Random(4)
    truth = {f"comment_{n}": rng.choices(LABELS, weights=(6, 3, 1))[0] for n in range(600)}
    error = {"ana": 0.1, "ben": 0.2, "cai": 0.3, "dora": 0.15}
    given = sorted(AssignmentItem.objects.values_list("assignment__assessor__username", "entry__document__doc_id"))
    return {
        (name, doc): truth[doc] if rng.random() > error[name] else rng.choice(LABELS)
        for name, doc in given
    }


def label_through_the_api(client, plan: dict[tuple[str, str], str], *, besides: frozenset = frozenset()) -> None:
    """Every planned label but those in `besides`, each PUT by its coder to the assessor API."""
    for name in CODERS:
        client.force_login(User.objects.get(username=name))
        items = AssignmentItem.objects.filter(assignment__assessor__username=name).select_related("entry__document")
        for item in items:
            key = (name, item.entry.document.doc_id)
            if key in besides:
                continue
            response = client.put(reverse("work-judgment", args=[item.assignment_id, item.entry_id]),
                                  {"labels": {"stance": plan[key]}}, content_type="application/json")
            assert response.status_code == 200, response.content


@pytest.fixture
def coded(command, tmp_path, client):
    campaign = build(command, tmp_path)
    label_through_the_api(client, planned_labels())
    return campaign


def test_coders_get_only_what_they_read_and_a_share_is_coded_by_three(coded):
    languages = {c: set(r) for c, r in CODERS.items()}
    per_item: dict[str, int] = {}
    for name, lan, doc in AssignmentItem.objects.values_list(
        "assignment__assessor__username", "entry__document__metadata__language", "entry__document__doc_id"
    ):
        assert lan in languages[name], (name, lan)
        per_item[doc] = per_item.get(doc, 0) + 1
    assert len(per_item) == 600 and set(per_item.values()) == {1, 3}
    assert 0.3 < sum(n == 3 for n in per_item.values()) / 600 < 0.5
    assert AssignmentItem.objects.filter(assignment__assessor__username="dora").exists()
    assert Assignment.objects.filter(topic__campaign=coded).count() == len({(a, t) for a, t in Assignment.objects.values_list("assessor", "topic")})


def reference(labels: dict[str, dict[str, str]]) -> dict[str, float]:
    """alpha, Fleiss' kappa (items with all three coders) and AC1 from the reference packages."""
    coders = sorted({c for by in labels.values() for c in by})
    items = sorted(labels)
    code = {label: i for i, label in enumerate(LABELS)}
    data = np.array([[code[labels[i][c]] if c in labels[i] else np.nan for i in items] for c in coders], dtype=float)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=[0, 1, 2])
    # Fleiss' kappa needs one panel size: the items with the usual number of coders, as ours reports it.
    panel = max(set(sizes := [len(labels[i]) for i in items]), key=sizes.count)
    full = [[code[label] for label in labels[i].values()] for i in items if len(labels[i]) == panel]
    table, _ = aggregate_raters(np.array(full), n_cat=3)
    frame = pd.DataFrame({c: [labels[i].get(c, np.nan) for i in items] for c in coders})
    ac1 = CAC(frame, digits=15, categories=list(LABELS)).gwet()["est"]["coefficient_value"]
    return {"alpha": alpha, "fleiss": statsmodels_fleiss_kappa(table), "ac1": ac1}


def test_agreement_per_language_and_overall_equals_the_reference_packages(coded, command):
    assert_agreement_equals_the_references(coded, command)


def assert_agreement_equals_the_references(coded, command):
    """The agreement command's figures, per language and overall, against the reference packages on the stored
    labels (also tests/browser/test_item_agreement_by_keys.py, where part of them is given on the page by keys)."""
    shown = command("agreement", "cofe600", "--phase", "main", "--format", "json")
    figures = json.loads(shown.out)["dimensions"]["stance"]

    labels: dict[str, dict[str, dict[str, str]]] = {}  # language -> item -> coder -> label
    for doc, lan, coder, value in Judgment.objects.filter(topic__campaign=coded).values_list(
        "document__doc_id", "document__metadata__language", "assessor__username", "labels__stance"
    ):
        labels.setdefault(lan, {}).setdefault(doc, {})[coder] = value
    shared = {lan: {i: by for i, by in items.items() if len(by) >= 2} for lan, items in labels.items()}
    assert set(figures["by_language"]) == set(LANGUAGES)
    for lan, items in shared.items():
        ours, theirs = figures["by_language"][lan], reference(items)
        assert ours["n_items"] == len(items)
        for measure in ("alpha", "fleiss", "ac1"):
            assert ours[measure] == pytest.approx(theirs[measure], abs=1e-9), (lan, measure)
        # Each pair of coders over the items of this language both coded, as scikit-learn computes Cohen's kappa.
        assert ours["cohen"]
        for pair in ours["cohen"]:
            both = [(by[pair["a"]], by[pair["b"]]) for by in items.values() if pair["a"] in by and pair["b"] in by]
            assert pair["n_items"] == len(both)
            assert pair["unweighted"] == pytest.approx(cohen_kappa_score(*zip(*both, strict=True), labels=list(LABELS)), abs=1e-9), (lan, pair)
    overall = reference({i: by for items in shared.values() for i, by in items.items()})
    assert figures["alpha"] == pytest.approx(overall["alpha"], abs=1e-9)
    assert figures["ac1"] == pytest.approx(overall["ac1"], abs=1e-9)
    # One label dominates: AC1 stays high where kappa drops (why the lab reported it).
    assert figures["ac1"] > figures["fleiss"]

    table = command("agreement", "cofe600", "--phase", "main").out
    assert "Gwet's AC1" in table and "language" in table and f"{figures['by_language']['hu']['ac1']:.3f}" in table
