"""factory_boy factories for the domain. Labels go through services, never factories."""

import factory

from accounts.models import Role, User
from assessments.labels import PRESETS
from assessments.models import Assignment, Campaign, Collection, Document, Membership, PoolEntry, Topic

# A campaign's own scheme (`create_campaign --scheme`): four dimensions of three kinds, two of them asked only under a
# condition, one of those depending on a dimension that is itself conditional.
CUSTOM_SCHEME = {
    "version": 2,
    "dimensions": [
        {"name": "topical", "title": "On topic?", "kind": "question", "required": True,
         "values": [{"value": 1, "name": "Yes", "key": "y"}, {"value": 0, "name": "No", "key": "n"}]},
        {"name": "usefulness", "title": "Usefulness", "kind": "graded", "required": True,
         "condition": {"dimension": "topical", "min": 1},
         "values": [{"value": v, "name": str(v), "key": str(v)} for v in range(4)]},
        {"name": "genre", "title": "Genre", "kind": "category",
         "values": [{"value": "NEWS", "name": "News", "key": "w"}, {"value": "FORUM", "name": "Forum", "key": "f"},
                    {"value": "BLOG", "name": "Blog", "key": "b"}]},
        {"name": "source", "title": "Source", "kind": "category", "condition": {"dimension": "usefulness", "min": 2},
         "values": [{"value": "CITED", "name": "Cites a source", "key": "c"}, {"value": "NONE", "name": "No source", "key": "x"}]},
    ],
}


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    role = Role.ASSESSOR
    password = factory.django.Password("correct horse battery staple")


class CollectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Collection

    slug = factory.Sequence(lambda n: f"collection-{n}")
    name = factory.LazyAttribute(lambda o: o.slug)


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    slug = factory.Sequence(lambda n: f"campaign-{n}")
    name = factory.LazyAttribute(lambda o: f"Campaign {o.slug}")
    preset = "touche-2022-task2"
    scheme = factory.LazyAttribute(lambda o: PRESETS[o.preset][1].to_json())
    collection = factory.SubFactory(CollectionFactory)


class TopicFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Topic

    campaign = factory.SubFactory(CampaignFactory)
    number = factory.Sequence(lambda n: str(n + 1))
    title = factory.LazyAttribute(lambda o: f"Which is better, cats or dogs? ({o.number})")
    description = "A user wants to choose a pet."
    narrative = "Relevant documents compare cats and dogs."
    compared_objects = ["cats", "dogs"]


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Document

    collection = factory.SubFactory(CollectionFactory)
    doc_id = factory.Sequence(lambda n: f"clueweb12-0000tw-00-{n:05d}___1")
    title = "A page about pets"
    body = "Cats are independent; dogs are loyal. Both make good friends."
    has_text = True


class PoolEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PoolEntry

    topic = factory.SubFactory(TopicFactory)
    document = factory.SubFactory(DocumentFactory, collection=factory.SelfAttribute("..topic.campaign.collection"))
    order = factory.Sequence(lambda n: n)


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Assignment

    topic = factory.SubFactory(TopicFactory)
    assessor = factory.SubFactory(UserFactory)
    phase = "main"


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    campaign = factory.SubFactory(CampaignFactory)
    user = factory.SubFactory(UserFactory, role=Role.ORGANISER)
    role = Membership.Role.ORGANISER
