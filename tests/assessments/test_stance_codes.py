"""A campaign's stance codes: Touché 2023 Task 2 runs wrote SUP, REF, NEU and NO in their stance column (the
organisers' baseline writes NEU for every document) where the scheme's causal stance says SUPPORT, REFUTE, NEUTRAL
and NO. The campaign maps each code to a value (from its preset, `create_campaign --stance-codes`, the settings page
or PATCH), run imports store the value, by either reader, and say how many lines each code gave; a code the campaign
does not know is refused with its file and line, as any unknown stance is."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from assessments.labels import PRESET_STANCE_CODES, PRESETS
from assessments.models import AuditEvent, Campaign, Ranking, Run
from assessments.services.campaigns import (
    CampaignError,
    check_stance_codes,
    create_campaign,
    parse_stance_codes,
    update_settings,
)
from assessments.services.imports import runs as run_imports
from assessments.services.imports.runs import import_runs
from tests.factories import CampaignFactory, TopicFactory
from tests.rankings import stored_lines

pytestmark = pytest.mark.django_db

LAB_CODES = {"SUP": "SUPPORT", "REF": "REFUTE", "NEU": "NEUTRAL", "NO": "NO"}
# Plain enough for the column reader: one separator, each topic's lines together.
CODED_RUN = "1 SUP d1 1 5 causal\n1 REF d2 2 4 causal\n1 NEU d3 3 3 causal\n1 NO d4 4 2 causal\n1 Q0 d5 5 1 causal\n2 NEU d1 1 1 causal\n"


@pytest.fixture
def causal(db) -> Campaign:
    """A Touché 2023 Task 2 campaign with the lab's codes and topics 1 and 2."""
    made = CampaignFactory(slug="causal23", preset="touche-2023-task2", stance_codes=LAB_CODES)
    for position, number in enumerate(("1", "2")):
        TopicFactory(campaign=made, number=number, position=position, compared_objects=[], cause="c", effect="e")
    return made


def stances(tag: str) -> dict[tuple[str, str], str]:
    """(topic, doc) -> the stance stored for that line ('' for none)."""
    return {(topic, doc): line[2] for (_, topic, doc), line in stored_lines(Ranking.objects.filter(run__tag=tag)).items()}


def _declined(self, file, stage):
    from assessments.formats.trec_run_columns import Declined

    raise Declined


@pytest.mark.parametrize("reader", ["columns", "lines"])
def test_a_runs_codes_are_stored_as_the_schemes_stances_and_counted(causal, write_file, monkeypatch, reader):
    taken = []
    read_columns = run_imports._Reading._columns
    if reader == "lines":
        monkeypatch.setattr(run_imports._Reading, "_columns", _declined)
    else:
        def spy(self, file, stage):
            read = read_columns(self, file, stage)  # raises Declined when it leaves the file to the line reader
            taken.append(file.name)
            return read

        monkeypatch.setattr(run_imports._Reading, "_columns", spy)
    summary = import_runs(campaign=causal, paths=[write_file("team-causal.txt", CODED_RUN)])
    assert len(taken) == (reader == "columns")  # the column reader took it (on PostgreSQL), not declined

    assert stances("causal") == {
        ("1", "d1"): "SUPPORT", ("1", "d2"): "REFUTE", ("1", "d3"): "NEUTRAL", ("1", "d4"): "NO", ("1", "d5"): "", ("2", "d1"): "NEUTRAL",
    }
    assert Run.objects.get(tag="causal").has_stance
    assert summary.counts["stances"] == {
        "SUP": {"value": "SUPPORT", "lines": 1}, "REF": {"value": "REFUTE", "lines": 1},
        "NEU": {"value": "NEUTRAL", "lines": 2}, "NO": {"value": "NO", "lines": 1},
    }
    assert "stance column: SUP→SUPPORT 1 line, REF→REFUTE 1 line, NEU→NEUTRAL 2 lines, NO 1 line" in summary.text
    event = AuditEvent.objects.get(action=AuditEvent.Action.RUNS_IMPORTED)
    assert event.details["stances"]["NEU"] == {"value": "NEUTRAL", "lines": 2}


def test_the_baselines_neutral_run_and_the_schemes_own_values_import_side_by_side(causal, write_file, command):
    """The organisers' baseline writes NEU everywhere; another run writes the scheme's values themselves."""
    baseline = write_file("baseline.txt", "1 NEU d1 1 2 base\n1 NEU d2 2 1 base\n")
    spelled = write_file("spelled.txt", "1 SUPPORT d1 1 2 own\n1 Q0 d2 2 1 own\n")
    result = command("import_runs", causal.slug, baseline, spelled)
    assert result.code == 0
    assert set(stances("base").values()) == {"NEUTRAL"} and stances("own") == {("1", "d1"): "SUPPORT", ("1", "d2"): ""}
    assert "stance column: SUPPORT 1 line, NEU→NEUTRAL 2 lines" in result.out


@pytest.mark.parametrize("reader", ["columns", "lines"])
def test_an_unknown_code_is_refused_with_its_file_and_line_and_stores_nothing(causal, write_file, command, monkeypatch, reader):
    if reader == "lines":
        monkeypatch.setattr(run_imports._Reading, "_columns", _declined)
    path = write_file("bad.txt", "1 SUP d1 1 3 bad\n1 NEU d2 2 2 bad\n1 CON d3 3 1 bad\n")
    result = command("import_runs", causal.slug, path)
    assert result.code == 1
    assert result.err.strip() == (
        f"error: {path}:3: unknown stance 'CON' in column 2 (expected Q0 or one of NEU, NEUTRAL, NO, REF, REFUTE, SUP, SUPPORT)"
    )
    assert not Run.objects.exists() and not Ranking.objects.exists()


def test_without_codes_a_code_is_an_unknown_stance(causal, write_file, command):
    causal.stance_codes = {}
    causal.save()
    path = write_file("neu.txt", "1 NEU d1 1 1 base\n")
    result = command("import_runs", causal.slug, path)
    assert result.code == 1 and f"{path}:1: unknown stance 'NEU'" in result.err


def test_a_new_2023_task2_campaign_starts_with_the_labs_codes_and_the_command_may_give_others(command, db):
    assert PRESET_STANCE_CODES["touche-2023-task2"] == LAB_CODES
    result = command("create_campaign", "t23", "--name", "T 23", "--preset", "touche-2023-task2")
    assert result.code == 0 and "stance codes in runs: SUP=SUPPORT, REF=REFUTE, NEU=NEUTRAL, NO=NO" in result.out
    assert Campaign.objects.get(slug="t23").stance_codes == LAB_CODES

    result = command("create_campaign", "t23b", "--name", "T 23b", "--preset", "touche-2023-task2", "--stance-codes", "S=SUPPORT,R=REFUTE")
    assert result.code == 0
    assert Campaign.objects.get(slug="t23b").stance_codes == {"S": "SUPPORT", "R": "REFUTE"}
    assert command("create_campaign", "t23c", "--name", "T", "--preset", "touche-2023-task2", "--stance-codes", "").code == 0
    assert Campaign.objects.get(slug="t23c").stance_codes == {}
    # Other presets have no codes of their own.
    assert command("create_campaign", "t22", "--name", "T 22", "--preset", "touche-2022-task2").code == 0
    assert Campaign.objects.get(slug="t22").stance_codes == {}


@pytest.mark.parametrize(("codes", "reason"), [
    ("SUP=SUPPORTS", "stance codes: SUP=SUPPORTS: SUPPORTS is not one of stance's values (SUPPORT, REFUTE, NEUTRAL, NO)"),
    ("SUP", "stance codes: 'SUP' is not CODE=VALUE (e.g. SUP=SUPPORT)"),
    ("SUP=SUPPORT,SUP=REFUTE", "stance codes: SUP is given twice"),
    ("Q0=NEUTRAL", "stance codes: Q0 means no stance in a run file and cannot stand for one"),
])
def test_the_command_refuses_codes_that_are_not_the_schemes_and_creates_nothing(command, db, codes, reason):
    result = command("create_campaign", "t23", "--name", "T 23", "--preset", "touche-2023-task2", "--stance-codes", codes)
    assert (result.code, result.err.strip()) == (1, f"error: {reason}")
    assert not Campaign.objects.exists()


def test_a_scheme_without_a_category_has_no_stance_codes(db):
    with pytest.raises(CampaignError, match="no category dimension"):
        create_campaign(slug="t20", name="T 20", preset="touche-2020-task1", stance_codes={"SUP": "SUPPORT"})
    assert check_stance_codes(PRESETS["touche-2020-task1"][1], {}) == {}  # no codes: nothing to check


def test_codes_are_read_with_commas_or_spaces():
    assert parse_stance_codes("SUP=SUPPORT, REF=REFUTE NEU=NEUTRAL,,NO=NO") == LAB_CODES
    assert parse_stance_codes("  ") == {}


def test_the_settings_page_shows_and_changes_the_codes(client, causal, organiser_of_causal):
    client.force_login(organiser_of_causal)
    page = client.get(causal.get_absolute_url()).content.decode()
    assert 'value="SUP=SUPPORT, REF=REFUTE, NEU=NEUTRAL, NO=NO"' in page
    form = {"name": causal.name, "guidelines": "", "seconds_per_judgment": 30, "agreement_threshold": 0.4, "overlap_share": 0.0, "machine_disagreement": 2,
            "propagate_to_duplicates": "on", "stance_codes": "SUP=SUPPORT, REF=REFUTE, NEU=NEUTRAL, NO=NO, NEUTRAL=NEUTRAL, UNK=NO"}
    response = client.post(reverse("assessments:campaign_settings", args=[causal.slug]), form, follow=True)
    assert "Settings saved: Stance codes in runs." in response.content.decode()
    causal.refresh_from_db()
    assert causal.stance_codes == {**LAB_CODES, "NEUTRAL": "NEUTRAL", "UNK": "NO"}
    page = client.get(causal.get_absolute_url()).content.decode()  # in the order of the scheme's values
    assert 'value="SUP=SUPPORT, REF=REFUTE, NEU=NEUTRAL, NEUTRAL=NEUTRAL, NO=NO, UNK=NO"' in page
    event = AuditEvent.objects.get(action=AuditEvent.Action.CAMPAIGN_SETTINGS)
    assert (event.before, event.after) == ({"stance_codes": LAB_CODES}, {"stance_codes": causal.stance_codes})

    response = client.post(reverse("assessments:campaign_settings", args=[causal.slug]), {**form, "stance_codes": "SUP=YES"})
    assert response.status_code == 400 and "SUP=YES: YES is not one of stance" in response.content.decode()
    causal.refresh_from_db()
    assert causal.stance_codes["UNK"] == "NO"


def test_patch_changes_the_codes_and_refuses_bad_ones(causal, organiser_of_causal):
    api = APIClient()
    api.force_authenticate(organiser_of_causal)
    url = reverse("campaign-detail", args=[causal.slug])
    response = api.patch(url, {"stance_codes": {"S": "SUPPORT"}}, format="json")
    assert response.status_code == 200 and response.json()["stance_codes"] == {"S": "SUPPORT"}
    for bad in ({"S": "MAYBE"}, "S=SUPPORT", {"two words": "NO"}):
        assert api.patch(url, {"stance_codes": bad}, format="json").status_code == 400
    causal.refresh_from_db()
    assert causal.stance_codes == {"S": "SUPPORT"}


def test_changed_codes_apply_to_runs_imported_afterwards(causal, write_file, organiser_of_causal):
    update_settings(campaign=causal, changes={"stance_codes": {"NEU": "NO"}}, by=organiser_of_causal)
    causal.refresh_from_db()
    import_runs(campaign=causal, paths=[write_file("later.txt", "1 NEU d1 1 1 later\n")])
    assert stances("later") == {("1", "d1"): "NO"}


@pytest.fixture
def organiser_of_causal(causal):
    from accounts.models import Role
    from tests.factories import MembershipFactory, UserFactory

    user = UserFactory(username="olga", role=Role.ORGANISER)
    MembershipFactory(campaign=causal, user=user)
    return user
