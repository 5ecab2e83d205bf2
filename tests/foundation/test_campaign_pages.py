"""The organiser's campaign list and hub link every step of a campaign; assessors never reach them."""

import pytest

pytestmark = pytest.mark.django_db


def test_an_organiser_sees_the_campaign_and_every_step(client, organiser, campaign):
    client.force_login(organiser)
    listing = client.get("/campaigns/")
    assert listing.status_code == 200
    assert b"Touch\xc3\xa9 2022 Task 2" in listing.content
    hub = client.get("/campaigns/touche22/")
    assert hub.status_code == 200
    for path in ("import/", "pool/", "assignments/", "qrels/", "results/"):
        assert f'href="/campaigns/touche22/{path}"'.encode() in hub.content
    assert b"/campaigns/touche22/agreement/" not in hub.content  # agreement is for admins


def test_the_hub_numbers_the_steps_a_user_can_take_and_says_where_each_stands(client, organiser, admin_user, campaign, pool, alice):
    import re

    from assessments.services.judging import Labels, record_judgment

    record_judgment(topic=pool[0].topic, document=pool[0].document, assessor=alice, labels=Labels({"relevance": 1}), phase="training")
    client.force_login(organiser)
    hub = client.get("/campaigns/touche22/").content.decode()
    assert re.findall(r'<span class="step-no">([^<]+)</span>', hub) == ["1", "2", "3", "4", "✎", "◷", "5"]
    assert "1 topic · 3 documents · 0 runs" in hub and "1 of 3 judged" in hub and "1 active assignment<" in hub
    client.force_login(admin_user)
    hub = client.get("/campaigns/touche22/").content.decode()
    assert re.findall(r'<span class="step-no">([^<]+)</span>', hub) == ["1", "2", "3", "4", "5", "✎", "◷", "6"]
    assert ">Setup</span>" in hub


def test_an_admin_also_reaches_agreement(client, admin_user, campaign):
    client.force_login(admin_user)
    assert b'href="/campaigns/touche22/agreement/"' in client.get("/campaigns/touche22/").content


@pytest.mark.parametrize("path", ["/campaigns/", "/campaigns/touche22/"])
def test_assessors_get_not_found(client, alice, path):
    client.force_login(alice)
    assert client.get(path).status_code == 404


def test_login_sends_each_role_home(client, organiser, alice):
    client.force_login(organiser)
    assert client.get("/").url == "/campaigns/"
    client.force_login(alice)
    assert client.get("/").url == "/work/"
