"""Sessions read through Redis (accounts.sessions) behave as sessions kept in the database alone: logging out
ends a session everywhere, a password change ends the other sessions, and Redis going away logs no one out."""

import logging
import threading
from unittest import mock

import pytest
from django.contrib.auth.hashers import get_hasher
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse

from accounts.models import User
from accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # tests/factories.py


def logged_in(username: str) -> Client:
    client = Client()
    response = client.post(reverse("accounts:login"), {"username": username, "password": PASSWORD})
    assert response.status_code == 302
    return client


def is_logged_in(client: Client) -> bool:
    return client.get(reverse("annotation:my_work")).status_code == 200


def test_a_session_is_read_from_the_cache_not_the_database(session_cache, alice, django_assert_num_queries):
    client = logged_in("alice")
    assert is_logged_in(client)
    key = client.cookies["sessionid"].value
    assert Session.objects.filter(session_key=key).exists()  # the database keeps the record
    # The user and the page's own three queries; no session query.
    with django_assert_num_queries(3):
        assert is_logged_in(client)


def test_logging_out_ends_the_session_for_every_process(session_cache, alice):
    client = logged_in("alice")
    assert is_logged_in(client)
    stolen = Client()  # the same cookie in another browser, or served by another web process
    stolen.cookies["sessionid"] = client.cookies["sessionid"].value
    assert is_logged_in(stolen)
    key = client.cookies["sessionid"].value

    client.post(reverse("accounts:logout"))

    assert not is_logged_in(stolen)
    assert not Session.objects.filter(session_key=key).exists()
    assert SessionStore(key).load() == {}


def test_a_session_survives_losing_its_cached_copy(session_cache, alice):
    client = logged_in("alice")
    assert is_logged_in(client)
    session_cache.delete(SessionStore.cache_key_prefix + client.cookies["sessionid"].value)
    assert is_logged_in(client)  # read from the database, and cached again
    assert session_cache.get(SessionStore.cache_key_prefix + client.cookies["sessionid"].value)


def test_a_password_change_ends_the_sessions_already_cached(session_cache, alice):
    phone = logged_in("alice")
    assert is_logged_in(phone)
    alice.set_password("another correct horse battery")
    alice.save()
    assert not is_logged_in(phone)  # the cached session's password hash no longer matches the user's


def test_a_cached_copy_lives_at_most_session_cache_seconds(session_cache, settings, alice):
    settings.SESSION_CACHE_SECONDS = 90
    client = logged_in("alice")
    redis_key = session_cache.make_and_validate_key(SessionStore.cache_key_prefix + client.cookies["sessionid"].value)
    ttl = session_cache._cache.get_client(redis_key).ttl(redis_key)
    assert 0 < ttl <= 90


def test_without_redis_sessions_work_from_the_database_alone(session_cache, settings, alice, caplog):
    settings.CACHES = {**settings.CACHES, "default": {  # nothing listens there
        "BACKEND": "touchstone.redis_cache.RedisCache", "LOCATION": "redis://127.0.0.1:9/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }}
    with caplog.at_level(logging.WARNING, logger="accounts.sessions"):
        client = logged_in("alice")
        assert is_logged_in(client) and is_logged_in(client)
        key = client.cookies["sessionid"].value
        client.post(reverse("accounts:logout"))
        assert not is_logged_in(client)
    assert not Session.objects.filter(session_key=key).exists()
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["session cache unavailable, using the database alone until it answers"]


def test_the_cache_keeps_one_redis_client_which_threads_share(session_cache):
    """touchstone.redis_cache: Django's cache made a client per call (a third of reading a session)."""
    client = session_cache._cache.get_client()
    assert session_cache._cache.get_client() is client
    results = []
    threads = [threading.Thread(target=lambda i=i: (session_cache.set(f"k{i}", i), results.append(session_cache.get(f"k{i}")))) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(8))


def test_a_session_signed_in_before_accounts_backends_keeps_its_user(session_cache, alice):
    client = Client()
    client.force_login(alice, backend="django.contrib.auth.backends.ModelBackend")
    assert is_logged_in(client)


def test_a_deactivated_user_is_signed_out_at_the_next_request(session_cache, alice):
    client = logged_in("alice")
    assert client.session["_auth_user_backend"] == "accounts.backends.UserBackend"
    User.objects.filter(pk=alice.pk).update(is_active=False)
    assert not is_logged_in(client)


@pytest.mark.parametrize("username", ["alice", "nobody"])
def test_a_refused_login_hashes_the_password_once(alice, username):
    """accounts.backends: ModelBackend, listed second for older sessions, does not check it a second time."""
    hasher = get_hasher()
    with mock.patch.object(type(hasher), "encode", autospec=True, side_effect=type(hasher).encode) as encode:
        response = Client().post(reverse("accounts:login"), {"username": username, "password": "not the password"})
    assert response.status_code == 200 and "_auth_user_id" not in Client().session
    assert encode.call_count == 1
