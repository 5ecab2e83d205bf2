"""Creating campaigns and importing their topics: every Touché shape, updates in place that never delete, and
hostile or broken XML refused with file and line, storing nothing."""

import json
from pathlib import Path

import pytest

from accounts.models import Role
from assessments.labels import PRESETS, LabelScheme
from assessments.management.commands.create_campaign import Command as CreateCampaign
from assessments.models import AuditEvent, Campaign, Collection, Topic
from assessments.services.imports.topics import import_topics
from assessments.services.judging import Labels, record_judgment
from tests.factories import CampaignFactory, DocumentFactory, UserFactory


def topics(campaign) -> dict[str, tuple]:
    return {
        t.number: (t.title, t.description, t.narrative, t.compared_objects, t.cause, t.effect, t.position)
        for t in Topic.objects.filter(campaign=campaign)
    }


@pytest.fixture
def campaign(db):
    return CampaignFactory(slug="topics")


# --- create_campaign -------------------------------------------------------------------------------------------


def test_create_campaign_uses_a_preset_scheme(db, command):
    result = command("create_campaign", "touche22", "--name", "Touché 2022 Task 2", "--preset", "touche-2022-task2")
    assert (result.code, result.out.strip()) == (
        0, "created campaign touche22 (touche-2022-task2) with collection touche22 (only admins reach it until it has organisers)"
    )
    campaign = Campaign.objects.get(slug="touche22")
    assert campaign.label_scheme == PRESETS["touche-2022-task2"][1]


def test_create_campaign_makes_the_named_organisers_its_members(db, command):
    olivia, oscar = (UserFactory(username=name, role=Role.ORGANISER) for name in ("olivia", "oscar"))
    result = command("create_campaign", "touche22", "--name", "T", "--preset", "touche-2022-task2", "--organisers", "olivia, oscar")
    assert result.code == 0 and result.out.strip().endswith("run by olivia, oscar")
    campaign = Campaign.objects.get(slug="touche22")
    assert {(m.user, m.role) for m in campaign.memberships.all()} == {(olivia, "organiser"), (oscar, "organiser")}


def test_create_campaign_refuses_unknown_organisers_and_assessors(db, command):
    UserFactory(username="alice")
    result = command("create_campaign", "touche22", "--name", "T", "--preset", "touche-2022-task2", "--organisers", "olivia")
    assert (result.code, result.err.strip()) == (1, "error: no user olivia (create one with create_user --role organiser)")
    result = command("create_campaign", "touche22", "--name", "T", "--preset", "touche-2022-task2", "--organisers", "alice")
    assert (result.code, result.err.strip()) == (1, "error: alice is an assessor: only organisers and admins run campaigns")
    assert not Campaign.objects.exists()


def test_create_campaign_help_lists_every_preset():
    text = CreateCampaign().create_parser("manage.py", "create_campaign").format_help()
    for name in [*PRESETS, "custom"]:
        assert name in text


def test_a_custom_campaign_needs_a_scheme_file(db, command, write_file):
    result = command("create_campaign", "mine", "--name", "Mine", "--preset", "custom")
    assert (result.code, result.err.strip()) == (1, "error: a custom preset needs a label scheme")
    result = command("create_campaign", "mine", "--name", "Mine")
    assert (result.code, result.err.strip()) == (1, "error: give --preset NAME or --scheme FILE")
    scheme = {"version": 2, "dimensions": [
        {"name": "relevance", "kind": "graded", "values": [{"value": 0, "name": "No", "key": "0"}, {"value": 1, "name": "Yes", "key": "1"}]},
    ]}
    path = write_file("scheme.json", json.dumps(scheme))
    assert command("create_campaign", "mine", "--name", "Mine", "--preset", "custom", "--scheme", path).code == 0
    assert Campaign.objects.get(slug="mine").label_scheme.values("relevance") == (0, 1)
    result = command("create_campaign", "both", "--name", "Both", "--preset", "touche-2022-task2", "--scheme", path)
    assert (result.code, result.err.strip()) == (1, "error: give --preset or --scheme, not both (preset touche-2022-task2 has its own scheme)")
    broken = write_file("broken.json", '{"relevance": [\n  {"value": 0,,}]}')
    result = command("create_campaign", "other", "--name", "Other", "--preset", "custom", "--scheme", broken)
    assert (result.code, result.err.strip()) == (1, f"error: {broken}:2: invalid JSON: Expecting property name enclosed in double quotes")
    assert list(Campaign.objects.values_list("slug", flat=True)) == ["mine"]


def test_a_scheme_file_alone_makes_a_custom_campaign(db, command, organiser):
    """The suite's example: four dimensions of the three kinds, three of them asked under a condition."""
    path = Path(__file__).resolve().parents[1] / "data" / "schemes" / "four-dimensions.json"
    result = command("create_campaign", "questions", "--name", "Four questions", "--scheme", path, "--organisers", organiser.username)
    assert result.code == 0, result.err
    campaign = Campaign.objects.get(slug="questions")
    assert campaign.preset == "custom" and campaign.scheme == LabelScheme.from_json(json.loads(path.read_text())).to_json()
    scheme = campaign.label_scheme
    assert [(d.name, d.kind) for d in scheme.dimensions] == [
        ("ONTOPIC", "question"), ("usefulness", "graded"), ("side", "category"), ("persuasive", "question"),
    ]
    assert scheme.primary.name == "usefulness"  # the first required graded dimension
    assert "(custom)" in result.out


def _dimension(name, *keys, kind="graded", **extra):
    return {"name": name, "kind": kind, "values": [{"value": i, "name": str(i), "key": k} for i, k in enumerate(keys)], **extra}


@pytest.mark.parametrize(
    ("dimensions", "reason"),
    [
        ([_dimension("relevance", "0", "1"), _dimension("quality", "1", "2")],
         "key '1' is given to both relevance 1 and quality 0"),
        ([_dimension("relevance", "0", "1"), _dimension("quality", "q", "w", condition={"dimension": "relevanse", "min": 1})],
         "dimension quality: its condition names an unknown dimension 'relevanse'"),
        ([_dimension("a", "1", "2", condition={"dimension": "b", "min": 1}), _dimension("b", "3", "4", condition={"dimension": "a", "min": 1})],
         "conditions form a cycle: a → b → a"),
        ([_dimension("relevance", "0", "0")], "key '0' is given to both relevance 0 and relevance 1"),
        ([_dimension("topical", "y", "n", kind="question"), _dimension("topical", "a", "b")], "dimension names repeat"),
        ([], "a label scheme needs at least one dimension"),
    ],
)
def test_a_scheme_file_the_judge_page_could_not_drive_is_refused_naming_the_file(db, command, write_file, dimensions, reason):
    path = write_file("scheme.json", json.dumps({"version": 2, "dimensions": dimensions}))
    result = command("create_campaign", "mine", "--name", "Mine", "--scheme", path)
    assert (result.code, result.err.strip()) == (1, f"error: {path}: {reason}")
    assert not Campaign.objects.exists() and not Collection.objects.exists() and not AuditEvent.objects.exists()


def test_create_campaign_refuses_a_slug_in_use(db, command):
    CampaignFactory(slug="taken")
    result = command("create_campaign", "taken", "--name", "Again", "--preset", "touche-2021-task2")
    assert (result.code, result.err.strip()) == (1, "error: a campaign 'taken' exists already")


# --- Every Touché shape ----------------------------------------------------------------------------------------


def test_the_2022_comparative_topics_import(campaign, touche_data, command):
    path = touche_data / "2022-task2" / "topics.xml"
    result = command("import_topics", campaign.slug, path)
    assert (result.code, result.out.strip()) == (0, f"{path}: 50 topics (50 new, 0 updated, 0 unchanged)")
    stored = topics(campaign)
    assert len(stored) == 50
    title, description, _, objects, *_ , position = stored["2"]
    assert (title, objects, position) == ("Which is better, a laptop or a desktop?", ["laptop", "desktop"], 0)
    assert description.startswith("A user wants to buy a new PC")
    assert sum("\u2019" in t[0] + t[1] + t[2] for t in stored.values()) >= 1  # curly apostrophes kept as written


def test_the_2023_causal_sample_queries_import(campaign, touche_data, command):
    result = command("import_topics", campaign.slug, touche_data / "2023-task2-sample" / "queries.xml")
    assert result.code == 0
    assert {n: t[0] for n, t in topics(campaign).items()} == {
        "1": "does computer work increase eye pressure?",
        "2": "does regular exercise lower blood pressure?",
        "3": "do windmills cause birds to die?",
    }


def test_descriptions_narratives_causes_and_effects_are_kept(campaign, write_file):
    xml = """<topics>
      <topic><number>1</number><title>
        Should teachers get tenure?
      </title><description>A user asks.</description><narrative>Relevant arguments say why.</narrative></topic>
      <topic><number>2</number><title>Does smoking cause cancer?</title><cause>smoking</cause><effect>cancer</effect></topic>
    </topics>"""
    import_topics(campaign=campaign, path=write_file("topics.xml", xml))
    assert topics(campaign) == {
        "1": ("Should teachers get tenure?", "A user asks.", "Relevant arguments say why.", [], "", "", 0),
        "2": ("Does smoking cause cancer?", "", "", [], "smoking", "cancer", 1),
    }


def test_reimporting_updates_in_place_and_keeps_topics_missing_from_the_file(campaign, write_file, command):
    first = "<topics>" + "".join(f"<topic><number>{n}</number><title>Old {n}</title></topic>" for n in (1, 2, 3)) + "</topics>"
    import_topics(campaign=campaign, path=write_file("v1.xml", first))
    ids = dict(Topic.objects.values_list("number", "pk"))
    judged = Topic.objects.get(number="2")
    record_judgment(topic=judged, document=DocumentFactory(collection=campaign.collection), assessor=UserFactory(),
                    labels=Labels({"relevance": 1}), phase="main")

    second = write_file("v2.xml", "<topics><topic><number>4</number><title>New</title></topic>"
                        "<topic><number>2</number><title>New 2</title></topic><topic><number>1</number><title>Old 1</title></topic></topics>")
    result = command("import_topics", campaign.slug, second, "--allow-changes")  # topic 2 is judged: confirmed

    assert result.out.strip() == f"{second}: 3 topics (1 new, 2 updated, 0 unchanged); 1 topics not in the file were kept"
    assert result.err.splitlines() == [
        f"warning: {second}: topic 2 (1 judgment): title 'Old 2' → 'New 2': changed as confirmed; check that its judgments still hold",
        f"warning: {second}: 1 of the campaign's topics are not in this file and were kept: 3",
    ]
    assert {n: (t[0], t[6]) for n, t in topics(campaign).items()} == {
        "4": ("New", 0), "2": ("New 2", 1), "1": ("Old 1", 2), "3": ("Old 3", 2),
    }
    assert all(Topic.objects.get(number=n).pk == pk for n, pk in ids.items())


# --- Hostile and broken files ----------------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<topics><topic><number>1</number><title>&lol3;</title></topic></topics>"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE topics [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<topics><topic><number>1</number><title>&secret;</title></topic></topics>"""
EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE topics SYSTEM "http://127.0.0.1:9/evil.dtd">
<topics><topic><number>1</number><title>x</title></topic></topics>"""
NO_DOCTYPE_ENTITY = "<topics>\n<topic><number>1</number><title>&secret;</title></topic>\n</topics>"
UNCLOSED = "<topics>\n<topic><number>1</number>\n<title>x</title>\n</topics>"
TWICE = "<topics>\n<topic><number>1</number><title>a</title></topic>\n<topic><number>1</number><title>b</title></topic>\n</topics>"
LONG_NUMBER = f"<topics>\n<topic><number>{'9' * 40}</number><title>a</title></topic>\n</topics>"
NO_TOPICS = "<topics>\n</topics>"

HOSTILE = [
    ("laughs.xml", BILLION_LAUGHS, 2, "DOCTYPE and entity declarations are not allowed in topic files"),
    ("xxe.xml", EXTERNAL_ENTITY, 2, "DOCTYPE and entity declarations are not allowed in topic files"),
    ("dtd.xml", EXTERNAL_DTD, 2, "DOCTYPE and entity declarations are not allowed in topic files"),
    ("entity.xml", NO_DOCTYPE_ENTITY, 2, "malformed XML: Entity 'secret' not defined"),
    ("unclosed.xml", UNCLOSED, 4, "malformed XML: Opening and ending tag mismatch: topic line 2 and topics"),
    ("twice.xml", TWICE, 3, "topic 1 appears twice (first on line 2)"),
    ("long.xml", LONG_NUMBER, 2, f"topic number '{'9' * 40}' is longer than 32 characters"),
    ("none.xml", NO_TOPICS, 1, "no <topic> elements inside <topics>"),
]


@pytest.mark.parametrize("name, content, line, reason", HOSTILE)
def test_the_command_refuses_hostile_or_broken_xml_naming_the_line(campaign, write_file, command, name, content, line, reason):
    path = write_file(name, content)
    result = command("import_topics", campaign.slug, path)
    assert result.code == 1
    assert result.err.startswith(f"error: {path}:{line}: {reason}")  # libxml2 may add the column
    assert result.out == ""
    assert not Topic.objects.exists()


def test_an_oversized_file_is_refused_without_reading_it_whole(campaign, write_file, command, monkeypatch):
    monkeypatch.setattr("assessments.services.imports.topics.TOPICS_MAX_BYTES", 100)
    path = write_file("huge.xml", "<topics>" + " " * 10_000 + "</topics>")
    result = command("import_topics", campaign.slug, path)
    assert (result.code, result.err.strip()) == (1, f"error: {path}:1: the file is longer than 100 bytes, the most a topic file may have")
    assert not Topic.objects.exists()
