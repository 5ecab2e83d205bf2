"""The head of a comment on its labelling page: a comment has no title, so its id is the heading, and it is not
repeated beside the language as a document's id is beside its title."""

import re

import pytest
from django.urls import reverse

from accounts.models import User
from tests.annotation.test_item_page_queries import coded

pytestmark = pytest.mark.django_db


def test_a_comment_is_headed_by_its_id_once_beside_its_language(client, command, tmp_path):
    command("create_user", "cleo", "--role", "assessor", "--password", "correct horse battery staple", "--languages", "en,fr,de")
    client.force_login(User.objects.get(username="cleo"))
    assignment = coded(command, tmp_path, "heads", 3)

    page = client.get(reverse("annotation:judge", args=[assignment.pk, 2])).content.decode()

    head = page[page.index('id="doc-head-main"'):page.index("</p>", page.index('class="doc-meta"'))]
    assert re.search(r'<h2 class="doc-title">\s*heads_1\s*</h2>', head)
    assert head.count("heads_1") == 1 and ">FR</span>" in head
