"""Line-aligned qrels (`export_qrels --aligned`): one file per dimension, the same rows in the same order, whatever
the campaign's scheme says of the dimensions it asks only sometimes."""

import io

import pytest
from django.core.management import call_command

from assessments.labels import PRESETS, LabelScheme
from assessments.models import Document
from assessments.services.aligned_exports import export_aligned
from assessments.services.exports import ExportError
from assessments.services.judging import Labels, record_judgment
from tests.factories import TopicFactory, UserFactory

pytestmark = pytest.mark.django_db


def judged(campaign, assessor, number, doc_id, **labels):
    topic = campaign.topics.get_or_create(number=number)[0]
    document = Document.objects.get_or_create(collection=campaign.collection, doc_id=doc_id)[0]
    record_judgment(topic=topic, document=document, assessor=assessor, phase="main", labels=Labels(labels))


def read(folder, campaign, kind):
    return (folder / f"{campaign.slug}-{kind}.qrels").read_text(encoding="utf-8")


def test_the_2022_task1_preset_gives_quality_and_coherence_0_to_a_pair_judged_not_relevant():
    scheme = PRESETS["touche-2022-task1"][1]

    assert scheme.value_for_files("coherence", {"relevance": 0}) == 0
    assert scheme.value_for_files("quality", {"relevance": 0}) == 0
    assert scheme.value_for_files("coherence", {"relevance": 1}) is None  # asked, not answered yet
    assert scheme.value_for_files("coherence", {}) is None


def test_a_scheme_without_otherwise_is_filled_with_0_where_the_condition_fails(tmp_path):
    """A 2022 Task 1 campaign made before its preset had `otherwise` (the scheme is stored with the campaign): the
    aligned files still hold every judged pair, 0 where quality and coherence were not asked."""
    old = PRESETS["touche-2022-task1"][1].to_json()
    for dimension in old["dimensions"]:
        dimension.pop("otherwise", None)
    campaign = TopicFactory(campaign__preset="touche-2022-task1", campaign__scheme=old, number="7").campaign
    assert LabelScheme.from_json(campaign.scheme).dimension("coherence").otherwise is None
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    judged(campaign, alice, "7", "b", relevance=0)
    judged(campaign, alice, "7", "a", relevance=2, quality=1, coherence=2)
    judged(campaign, bob, "7", "a", relevance=1, quality=2, coherence=1)
    judged(campaign, alice, "10", "c", relevance=1, quality=1, coherence=0)

    export = export_aligned(campaign=campaign, output_dir=tmp_path, rule="max")

    assert export.lines == 3 and not export.warnings
    assert read(tmp_path, campaign, "relevance") == "7 0 a 2\n7 0 b 0\n10 0 c 1\n"
    assert read(tmp_path, campaign, "quality") == "7 0 a 2\n7 0 b 0\n10 0 c 1\n"
    assert read(tmp_path, campaign, "coherence") == "7 0 a 2\n7 0 b 0\n10 0 c 0\n"
    assert [f.snapshot.line_count for f in export.files] == [3, 3, 3]


def test_labels_combine_per_dimension_by_the_rule_the_filled_0_counting_as_a_label(tmp_path):
    campaign = TopicFactory(campaign__preset="touche-2022-task1", number="1").campaign
    alice, bob, carol = (UserFactory(username=name) for name in ("alice", "bob", "carol"))
    judged(campaign, alice, "1", "a", relevance=0)
    judged(campaign, bob, "1", "a", relevance=2, quality=2, coherence=2)
    judged(campaign, carol, "1", "a", relevance=2, quality=1, coherence=2)

    export_aligned(campaign=campaign, output_dir=tmp_path)  # majority, ties to the lower

    assert [read(tmp_path, campaign, kind) for kind in ("relevance", "quality", "coherence")] == [
        "1 0 a 2\n", "1 0 a 0\n", "1 0 a 2\n",
    ]
    export_aligned(campaign=campaign, output_dir=tmp_path, rule="assessor:alice")
    assert read(tmp_path, campaign, "coherence") == "1 0 a 0\n"


def test_a_category_that_cannot_be_filled_is_refused_unless_left_out(tmp_path):
    campaign = TopicFactory(campaign__preset="touche-2023-task1", number="1").campaign  # relevance, quality, stance
    alice = UserFactory(username="alice")
    judged(campaign, alice, "1", "a", relevance=2, quality=1, stance="PRO")
    judged(campaign, alice, "1", "b", relevance=0)

    with pytest.raises(ExportError, match="stance has no value 0 and no 'otherwise'"):
        export_aligned(campaign=campaign, output_dir=tmp_path)
    assert not list(tmp_path.iterdir())

    out = io.StringIO()
    call_command("export_qrels", campaign.slug, "--aligned", "--kind", "quality,relevance", "--output-dir", str(tmp_path),
                 stdout=out, stderr=io.StringIO())
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{campaign.slug}-quality.qrels", f"{campaign.slug}-relevance.qrels"]
    assert read(tmp_path, campaign, "quality") == "1 0 a 1\n1 0 b 0\n"
    assert "2 aligned files of 2 lines each" in out.getvalue()


def test_the_command_wants_a_folder_and_no_single_output(tmp_path):
    campaign = TopicFactory(campaign__preset="touche-2022-task1", number="1").campaign
    err = io.StringIO()

    with pytest.raises(SystemExit):
        call_command("export_qrels", campaign.slug, "--aligned", "--output", str(tmp_path / "x"), stdout=io.StringIO(), stderr=err)
    assert "give --output-dir DIR" in err.getvalue()
    with pytest.raises(SystemExit):
        call_command("export_qrels", campaign.slug, "--output-dir", str(tmp_path), stdout=io.StringIO(), stderr=err)
    assert "--output-dir goes with --aligned" in err.getvalue()
