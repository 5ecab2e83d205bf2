"""factory_boy factories for the domain. Labels go through services, never factories."""

import factory

from accounts.models import Role, User
from assessments.labels import PRESETS
from assessments.models import Assignment, Campaign, Collection, Document, Membership, PoolEntry, Topic


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
