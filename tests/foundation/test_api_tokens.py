"""API tokens are kept as digests, expire, and end when their user's password changes; `create_token` prints the
key once; tokens made before this (Django REST framework's, in plain text) keep working as digests."""

import hashlib
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken, User
from accounts.tokens import create_token
from tests.factories import UserFactory
from tests.foundation.test_migrations import migrate, newest

pytestmark = pytest.mark.django_db


def campaigns(key: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(reverse("campaign-list"))


def test_a_token_is_kept_as_a_digest_and_works_until_it_expires():
    olivia = UserFactory(username="olivia", role="organiser")
    token, key = create_token(olivia, days=30)
    assert len(key) == 40 and token.digest == hashlib.sha256(key.encode()).hexdigest()
    with connection.cursor() as cursor:  # the key is nowhere in the database
        cursor.execute("SELECT count(*) FROM accounts_apitoken WHERE digest = %s OR prefix = %s", [key, key])
        assert cursor.fetchone()[0] == 0
    assert campaigns(key).status_code == 200
    assert ApiToken.objects.get().last_used_at is not None
    assert campaigns(key[:-1] + ("0" if key[-1] != "0" else "1")).status_code == 401

    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    answer = campaigns(key)
    assert answer.status_code == 401 and "expired" in answer.json()["detail"] and "create_token olivia" in answer.json()["detail"]


def test_a_password_change_or_a_replacement_revokes_a_token(command):
    olivia = UserFactory(username="olivia", role="organiser")
    _, key = create_token(olivia)
    olivia.set_password("a-new-long-password-for-olivia")
    olivia.save()
    answer = campaigns(key)
    assert answer.status_code == 401 and "password changed" in answer.json()["detail"]

    first = command("create_token", "olivia")
    assert first.code == 0 and len(first.out.strip()) == 40 and "shown once" in first.err
    assert campaigns(first.out.strip()).status_code == 200
    second = command("create_token", "olivia", "--replace", "--days", "7")
    assert campaigns(first.out.strip()).status_code == 401 and campaigns(second.out.strip()).status_code == 200
    assert ApiToken.objects.filter(user=olivia).count() == 1
    assert command("create_token", "nobody").code != 0


def test_an_inactive_user_or_an_import_source_gets_no_working_token(command):
    olivia = UserFactory(username="olivia", role="organiser")
    _, key = create_token(olivia)
    User.objects.filter(pk=olivia.pk).update(is_active=False)
    assert campaigns(key).status_code == 401
    User.objects.create(username="touche2020", role="source", is_active=False)
    assert "cannot sign in" in command("create_token", "touche2020").err


@pytest.mark.django_db(transaction=True)
def test_plain_text_tokens_made_before_become_digests_and_keep_working():
    migrate([("accounts", "0003_user_languages")])
    olivia = User.objects.create(username="olivia", role="organiser", password="x")
    with connection.cursor() as cursor:  # Django REST framework's table, as its migrations made it
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL, "
                       "user_id bigint NOT NULL UNIQUE REFERENCES accounts_user (id))")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", ["a" * 40, olivia.pk])
    try:
        migrate([("accounts", "0004_api_tokens_kept_as_digests")])
        assert "authtoken_token" not in connection.introspection.table_names()
        assert campaigns("a" * 40).status_code == 200
    finally:
        newest()
