"""Imported qrels belong to an import source, never to a person (issue 23, access item 2): the name given with
`import_qrels --assessor`, the API's `assessor` field or the page's is made a non-login source account if missing,
re-used if it is a source, and refused with a clear error if it is a person's account."""

import importlib
import io
import re

import pytest
from django.apps import apps
from django.contrib.auth import authenticate
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import RequestFactory
from rest_framework.test import APIClient

from accounts.models import Role, User
from assessments.models import Job, Judgment
from assessments.services.imports import ImportProblem
from assessments.services.imports.qrels import import_qrels
from assessments.services.judging import Labels, record_judgment
from tests.factories import DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def qrels(tmp_path, campaign):
    TopicFactory(campaign=campaign, number="1")
    path = tmp_path / "last-year.qrels"
    path.write_text("1 0 d1 2\n1 0 d2 0\n")
    return path


def test_the_readmes_source_is_made_once_and_used_again(campaign, qrels):
    for _ in range(2):
        out = io.StringIO()
        call_command("import_qrels", campaign.slug, str(qrels), "--kind", "relevance", "--assessor", "touche2020",
                     stdout=out, stderr=io.StringIO())
    source = User.objects.get(username="touche2020")
    assert (source.role, source.is_active, source.has_usable_password()) == (Role.SOURCE, False, False)
    assert Judgment.objects.filter(assessor=source).count() == 2
    assert User.objects.filter(username="touche2020").count() == 1


@pytest.mark.parametrize("role", [Role.ASSESSOR, Role.ORGANISER, Role.ADMIN])
def test_a_persons_account_is_refused_by_the_command_and_gets_no_label(campaign, qrels, role):
    person = UserFactory(username="a1", role=role)
    err = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("import_qrels", campaign.slug, str(qrels), "--kind", "relevance", "--assessor", "a1",
                     stdout=io.StringIO(), stderr=err)
    assert f"assessor name 'a1' is a person's account ({role})" in err.getvalue()
    assert not Judgment.objects.filter(assessor=person).exists()
    person.refresh_from_db()
    assert person.role == role and person.has_usable_password()


def test_the_api_and_the_page_refuse_a_persons_name_before_keeping_the_upload(client, campaign, organiser, alice):
    api = APIClient()
    api.force_authenticate(organiser)
    for name in ("alice", "olivia"):
        response = api.post(f"/api/campaigns/{campaign.slug}/qrels/import/",
                            {"file": SimpleUploadedFile("q.qrels", b"1 0 d1 2\n"), "kind": "relevance", "assessor": name})
        assert response.status_code == 400
        assert f"assessor name {name!r} is a person's account" in response.json()["detail"]
    client.force_login(organiser)
    page = client.post(f"/campaigns/{campaign.slug}/qrels/import/",
                       {"file": SimpleUploadedFile("q.qrels", b"1 0 d1 2\n"), "kind": "relevance", "assessor": "alice",
                        "phase": "training"})
    assert page.status_code == 400 and "is a person&#x27;s account" in page.content.decode()
    assert not Job.objects.exists()


def test_a_new_source_name_follows_the_rule_for_new_names(campaign, qrels):
    UserFactory(username="touche2020")  # a person who took the name first
    for name, reason in [("Touche2020", "differ only in letter case"), ("t\u043euche", "U+043E (CYRILLIC SMALL LETTER O)")]:
        with pytest.raises(ImportProblem, match=re.escape(reason)):
            import_qrels(campaign=campaign, path=qrels, kind="relevance", assessor=name)
    assert not Judgment.objects.exists()


def test_a_source_cannot_sign_in_even_with_a_password(campaign, qrels):
    import_qrels(campaign=campaign, path=qrels, kind="relevance", assessor="touche2020")
    source = User.objects.get(username="touche2020")
    source.set_password("a long passphrase 42")
    source.is_active = True  # even switched on by hand
    source.save()
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR="192.0.2.1")
    assert authenticate(request, username="touche2020", password="a long passphrase 42") is None


def test_the_migration_makes_the_accounts_earlier_imports_made_sources(campaign, qrels):
    """Before sources had a role, an import made an assessor without a usable password: those become sources, and
    a person (a usable password, or a label given on the page) stays a person."""
    topic = campaign.topics.get()
    legacy = User.objects.create(username="touche2020", role=Role.ASSESSOR, password="!unusable")
    record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection), assessor=legacy,
                    phase="main", labels=Labels({"relevance": 2}), source="import")
    judged_on_the_page = User.objects.create(username="ann", role=Role.ASSESSOR, password="!unusable")
    record_judgment(topic=topic, document=DocumentFactory(collection=campaign.collection),
                    assessor=judged_on_the_page, phase="main", labels=Labels({"relevance": 1}))

    migration = importlib.import_module("accounts.migrations.0002_source_role")
    migration.mark_import_sources(apps, None)

    legacy.refresh_from_db()
    judged_on_the_page.refresh_from_db()
    assert (legacy.role, legacy.is_active) == (Role.SOURCE, False)
    assert (judged_on_the_page.role, judged_on_the_page.is_active) == (Role.ASSESSOR, True)
