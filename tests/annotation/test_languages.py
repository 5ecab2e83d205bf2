"""An assessor says which languages they read on My work; multilingual campaigns give them only items in these."""

import pytest
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_an_assessor_sets_the_languages_they_read_and_only_known_codes_are_kept(client):
    greta = UserFactory(username="greta")
    client.force_login(greta)
    page = client.get(reverse("annotation:my_work"))
    assert 'name="languages" value="de"' in page.content.decode()

    done = client.post(reverse("annotation:languages"), {"languages": ["fr", "de", "xx", "<b>"]}, follow=True)

    greta.refresh_from_db()
    assert greta.languages == ["de", "fr"]
    assert "Languages you read: de, fr." in done.content.decode()
    assert 'value="de" checked' in done.content.decode() and 'value="en" checked' not in done.content.decode()


def test_the_languages_are_changed_only_by_a_post_of_the_person_signed_in(client):
    assert client.post(reverse("annotation:languages"), {"languages": ["de"]}).status_code == 302  # to the login
    greta = UserFactory(username="greta")
    client.force_login(greta)
    assert client.get(reverse("annotation:languages")).status_code == 405
