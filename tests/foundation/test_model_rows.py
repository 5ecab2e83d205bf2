"""Rows read by hand-written SQL become the same instances the ORM makes (touchstone.model_rows)."""

import pytest
from django.db import connection

from assessments.models import Campaign, Topic
from tests.factories import TopicFactory
from touchstone.model_rows import ModelColumns

pytestmark = pytest.mark.django_db


def read(columns: ModelColumns, pk: int):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns.sql()} FROM {columns.model._meta.db_table} {columns.alias} WHERE {columns.alias}.id = %s", [pk])
        return columns.instance(cursor.fetchone())


def test_an_instance_has_every_field_as_the_orm_reads_it():
    topic = TopicFactory(compared_objects=["tea", "coffee"])
    Campaign.objects.filter(pk=topic.campaign_id).update(guidelines="Read twice.")
    for model, pk in ((Campaign, topic.campaign_id), (Topic, topic.pk)):
        made, loaded = read(ModelColumns(model, "x"), pk), model.objects.get(pk=pk)
        values = [[getattr(instance, f.attname) for f in model._meta.concrete_fields] for instance in (made, loaded)]
        assert values[0] == values[1]
        assert (made._state.adding, made._state.db, made.get_deferred_fields()) == (False, "default", set())
    assert read(ModelColumns(Topic, "x"), topic.pk).compared_objects == ["tea", "coffee"]  # JSON decoded
    assert read(ModelColumns(Campaign, "x"), topic.campaign_id).label_scheme == topic.campaign.label_scheme


def test_columns_not_named_are_deferred_and_load_on_access(django_assert_num_queries):
    topic = TopicFactory(title="Tea or coffee?")
    made = read(ModelColumns(Topic, "x", ["id", "number"]), topic.pk)
    assert made.get_deferred_fields() >= {"title", "compared_objects"}
    with django_assert_num_queries(1):
        assert made.title == "Tea or coffee?"


def test_columns_named_out_of_the_models_order_land_in_their_own_fields():
    topic = TopicFactory(title="Tea or coffee?", compared_objects=["tea", "coffee"], pool_seed=17)
    made = read(ModelColumns(Topic, "x", ["pool_seed", "compared_objects", "id", "title"]), topic.pk)
    assert (made.pk, made.title, made.compared_objects, made.pool_seed) == (topic.pk, "Tea or coffee?", ["tea", "coffee"], 17)


def test_an_instance_saves_like_a_loaded_one():
    topic = TopicFactory(title="Before")
    made = read(ModelColumns(Topic, "x"), topic.pk)
    made.title = "After"
    made.save(update_fields=["title"])
    assert Topic.objects.get(pk=topic.pk).title == "After"
