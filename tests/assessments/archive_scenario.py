"""A campaign with every kind of record a campaign keeps, built through the services, and everything a user can read
back from it, keyed without database ids, so two installs (or a campaign and its copy) can be compared.

test_campaign_archive.py moves it through export_campaign and import_campaign, test_backup.py through pg_dump
and pg_restore; both compare `fingerprint` before and after. Texts trip JSON's and COPY's escapes: backslashes,
tabs, CR/LF, quotes, non-Latin scripts and characters outside the BMP.
"""

import hashlib
import io
import json
import os
from pathlib import Path
from unittest import mock

from accounts.models import Role
from assessments.formats.qrels import write_qrels
from assessments.metrics.calibration import grade_of
from assessments.models import (
    Adjudication,
    Assignment,
    AuditEvent,
    Campaign,
    Document,
    JudgePrompt,
    Judgment,
    MachineExposure,
    MachineJudge,
    MachineLabel,
    Membership,
    Phase,
    PoolEntry,
    QrelsSnapshot,
    Ranking,
    Reply,
    Run,
    Topic,
)
from assessments.services import assignments, campaigns, discussion, evaluation, exports, machine_judges
from assessments.services.adjudication import Decision, adjudicate
from assessments.services.duplicates import group_duplicates
from assessments.services.imports.documents import import_documents
from assessments.services.imports.qrels import import_qrels
from assessments.services.imports.runs import import_runs
from assessments.services.imports.topics import import_topics
from assessments.services.judging import Labels, judge_entry
from assessments.services.pooling import PoolSpec, build_pool
from tests.chat_server import chat_server
from tests.factories import UserFactory

TOPICS = """<topics>
<topic><number>1</number><title>Cats or dogs?</title><objects>cats, dogs</objects>
  <description>A user wants a pet.</description><narrative>Relevant passages compare "cats" and dogs.</narrative></topic>
<topic><number>2</number><title>Tea or coffee?</title><objects>tea, coffee</objects></topic>
<topic><number>3</number><title>Mac or PC?</title><objects>Mac, PC</objects></topic>
</topics>"""

TWIN = " ".join(f"word{i}" for i in range(40))
DOCUMENTS = [
    {"docno": "d\\1", "title": "\\N", "text": "tab\there, back\\slash,\r\nCRLF and \"quotes\"", "note": {"k": "a\\b\nc\td", "n": 1.5}},
    {"docno": "unicode", "text": "Café — 猫と犬 — 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"},
    {"docno": "html", "html": "<p>Some <b>bold</b> text</p><script>x()</script>"},
    {"docno": "twin-a", "text": TWIN},
    {"docno": "twin-b", "text": TWIN.upper() + "!"},  # the same normalised text: a duplicate group
    *({"docno": f"doc-{i}", "text": f"Passage {i} about the objects."} for i in range(8)),
]
STANCES = ("FIRST", "SECOND", "NEUTRAL", "NO")
RANKED = ["d\\1", "unicode", "html", "twin-a", "twin-b", *(f"doc-{i}" for i in range(8)), "no-text-1"]
# The endpoint judge's key: in the environment while it runs, never in the database or an archive.
KEY_NAME, KEY = "TOUCHSTONE_SCENARIO_KEY", "sk-scenario-never-archived-7d3e"
# The local judge's calibration; 0.1 + 0.2 is a float whose JSON text is long.
THRESHOLDS = {"relevance": [[0.1 + 0.2, 1], [0.5, 2]]}


def _run(tag: str, shift: int) -> str:
    lines = []
    for topic in (1, 2, 3):
        docs = RANKED[shift + topic :] + RANKED[: shift + topic]
        lines += [f"{topic} {STANCES[(rank + topic) % 4]} {doc} {rank} {20 - rank + shift / 10} {tag}\n" for rank, doc in enumerate(docs, 1)]
    return "".join(lines)


def _labels(i: int, topic: str) -> Labels:
    relevance = (i + int(topic)) % 3
    if not relevance:
        return Labels({"relevance": 0})
    return Labels({"relevance": relevance, "quality": i % 3, "stance": STANCES[i % 4]})


def _judge_all(assignment: Assignment, *, shift: int = 0) -> None:
    entries = PoolEntry.objects.filter(topic=assignment.topic).select_related("document").order_by("order")
    if assignment.scope == Assignment.Scope.OVERLAP:
        entries = entries.filter(pk__in=assignment.items.values("entry"))
    for i, entry in enumerate(entries):
        if entry.duplicate_of_id is None:  # twins get their copies from their group's judged entry
            judge_entry(assignment=assignment, entry=entry, labels=_labels(i + shift, assignment.topic.number), time_spent_ms=1000 + i)


def _answer(prompt: str) -> str:
    """The endpoint judge's model: a grade from the prompt's length, after a reason with text that needs escapes."""
    return f"Compares the objects:\ta \"reason\" \\ 猫 😀\n##final answer: {len(prompt) % 3}"


def _machine_judges(campaign: Campaign, olivia, alice, bob) -> None:
    """An endpoint judge with two versions of its relevance prompt, whose labels (one a failed call) are made by
    its run against a loopback server; a local judge with thresholds and labels as its run writes them (made here,
    so that the archive's tests do not load the embedding model); alice and bob each shown a label."""
    two, three = Topic.objects.filter(campaign=campaign, number__in=("2", "3")).order_by("number")
    Campaign.objects.filter(pk=campaign.pk).update(reveal_machine_labels=True, machine_disagreement=1)
    with mock.patch.dict(os.environ, {KEY_NAME: KEY}), chat_server(answer=_answer, failures=[401]) as server:
        judge = machine_judges.add_judge(
            campaign=campaign, name="chat", kind="endpoint", model="test-model", base_url=server.url, key_name=KEY_NAME,
            parameters={"temperature": 0, "max_tokens": 200}, in_flight=1, per_minute=60_000, max_attempts=2, by=olivia,
        )
        machine_judges.run_judge(judge=judge, dimensions=["relevance", "quality"], topic="2", by=olivia)
        first = machine_judges.current_prompts(judge)["relevance"]
        machine_judges.change_prompt(judge=judge, dimension="relevance", template=first.template + "\nBe strict.",
                                     answers={"0": 0, "1": 1, "2": 2, "3": 2}, system="You judge\tstrictly.", by=olivia)
        machine_judges.run_judge(judge=judge, dimensions=["relevance"], topic="3", by=olivia)
    local = machine_judges.add_judge(campaign=campaign, name="local", kind="local", by=olivia)
    MachineJudge.objects.filter(pk=local.pk).update(thresholds=THRESHOLDS)
    for i, entry in enumerate(PoolEntry.objects.filter(topic=three, duplicate_of=None).select_related("document").order_by("order")):
        similarity = i / 10
        MachineLabel.objects.create(
            judge=local, topic=three, document=entry.document, dimension="relevance", model=local.model, prompt_version=0,
            parameters={"thresholds": THRESHOLDS["relevance"]}, status="ok",
            labels={"relevance": grade_of(similarity, [tuple(cut) for cut in THRESHOLDS["relevance"]], 0)},
            raw_answer=f"{similarity:.6f}", reason=f"cosine similarity {similarity:.3f} to the topic",
        )
    for assessor, topic, judge_name in ((alice, two, "chat"), (bob, three, "local")):
        label = MachineLabel.objects.filter(judge__name=judge_name, topic=topic, status="ok").order_by("-id").first()
        MachineExposure.objects.create(assessor=assessor, topic=topic, document=label.document, label=label)


def build(folder: Path) -> Campaign:
    """The campaign "archived": three topics (one for training), documents, two runs with stances, a pool with
    twins, training and main assignments with overlap slices, judgments with several revisions, a flag with a
    reply, imported qrels, an adjudication revised once, machine judges with their labels and an assessor shown
    one, two qrels snapshots, closed and archived, and the audit trail of all that."""
    ada = UserFactory(username="ada", role=Role.ADMIN, first_name="Ada", last_name="Lovelace")
    olivia = UserFactory(username="olivia", role=Role.ORGANISER, first_name="Olivia")
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    campaign = campaigns.create_campaign(
        slug="archived", name="Touché 2022 Task 2 (archived)", preset="touche-2022-task2", organisers=[olivia],
        created_by=ada, guidelines="Judge the passage, not the page.\nTabs\tand \\ stay.",
    )
    campaigns.add_member(campaign=campaign, user=ada, role=Membership.Role.ADJUDICATOR, by=olivia)
    (folder / "topics.xml").write_text(TOPICS)
    (folder / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS))
    (folder / "a.txt").write_text(_run("a", 0))
    (folder / "b.txt").write_text(_run("b", 3))
    import_topics(campaign=campaign, path=folder / "topics.xml", by=olivia)
    Topic.objects.filter(campaign=campaign).update(pool_seed=2022)  # the same order to judge in, run after run
    import_documents(campaign=campaign, paths=[folder / "documents.jsonl"], by=olivia)
    import_runs(campaign=campaign, paths=[folder / "a.txt", folder / "b.txt"], uploaded_by=olivia)
    build_pool(campaign=campaign, spec=PoolSpec(depth=6), by=olivia)
    group_duplicates(campaign=campaign)
    one, two, three = Topic.objects.filter(campaign=campaign).order_by("number")

    assignments.mark_training(campaign=campaign, topics=[one], is_training=True, by=ada)
    campaigns.advance_phase(campaign=campaign, to=Phase.TRAINING, by=ada)
    assignments.assign_topics(campaign=campaign, assessors=[alice, bob], topics=[one], phase=Phase.TRAINING, assigned_by=ada)
    for shift, assessor in enumerate((alice, bob)):
        _judge_all(Assignment.objects.get(topic=one, assessor=assessor), shift=shift)
    first = PoolEntry.objects.filter(topic=one).select_related("document").order_by("order").first()
    training = Assignment.objects.get(topic=one, assessor=alice)
    judge_entry(assignment=training, entry=first, changes={"note": "Is a forum post an argument?", "flagged": True}, time_spent_ms=5000)
    judge_entry(assignment=training, entry=first, changes={"labels": {"relevance": 2, "quality": 1, "stance": "NEUTRAL"}}, time_spent_ms=6000)
    flagged = Judgment.objects.get(topic=one, document=first.document, assessor=alice)
    discussion.reply(judgment=flagged, text="Yes, if it gives reasons.\nSee §2.", resolves=True, by=olivia)
    assignments.close_training_round(campaign=campaign, then="main", by=ada)

    assignments.assign_topics(campaign=campaign, assessors=[alice], topics=[two], phase=Phase.MAIN, assigned_by=olivia)
    assignments.assign_topics(campaign=campaign, assessors=[bob], topics=[three], phase=Phase.MAIN, assigned_by=olivia)
    assignments.draw_overlap(campaign=campaign, assigned_by=olivia, share=0.5)
    for shift, assignment in enumerate(Assignment.objects.filter(topic__campaign=campaign, phase=Phase.MAIN).order_by("pk")):
        _judge_all(assignment, shift=shift)
    (folder / "official.qrels").write_text("2 0 doc-1 2\n2 0 no-text-1 0\n3 0 unicode 1\n")
    import_qrels(campaign=campaign, path=folder / "official.qrels", kind="relevance", assessor="touche22", by=olivia)

    disputed = Document.objects.get(collection=campaign.collection, doc_id=first.document.doc_id)
    adjudicate(topic=one, document=disputed, decision=Decision({"relevance": 1, "quality": 2, "stance": "FIRST"}, reason="Gives reasons."), by=ada)
    adjudicate(topic=one, document=disputed, decision=Decision({"relevance": 2, "quality": 2, "stance": "SECOND"}, reason="On reflection: \"SECOND\"."), by=ada)
    _machine_judges(campaign, olivia, alice, bob)
    for kind, phase, rule in (("relevance", "main", "majority"), ("stance", "all", "adjudicated")):
        b"".join(exports.export_qrels(campaign=campaign, kind=kind, phase=phase, rule=rule, created_by=olivia))
    campaigns.advance_phase(campaign=campaign, to=Phase.CLOSED, by=olivia)
    return campaigns.set_archived(campaign=campaign, archived=True, by=olivia)


def fingerprint(campaign: Campaign) -> dict:
    """Everything about the campaign a user can see or export, as JSON-ready values without database ids; a qrels
    snapshot's content is read through the download path, which checks it against its checksum."""
    campaign = Campaign.objects.select_related("collection").get(pk=campaign.pk)
    c = campaign

    def rows(query, *fields):
        return [[_plain(value) for value in row] for row in query.values_list(*fields)]

    judgments = rows(
        Judgment.objects.filter(topic__campaign=c).order_by("topic__number", "document__doc_id", "assessor__username"),
        "topic__number", "document__doc_id", "assessor__username", "phase", "labels", "note",
        "flagged", "time_spent_ms", "source", "revision", "created_at", "updated_at",
    )
    return {
        "campaign": [_plain(getattr(c, f)) for f in (
            "name", "preset", "scheme", "guidelines", "phase", "training_round", "propagate_to_duplicates", "seconds_per_judgment", "agreement_threshold", "overlap_share", "created_at",
            "archived_at", "reveal_machine_labels", "machine_disagreement",
        )] + [c.collection.slug, c.collection.name],
        "members": rows(Membership.objects.filter(campaign=c).order_by("user__username"), "user__username", "role", "added_by__username", "created_at"),
        "topics": rows(Topic.objects.filter(campaign=c).order_by("number"), "number", "title", "description", "narrative",
                       "compared_objects", "cause", "effect", "is_training", "pool_seed", "position"),
        "documents": rows(Document.objects.filter(pool_entries__topic__campaign=c).distinct().order_by("doc_id"),
                          "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash"),
        "runs": rows(Run.objects.filter(campaign=c).order_by("tag"), "tag", "team", "file_name", "has_stance", "line_count",
                     "warnings", "uploaded_by__username", "uploaded_at"),
        "rankings": rows(Ranking.objects.filter(run__campaign=c).order_by("run__tag", "topic__number"), "run__tag", "topic__number",
                         "length", "docs", "ranks", "scores", "stances", "by_rank", "by_single"),
        "pool": rows(PoolEntry.objects.filter(topic__campaign=c).order_by("topic__number", "order"), "topic__number",
                     "document__doc_id", "order", "strategy", "added_at", "duplicate_of__document__doc_id"),
        "sources": rows(PoolEntry.objects.filter(topic__campaign=c).order_by("topic__number", "document__doc_id", "sources__run__tag"),
                        "topic__number", "document__doc_id", "sources__run__tag", "sources__rank_position", "sources__score_position"),
        "assignments": rows(Assignment.objects.filter(topic__campaign=c).order_by("topic__number", "assessor__username", "phase"),
                            "topic__number", "assessor__username", "phase", "scope", "round", "active", "assigned_by__username", "created_at"),
        "overlap": rows(Assignment.objects.filter(topic__campaign=c, items__isnull=False).order_by("topic__number", "assessor__username", "items__entry__order"),
                        "topic__number", "assessor__username", "items__entry__document__doc_id"),
        "judgments": judgments,
        "history": rows(
            Judgment.objects.filter(topic__campaign=c).order_by("topic__number", "document__doc_id", "assessor__username", "events__revision"),
            "topic__number", "document__doc_id", "assessor__username", "events__revision", "events__assessor__username",
            "events__labels", "events__note", "events__flagged", "events__time_spent_ms",
            "events__source", "events__at",
        ),
        "replies": rows(Reply.objects.filter(judgment__topic__campaign=c).order_by("created_at"), "judgment__topic__number",
                        "judgment__document__doc_id", "judgment__assessor__username", "author__username", "text", "resolves", "created_at"),
        "adjudications": rows(
            Adjudication.objects.filter(topic__campaign=c).order_by("topic__number", "document__doc_id", "events__revision"),
            "topic__number", "document__doc_id", "labels", "reason", "adjudicator__username", "revision",
            "created_at", "updated_at", "events__revision", "events__adjudicator__username", "events__labels",
            "events__reason", "events__at",
        ),
        "snapshots": [
            [s.number, s.kind, s.phase, s.rule, s.line_count, s.sha256, s.created_by.username, _plain(s.created_at),
             b"".join(exports.snapshot_content(s)).decode()]
            for s in QrelsSnapshot.objects.filter(campaign=c).select_related("created_by").order_by("number")
        ],
        "machine_judges": rows(
            MachineJudge.objects.filter(campaign=c).order_by("name"), "name", "kind", "base_url", "model", "key_name",
            "parameters", "in_flight", "per_minute", "max_attempts", "thresholds", "created_by__username", "created_at",
        ),
        "prompts": rows(
            JudgePrompt.objects.filter(judge__campaign=c).order_by("judge__name", "dimension", "version"),
            "judge__name", "dimension", "version", "system", "template", "answers", "created_by__username", "created_at",
        ),
        # Every field of a label's provenance, and the prompt it names.
        "machine_labels": rows(
            MachineLabel.objects.filter(judge__campaign=c).order_by("judge__name", "topic__number", "document__doc_id", "dimension", "at"),
            "judge__name", "topic__number", "document__doc_id", "dimension", "prompt__dimension", "prompt__version",
            "prompt__template", "status", "labels", "model", "prompt_version", "parameters", "raw_answer", "reason", "error",
            "attempts", "prompt_tokens", "completion_tokens", "duration_ms", "at",
        ),
        "exposures": rows(
            MachineExposure.objects.filter(label__judge__campaign=c).order_by("at"), "assessor__username", "topic__number",
            "document__doc_id", "label__judge__name", "label__topic__number", "label__document__doc_id", "label__dimension",
            "label__at", "at",
        ),
        "audit": audit_trail(c),
        "qrels": {f"{kind} {phase} {rule}": _qrels(c, kind, phase, rule) for kind, phase, rule in _exports(c)},
        "evaluation": {
            f"{phase} {rule} {order}": evaluation.evaluate_runs(
                campaign=c, measure="nDCG@5", kinds=("relevance", "quality"), phase=phase, rule=rule, order=order, ci=0.9,
            ).as_json()
            for phase in ("main", "all") for rule in ("majority", "adjudicated") for order in ("score", "rank")
        },
    }


def audit_trail(campaign: Campaign) -> list[list]:
    return [
        [_plain(at), actor, action, subject, before, after, details]
        for at, actor, action, subject, before, after, details in AuditEvent.objects.filter(campaign=campaign)
        .order_by("at", "pk").values_list("at", "actor__username", "action", "subject", "before", "after", "details")
    ]


def _exports(campaign: Campaign):
    """Every qrels file the campaign can export: each dimension of its scheme, phase and rule."""
    scheme = campaign.label_scheme
    rules = [*exports.RULE_NAMES, *(f"assessor:{name}" for name in exports.assessors_of(campaign))]
    for kind in scheme.names:
        for phase in exports.PHASES:
            for rule in rules:
                if not (scheme.dimension(kind).value_type is str and rule in ("max", "mean")):
                    yield kind, phase, rule


def _qrels(campaign: Campaign, kind: str, phase: str, rule: str) -> str:
    text = io.StringIO()
    write_qrels(exports.qrels_rows(campaign=campaign, kind=kind, phase=phase, rule=rule), text)
    return hashlib.sha256(text.getvalue().encode()).hexdigest() + " " + text.getvalue()


def _plain(value):
    return value.isoformat() if hasattr(value, "isoformat") else value
