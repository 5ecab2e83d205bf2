"""`manage.py assign_topics`: the same services as the assignment page, from the command line."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from assessments.models import Assignment
from tests.factories import PoolEntryFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(campaign):
    for number, size in (("2", 5), ("3", 3), ("8", 4)):
        topic = TopicFactory(campaign=campaign, number=number, position=int(number))
        for i in range(size):
            PoolEntryFactory(topic=topic, order=i)
    for name in ("ann", "ben", "cat"):
        UserFactory(username=name)
    return campaign


def run(*args) -> str:
    out = StringIO()
    call_command("assign_topics", *args, stdout=out)
    return out.getvalue()


def held():
    return set(Assignment.objects.filter(active=True, scope="full").values_list("topic__number", "assessor__username", "phase"))


def test_it_assigns_the_named_topics(setup):
    out = run("touche22", "--assessor", "ann", "--topics", "2,3,8")

    assert held() == {("2", "ann", "main"), ("3", "ann", "main"), ("8", "ann", "main")}
    assert "topic 8 → ann (new)" in out and "3 assignment(s) made" in out


def test_it_moves_a_topic_and_says_whose_judgments_stay(setup):
    run("touche22", "--assessor", "ann", "--topics", "2")

    out = run("touche22", "--assessor", "ben", "--topics", "2")

    assert held() == {("2", "ben", "main")}
    assert "taken from ann (their judgments are kept)" in out


def test_auto_balances_across_the_assessors(setup):
    out = run("touche22", "--auto", "--assessors", "ann,ben")

    # Pools 5, 3, 4: 5 → ann, 4 → ben, 3 → ben (4 < 5).
    assert held() == {("2", "ann", "main"), ("8", "ben", "main"), ("3", "ben", "main")}
    assert "ann                        5 documents" in out and "ben                        7 documents" in out


def test_auto_and_create_campaign_pasted_twice_change_nothing_the_second_time(setup, command):
    run("touche22", "--auto", "--assessors", "ann,ben")
    before = held()
    assert "0 assignment(s) made: every main-phase topic has an assessor" in run("touche22", "--auto", "--assessors", "ann,ben")
    assert held() == before
    again = command("create_campaign", "touche22", "--name", "Again", "--preset", setup.preset)
    assert again.code == 0 and "exists already" in again.out and "nothing changed" in again.out
    other = command("create_campaign", "touche22", "--name", "Other", "--preset", "touche-2020-task1")
    assert other.code != 0 and "exists already" in other.err  # another scheme is not the same line pasted again


def test_auto_skips_topics_without_a_pool_saying_so(setup):
    TopicFactory(campaign=setup, number="9", position=9)
    out, err = StringIO(), StringIO()

    call_command("assign_topics", "touche22", "--auto", "--assessors", "ann,ben", stdout=out, stderr=err)

    assert held() == {("2", "ann", "main"), ("8", "ben", "main"), ("3", "ben", "main")}
    assert "3 assignment(s) made" in out.getvalue()
    assert err.getvalue() == "warning: skipped topic 9: no pool yet (build it, then run --auto again)\n"


def test_overlap_and_training_from_the_command_line(setup):
    run("touche22", "--auto", "--assessors", "ann,ben,cat")
    out = run("touche22", "--overlap", "--share", "0.5")
    assert "overlap 50%: 7 documents on 3 topics" in out  # ceil(2.5) + ceil(1.5) + 2

    with pytest.raises(CommandError, match="topic 2 is assigned to ann for the main phase"):
        run("touche22", "--mark-training", "--topics", "2")


def test_training_topics_go_to_every_named_assessor(setup):
    TopicFactory(campaign=setup, number="40")
    run("touche22", "--mark-training", "--topics", "40")

    run("touche22", "--assessors", "ann,ben", "--topics", "40", "--phase", "training")

    assert held() == {("40", "ann", "training"), ("40", "ben", "training")}


@pytest.mark.parametrize(
    "args, message",
    [
        (["nowhere", "--assessor", "ann", "--topics", "2"], "no campaign 'nowhere'"),
        (["touche22", "--assessor", "zed", "--topics", "2"], "no active user zed"),
        (["touche22", "--assessor", "ann", "--topics", "2,77"], "has no topic 77"),
        (["touche22", "--assessor", "ann"], "give --assessor USER and --topics"),
        (["touche22", "--auto"], "--auto needs --assessors"),
        (["touche22", "--assessors", "ann,ben", "--topics", "2"], "one assessor"),
    ],
)
def test_mistakes_are_named_and_change_nothing(setup, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not Assignment.objects.exists()
