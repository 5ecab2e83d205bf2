"""Login throttling (issue 23, access item 3): failed logins are counted by account and by address on the login page
and the admin's login; past LOGIN_FAILURE_LIMIT even the right password is refused, with a clear message, a 429 and
a logged event, until the cool-off has passed."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # tests/factories.py
LOGIN = reverse("accounts:login")


@pytest.fixture
def olivia(db):
    return UserFactory(username="olivia", role=Role.ORGANISER)


def _post(client: Client, username: str, password: str, address: str = "192.0.2.10", url: str = LOGIN):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_after_200_wrong_passwords_the_right_one_is_refused(olivia, caplog):
    client = Client()
    with caplog.at_level(logging.WARNING, logger="touchstone.security"):
        answers = [_post(client, "olivia", f"guess {i}").status_code for i in range(200)]
        right = _post(client, "olivia", PASSWORD)

    assert answers[:9] == [200] * 9  # the form again, "do not match"
    assert set(answers[9:]) == {429}  # the tenth failure locks
    assert right.status_code == 429 and not _signed_in(client)
    page = right.content.decode()
    assert "Too many failed logins for this account or from this address" in page and "15 minutes" in page
    assert right["Retry-After"] == str(15 * 60)
    assert any("login locked out: account 'olivia', address 192.0.2.10" in r.getMessage() for r in caplog.records)
    assert AccessFailureLog.objects.filter(username="olivia", locked_out=True).exists()


def test_an_account_is_locked_whatever_address_the_tries_come_from(olivia):
    for i in range(10):
        _post(Client(), "olivia", "wrong", address=f"198.51.100.{i}")
    assert _post(Client(), "olivia", PASSWORD, address="203.0.113.7").status_code == 429
    # another account from a fresh address is not
    UserFactory(username="oscar", role=Role.ORGANISER)
    client = Client()
    assert _post(client, "oscar", PASSWORD, address="203.0.113.8").status_code == 302 and _signed_in(client)


def test_an_address_is_locked_whatever_accounts_it_tries(olivia):
    for i in range(10):
        _post(Client(), f"someone{i}", "wrong", address="192.0.2.66")
    assert _post(Client(), "olivia", PASSWORD, address="192.0.2.66").status_code == 429
    client = Client()
    assert _post(client, "olivia", PASSWORD, address="192.0.2.67").status_code == 302 and _signed_in(client)


def test_a_few_typos_lock_no_one(olivia):
    client = Client()
    for _ in range(3):
        assert _post(client, "olivia", "typo").status_code == 200
    assert _post(client, "olivia", PASSWORD).status_code == 302 and _signed_in(client)


def test_the_admin_login_is_throttled_too(db):
    UserFactory(username="root", role=Role.ADMIN, is_staff=True, is_superuser=True)
    admin_login = reverse("admin:login")
    for _ in range(10):
        _post(Client(), "root", "wrong", url=admin_login)
    client = Client()
    response = _post(client, "root", PASSWORD, url=admin_login)
    assert response.status_code == 429 and "Too many failed logins" in response.content.decode()
    assert not _signed_in(client)


def test_the_lock_ends_once_the_cool_off_has_passed(olivia):
    for _ in range(10):
        _post(Client(), "olivia", "wrong")
    assert _post(Client(), "olivia", PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    client = Client()
    assert _post(client, "olivia", PASSWORD).status_code == 302 and _signed_in(client)


def test_behind_the_tls_proxy_the_address_is_the_one_the_proxy_saw(olivia, settings):
    settings.BEHIND_TLS_PROXY = True
    for i in range(10):
        # each try claims another address; the proxy appends the one it saw, always the same
        Client().post(LOGIN, {"username": f"someone{i}", "password": "x"}, REMOTE_ADDR="10.0.0.2",
                      HTTP_X_FORWARDED_FOR=f"1.2.3.{i}, 192.0.2.99")
    locked = Client().post(LOGIN, {"username": "olivia", "password": PASSWORD}, REMOTE_ADDR="10.0.0.2",
                           HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert locked.status_code == 429
    other = Client().post(LOGIN, {"username": "olivia", "password": PASSWORD}, REMOTE_ADDR="10.0.0.2",
                          HTTP_X_FORWARDED_FOR="192.0.2.100")
    assert other.status_code == 302


def test_a_test_clients_login_without_a_request_is_not_throttled(olivia):
    client = Client()
    for _ in range(20):
        assert not client.login(username="olivia", password="wrong")
    assert client.login(username="olivia", password=PASSWORD)
