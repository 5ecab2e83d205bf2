"""A stance is shown by its name in the campaign's scheme on every page, never by a built-in name ("Pro", "Con",
"Neutral", "No stance", "Pro cats") nor by its bare value (issue 23: "stance names differ between pages").

One campaign with a scheme of its own whose stance values have unusual names is walked page by page, as its
organiser, as an admin (agreement pages) and as its assessors (judge page, grid, My work); each page's visible text
(attributes, scripts and styles left out) is read with html.parser.
"""

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from accounts.models import Role
from assessments.models import Adjudication, MachineLabel
from assessments.services import exports, machine_judges
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.campaigns import update_settings
from assessments.services.discussion import reply
from assessments.services.judging import Labels, record_judgment
from tests.factories import (
    AssignmentFactory,
    CampaignFactory,
    MembershipFactory,
    PoolEntryFactory,
    TopicFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# Values the comparative preset has too (FIRST, SECOND, NEUTRAL), under names no preset uses.
NAMES = {"FIRST": "In favour of X", "SECOND": "Against X", "NEUTRAL": "Torn about X"}
SCHEME = {
    "version": 2,
    "dimensions": [
        {"name": "relevance", "title": "Relevance", "kind": "graded", "required": True,
         "values": [{"value": 0, "name": "Off the point", "key": "0"}, {"value": 1, "name": "On the point", "key": "1"},
                    {"value": 2, "name": "Right on the point", "key": "2"}]},
        {"name": "stance", "title": "Leaning", "kind": "category", "condition": {"dimension": "relevance", "min": 1},
         "values": [{"value": value, "name": name, "key": key} for (value, name), key in zip(NAMES.items(), "fsn")]},
    ],
}
# What a page must never show for a stance: the presets' names, the judge page's own "Pro <object>", bare values.
# A value may stand with its own name where the value is what is typed or sent: a setting or a prompt's answers,
# "FIRST (In favour of X)", and the prompt that asks a model for it, "FIRST = In favour of X".
_WITH_NAME = "|".join(rf"{value}(?= \({re.escape(name)}\)| = {re.escape(name)})" for value, name in NAMES.items())
BUILT_IN = re.compile(rf"\b(?!{_WITH_NAME})(Pro|Con|Neutral|No stance|FIRST|SECOND|NEUTRAL)\b")


class _Text(HTMLParser):
    """The text a reader sees: no attributes, no script or style."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in ("script", "style", "template")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("script", "style", "template")

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


@pytest.fixture
def custom(db):
    campaign = CampaignFactory(slug="leanings", name="Leanings", scheme=SCHEME, phase="main")
    topic = TopicFactory(campaign=campaign, number="1")
    entries = [PoolEntryFactory(topic=topic, order=i) for i in range(2)]
    olivia = UserFactory(username="olivia", role=Role.ORGANISER)
    MembershipFactory(campaign=campaign, user=olivia)
    ada = UserFactory(username="ada", role=Role.ADMIN)
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    assignments = {u.username: AssignmentFactory(topic=topic, assessor=u, phase="main") for u in (alice, bob)}

    def judge(user, entry, relevance, stance, **extra):
        return record_judgment(topic=topic, document=entry.document, assessor=user, phase="main",
                               labels=Labels({"relevance": relevance, "stance": stance}, **extra))

    older = exports.export_qrels(campaign=campaign, kind="stance", rule="majority")
    judge(alice, entries[0], 2, "FIRST", flagged=True, note="which side?")
    judge(bob, entries[0], 2, "SECOND", note="against, I think")
    judge(alice, entries[1], 1, "NEUTRAL")
    judge(bob, entries[1], 1, "FIRST")
    list(older)
    flagged = judge(alice, entries[0], 2, "SECOND", flagged=True, note="which side?")
    reply(judgment=flagged, by=olivia, text="Against it is.", resolves=False)
    adjudicate(topic=topic, document=entries[0].document, by=ada, decision=Decision({"relevance": 2, "stance": "FIRST"}, reason="reads as for"))
    adjudicate(topic=topic, document=entries[0].document, by=ada, decision=Decision({"relevance": 2, "stance": "SECOND"}, reason="on reflection"))
    newer = exports.export_qrels(campaign=campaign, kind="stance", rule="majority")
    list(newer)
    machine = machine_judges.add_judge(campaign=campaign, name="gpt", kind="endpoint", model="m", base_url="http://h/v1", by=None)
    for entry in entries:
        MachineLabel.objects.create(judge=machine, topic=topic, document=entry.document, dimension="stance", status="ok",
                                    labels={"stance": "NEUTRAL"}, model="m", prompt_version=1, reason="machine reason")
    update_settings(campaign=campaign, changes={"reveal_machine_labels": True}, by=None)
    assert Adjudication.objects.count() == 1
    return {
        "campaign": campaign, "topic": topic, "entries": entries, "users": {"olivia": olivia, "ada": ada, "alice": alice, "bob": bob},
        "assignments": assignments, "snapshots": (older.snapshot, newer.snapshot), "judge": machine,
    }


def pages(custom) -> list[tuple[str, str, dict]]:
    """(who, url, query) of every page that shows a stance."""
    slug, topic, doc = custom["campaign"].slug, custom["topic"], custom["entries"][0].document
    older, newer = custom["snapshots"]
    a = custom["assignments"]["alice"]
    return [
        ("alice", reverse("annotation:judge", args=[a.pk, 1]), {}),
        ("alice", reverse("annotation:my_work"), {}),
        ("olivia", reverse("assessments:campaign", args=[slug]), {}),
        ("olivia", reverse("assessments:discussion", args=[slug]), {}),
        ("ada", reverse("assessments:adjudicate", args=[slug, topic.number, doc.pk]), {}),
        ("olivia", reverse("assessments:timeline", args=[slug]), {}),
        ("olivia", reverse("assessments:qrels_diff", args=[slug]), {"older": older.number, "newer": newer.number}),
        ("olivia", reverse("assessments:machine_judge_labels", args=[slug, custom["judge"].name]), {}),
        ("olivia", reverse("assessments:machine_judge", args=[slug, custom["judge"].name]), {}),
        ("olivia", reverse("assessments:machine_judges", args=[slug]), {}),
        ("olivia", reverse("assessments:leaderboard", args=[slug]), {}),
        ("olivia", reverse("assessments:qrels", args=[slug]), {}),
        ("olivia", reverse("assessments:pool", args=[slug]), {}),
        ("olivia", reverse("assessments:assignments", args=[slug]), {}),
        ("ada", reverse("assessments:machine_disagreements", args=[slug]), {}),
        ("ada", reverse("assessments:agreement", args=[slug]), {}),
        ("ada", reverse("assessments:disagreements", args=[slug]), {}),
        ("ada", reverse("assessments:agreement_document", args=[slug, doc.pk]), {}),
        ("ada", reverse("assessments:discussion", args=[slug]), {}),
    ]


def test_every_page_names_a_stance_as_the_scheme_does(client, custom):
    shown, wrong = {}, {}
    for who, url, query in pages(custom):
        client.force_login(custom["users"][who])
        response = client.get(url, query)
        assert response.status_code == 200, (who, url)
        text = visible(response.content.decode())
        if places := [text[max(m.start() - 40, 0):m.end() + 40] for m in BUILT_IN.finditer(text)]:
            wrong[who, url] = places  # where, with the words around it
        shown[who, url] = {name for name in NAMES.values() if name in text}
    assert wrong == {}
    # Each page shows the names of the stances it is about (and shows them whole).
    urls = {(who, url) for who, url, _ in pages(custom)}
    a = custom["assignments"]["alice"]
    slug = custom["campaign"].slug
    expected = {
        ("alice", reverse("annotation:judge", args=[a.pk, 1])): set(NAMES.values()),  # the buttons, and the machine's label
        ("ada", reverse("assessments:disagreements", args=[slug])): {"In favour of X", "Torn about X"},
        ("ada", reverse("assessments:agreement", args=[slug])): set(NAMES.values()),
        ("olivia", reverse("assessments:timeline", args=[slug])): {"In favour of X", "Against X"},
        ("olivia", reverse("assessments:machine_judge_labels", args=[slug, "gpt"])): {"Torn about X"},
    }
    for key, names in expected.items():
        assert key in urls and names <= shown[key], (key, shown[key])
    # Where the value is what is typed (a prompt's answers), it stands with its name.
    client.force_login(custom["users"]["olivia"])
    prompt = visible(client.get(reverse("assessments:machine_judge", args=[slug, "gpt"])).content.decode())
    assert "first → FIRST (In favour of X), second → SECOND (Against X), neutral → NEUTRAL (Torn about X)" in prompt


def test_the_judge_page_names_the_topics_objects_beside_the_schemes_names(client, custom):
    """A comparative topic's objects are still named on the buttons of the FIRST and SECOND values, after the
    scheme's name, never instead of it."""
    client.force_login(custom["users"]["alice"])
    page = client.get(reverse("annotation:judge", args=[custom["assignments"]["alice"].pk, 1])).content.decode()
    assert '<span>In favour of X</span><small class="object">cats</small>' in page
    assert '<span>Against X</span><small class="object">dogs</small>' in page
    assert "<span>Torn about X</span></button>" in page
