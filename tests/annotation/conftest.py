"""The assessor's workspace cast: alice's training assignment on the shared `pool`, an unassigned
assessor (uma), and helpers to log anyone in."""

import pytest

from accounts.models import Role
from assessments.models import Assignment
from tests.factories import PoolEntryFactory, UserFactory


@pytest.fixture
def assignment(alice, training_topic, pool) -> Assignment:
    return Assignment.objects.get(assessor=alice, topic=training_topic)


@pytest.fixture
def bob_assignment(bob, training_topic, pool) -> Assignment:
    return Assignment.objects.get(assessor=bob, topic=training_topic)


@pytest.fixture
def uma(db):
    """An assessor with no assignment at all."""
    return UserFactory(username="uma", role=Role.ASSESSOR)


@pytest.fixture
def login(client):
    """login(user) → a test client with that user's session (None stays anonymous)."""

    def _login(user):
        client.logout()
        if user is not None:
            client.force_login(user)
        return client

    return _login


@pytest.fixture
def grow_pool(training_topic):
    """grow_pool(n) adds n more entries to the training topic's pool."""

    def _grow(n: int):
        return [PoolEntryFactory(topic=training_topic, order=100 + i) for i in range(n)]

    return _grow
