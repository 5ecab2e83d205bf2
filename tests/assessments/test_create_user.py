"""`manage.py create_user`: accounts with a role, created once and updated on a re-run."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("create_user", *args, stdout=out)
    return out.getvalue()


def test_it_creates_an_account_with_a_generated_password_printed_once(client):
    out = run("ann", "--role", "assessor")

    password = re.search(r"password: (\S+)", out).group(1)
    user = User.objects.get(username="ann")
    assert user.role == "assessor" and user.check_password(password) and len(password) >= 16
    assert client.login(username="ann", password=password)


def test_it_uses_the_given_password():
    run("olga", "--role", "organiser", "--password", "a long passphrase 42")

    user = User.objects.get(username="olga")
    assert user.is_organiser and not user.is_campaign_admin and user.check_password("a long passphrase 42")


def test_running_again_updates_the_role_and_keeps_the_password():
    user = UserFactory(username="ann")  # password "correct horse battery staple"

    out = run("ann", "--role", "admin")

    user.refresh_from_db()
    assert user.role == "admin" and user.is_campaign_admin
    assert user.check_password("correct horse battery staple")
    assert "role assessor → admin" in out and "password unchanged" in out
    assert User.objects.filter(username="ann").count() == 1


def test_running_again_with_a_password_changes_it():
    user = UserFactory(username="ann")

    out = run("ann", "--role", "assessor", "--password", "another long passphrase")

    user.refresh_from_db()
    assert user.check_password("another long passphrase") and "password changed" in out


def test_a_new_password_can_be_generated_for_an_existing_user():
    user = UserFactory(username="ann")

    out = run("ann", "--role", "assessor", "--new-password")

    user.refresh_from_db()
    assert user.check_password(re.search(r"password: (\S+)", out).group(1))


def test_a_weak_password_is_refused_and_nothing_is_created():
    with pytest.raises(CommandError, match="password refused: .*too short"):
        run("ann", "--role", "assessor", "--password", "abc")
    assert not User.objects.filter(username="ann").exists()


def test_an_unknown_role_is_refused():
    with pytest.raises(CommandError, match="invalid choice: 'boss'"):
        run("ann", "--role", "boss")


# --- Names (issue 23, item 7): plain ASCII, bounded, not another's name in other letter case -------------------


@pytest.mark.parametrize(("name", "reason"), [
    ("\u0430lice", "U+0430 (CYRILLIC SMALL LETTER A)"),  # looks like alice
    ("alice\u200b", "U+200B (ZERO WIDTH SPACE)"),
    ("bob smith", "U+0020 (SPACE)"),
    ("<script>", "U+003C (LESS-THAN SIGN)"),
    ("ann@example.org", "U+0040 (COMMERCIAL AT)"),
])
def test_a_lookalike_or_hostile_name_is_refused_saying_which_character(name, reason):
    with pytest.raises(CommandError) as refused:
        run(name, "--role", "assessor")
    assert reason in str(refused.value)
    assert "use only the letters A-Z and a-z, digits, '_', '.' and '-'" in str(refused.value)
    assert not User.objects.exists()


def test_a_200_character_name_is_refused_with_a_message_not_a_traceback():
    with pytest.raises(CommandError, match="has 200 characters; at most 64 are allowed"):
        run("a" * 200, "--role", "assessor")
    assert not User.objects.exists()


def test_a_name_differing_only_in_case_from_another_is_refused():
    UserFactory(username="alice")
    with pytest.raises(CommandError, match="a user 'alice' exists already: names that differ only in letter case"):
        run("Alice", "--role", "organiser")
    assert list(User.objects.values_list("username", flat=True)) == ["alice"]


def test_plain_names_still_work():
    for name in ("touche-2020.organiser_1", "A.B-c_9"):
        run(name, "--role", "assessor")
    assert User.objects.count() == 2


def test_an_import_source_cannot_be_made_a_person():
    User.objects.create(username="touche2020", role="source", is_active=False, password="!")
    with pytest.raises(CommandError, match="touche2020 is an import source"):
        run("touche2020", "--role", "organiser", "--password", "a long passphrase 42")
    assert User.objects.get(username="touche2020").role == "source"
    with pytest.raises(CommandError, match="invalid choice: 'source'"):
        run("feed", "--role", "source")
