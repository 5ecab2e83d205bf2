"""Machine judges: adding one to a campaign, its prompts, and running it over the pool as a job.

A run asks, per dimension of the scheme (in the scheme's order, so a dimension asked only "when relevance ≥ 1" is
asked only where the judge's own relevance label allows it), each pooled document the judge has no label of under
the current prompt. Each answer is written the moment it arrives, one row per call (models.machine.MachineLabel),
so a worker killed mid-job loses at most the calls in flight: the job's retry skips every document this job (or an
earlier one, under the same prompt) already has a row for, and repeats no paid call. A call that fails after its
retries, or whose answer names no value of the scheme, is a recorded failure, never a label. A cancel stops the
job at its next answer; what was recorded stays (it was paid for).

Machine labels are never Judgments: nothing that reads human labels (the judge page, the queues, exports,
agreement) sees them. See models.machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, QuerySet

from accounts.models import User
from assessments import prompts
from assessments.labels import CATEGORY, Dimension, LabelScheme, SchemeError, Value
from assessments.metrics.calibration import calibrate, grade_of
from assessments.models import (
    Campaign,
    Document,
    Job,
    JudgePrompt,
    Judgment,
    Kind,
    MachineExposure,
    MachineJudge,
    MachineLabel,
    PoolEntry,
    Topic,
)
from assessments.rendering import html_text
from assessments.services import audit, job_queue, jobs
from assessments.services.jobs import NoProgress, Progress
from assessments.services.machine_endpoint import CallFailed, ChatEndpoint, RateLimit

Action = audit.Action
# The name of the environment variable that holds a key (OPENAI_API_KEY): capitals, so that a key pasted by mistake
# (sk-…, mostly lower case) is refused instead of stored.
KEY_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
# What an answer costs beyond its prompt, for the estimate: a sentence or two of reason and the final line.
COMPLETION_TOKENS = 60
LOCAL_BATCH = 64


class MachineJudgeError(ValueError):
    """A judge that cannot be added or run as asked (the message says why)."""


def add_judge(
    *, campaign: Campaign, name: str, kind: str, model: str = "", base_url: str = "", key_name: str = "",
    parameters: dict | None = None, in_flight: int = 4, per_minute: int = 0, max_attempts: int = 4, by: User | None,
) -> MachineJudge:
    """Add a judge to the campaign, with the default prompt of every dimension it can ask (endpoint judges)."""
    if campaign.kind != Kind.RANKING:
        raise MachineJudgeError(f"campaign {campaign.slug} judges {campaign.get_kind_display().lower()}: machine judges read text documents of ranked retrieval campaigns")
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,64}", name):
        raise MachineJudgeError(f"judge name {name!r}: use letters, digits, - and _ (at most 64)")
    if MachineJudge.objects.filter(campaign=campaign, name=name).exists():
        raise MachineJudgeError(f"campaign {campaign.slug} already has a judge named {name}")
    if kind == MachineJudge.Kind.ENDPOINT:
        if not re.match(r"https?://[^\s/]+", base_url):
            raise MachineJudgeError(f"endpoint {base_url!r}: give the base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1")
        if not model.strip():
            raise MachineJudgeError("name the model the endpoint should run (--model)")
    elif kind == MachineJudge.Kind.LOCAL:
        from assessments.services.machine_local import MODEL_NAME

        model, base_url, key_name = MODEL_NAME, "", ""
    else:
        raise MachineJudgeError(f"unknown judge kind {kind!r}: use endpoint or local")
    if key_name and not KEY_NAME.fullmatch(key_name):
        raise MachineJudgeError(f"key name {key_name!r}: name the environment variable that holds the key, not the key")
    if in_flight < 1 or max_attempts < 1 or per_minute < 0:
        raise MachineJudgeError("calls in flight and attempts must be at least 1, and calls per minute at least 0")
    with transaction.atomic():
        judge = MachineJudge.objects.create(
            campaign=campaign, name=name, kind=kind, model=model.strip(), base_url=base_url, key_name=key_name,
            parameters=parameters if parameters is not None else {"temperature": 0}, in_flight=in_flight,
            per_minute=per_minute, max_attempts=max_attempts, created_by=by,
        )
        if not judge.is_local:
            for dimension in campaign.label_scheme.dimensions:
                default = prompts.default_prompt(dimension)
                JudgePrompt.objects.create(judge=judge, dimension=dimension.name, version=1, system=default.system,
                                           template=default.template, answers=default.answers, created_by=by)
        audit.record(campaign=campaign, action=Action.MACHINE_JUDGE_ADDED, by=by, subject=name,
                     after={"kind": kind, "model": judge.model, "base_url": base_url, "key_name": key_name,
                            "parameters": judge.parameters, "in_flight": in_flight, "per_minute": per_minute})
    return judge


class PromptChange(NamedTuple):
    prompt: JudgePrompt
    created: bool  # False: the prompt said what the newest version says, and that version is `prompt`


def change_prompt(
    *, judge: MachineJudge, dimension: str, template: str, answers: dict, system: str | None = None, by: User | None,
) -> PromptChange:
    """A new version of the judge's prompt for ``dimension`` (labels keep naming the version they were made with).
    A prompt equal to the newest version is that version: a new one would make the next run ask, and pay for,
    every document again. The page and the API say which it was."""
    if judge.is_local:
        raise MachineJudgeError(f"judge {judge.name} is the local model: it has thresholds (calibrate it), not prompts")
    checked_dimension = _dimension(judge.campaign.label_scheme, dimension)
    if not template.strip():
        raise MachineJudgeError("a prompt needs text")
    try:
        checked = prompts.check_answers(checked_dimension, answers)
    except ValueError as exc:
        raise MachineJudgeError(str(exc)) from None
    with transaction.atomic():
        latest = JudgePrompt.objects.select_for_update().filter(judge=judge, dimension=dimension).order_by("-version").first()
        if latest and (latest.template, latest.answers, latest.system) == (template, checked, latest.system if system is None else system):
            return PromptChange(latest, created=False)
        prompt = JudgePrompt.objects.create(
            judge=judge, dimension=dimension, version=(latest.version if latest else 0) + 1,
            system=latest.system if system is None and latest else (system or ""), template=template, answers=checked,
            created_by=by,
        )
        audit.record(campaign=judge.campaign, action=Action.MACHINE_PROMPT, by=by, subject=f"{judge.name} {dimension}",
                     after={"version": prompt.version, "answers": checked})
    return PromptChange(prompt, created=True)


def current_prompts(judge: MachineJudge) -> dict[str, JudgePrompt]:
    """The newest prompt version of each dimension."""
    newest: dict[str, JudgePrompt] = {}
    for prompt in JudgePrompt.objects.filter(judge=judge).order_by("dimension", "-version"):
        newest.setdefault(prompt.dimension, prompt)
    return newest


@dataclass(frozen=True)
class Item:
    topic: Topic
    document: Document


@dataclass
class Plan:
    """What a run would ask: per dimension, the documents not yet labelled under the current prompt."""

    judge: MachineJudge
    dimensions: list[Dimension]
    items: list[Item]
    calls: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0

    def as_estimate(self) -> dict:
        calls = sum(self.calls.values())
        return {
            "calls": calls, "by_dimension": dict(self.calls), "prompt_tokens": self.prompt_tokens,
            "completion_tokens": 0 if self.judge.is_local else calls * COMPLETION_TOKENS,
            "note": "Conditional dimensions are counted for every document; a run asks them only where the judge's own label of the condition holds.",
        }


def plan(*, judge: MachineJudge, dimensions: Sequence[str] = (), topic: str | None = None, only_unjudged: bool = False) -> Plan:
    """What a run would ask, and its cost estimate (tokens of the prompts as filled, about four characters each)."""
    chosen = _dimensions(judge, dimensions)
    # A stub (a pooled id whose text was never imported) gives a model nothing to read: it is left to people.
    entries = PoolEntry.objects.filter(topic__campaign=judge.campaign, duplicate_of=None, document__has_text=True)
    if topic is not None:
        if not Topic.objects.filter(campaign=judge.campaign, number=topic).exists():
            raise MachineJudgeError(f"campaign {judge.campaign.slug} has no topic {topic}")
        entries = entries.filter(topic__number=topic)
    if only_unjudged:
        entries = entries.exclude(Exists(Judgment.objects.filter(topic=OuterRef("topic"), document=OuterRef("document"))))
    entries = entries.select_related("topic", "document").order_by("topic__position", "topic__number", "order", "id")
    items = [Item(entry.topic, entry.document) for entry in entries]
    result = Plan(judge=judge, dimensions=chosen, items=items)
    newest = current_prompts(judge)
    for dimension in chosen:
        todo = list(_unlabelled(judge, dimension.name, items, newest.get(dimension.name)))
        result.calls[dimension.name] = len(todo)
        if judge.is_local:
            result.prompt_tokens += sum(prompts.estimate_tokens(_document_text(item.document)) for item in todo)
        else:
            template = newest[dimension.name]
            result.prompt_tokens += sum(
                prompts.estimate_tokens(template.system + prompts.render(template.template, _fields(item))) for item in todo
            )
    return result


def start_judging(*, judge: MachineJudge, dimensions: Sequence[str] = (), topic: str | None = None,
                  only_unjudged: bool = False, by: User | None) -> Job:
    """Queue a run as a job (the page and the API); its estimate is in the job's params for the page to show."""
    estimate = plan(judge=judge, dimensions=dimensions, topic=topic, only_unjudged=only_unjudged).as_estimate()
    params = {"judge": judge.pk, "dimensions": list(dimensions), "topic": topic, "only_unjudged": only_unjudged, "estimate": estimate}
    return job_queue.queue_job(kind="machine_judge", campaign=judge.campaign, params=params, created_by=by)


@jobs.handler("machine_judge")
def _run_job(job: Job, progress: Progress) -> dict:
    judge = MachineJudge.objects.select_related("campaign").get(pk=job.params["judge"])
    return run_judge(judge=judge, dimensions=job.params.get("dimensions") or (), topic=job.params.get("topic"),
                     only_unjudged=bool(job.params.get("only_unjudged")), job=job, progress=progress)


def run_judge(
    *, judge: MachineJudge, dimensions: Sequence[str] = (), topic: str | None = None, only_unjudged: bool = False,
    job: Job | None = None, progress: Progress | None = None, by: User | None = None,
) -> dict:
    """Label the plan's documents and return the summary a job shows (labelled, failed, tokens, per dimension)."""
    progress = progress or NoProgress()
    work = plan(judge=judge, dimensions=dimensions, topic=topic, only_unjudged=only_unjudged)
    total, done = sum(work.calls.values()), 0
    progress.advance(0, total)
    counts = {"labelled": 0, "failed": 0, "prompt_tokens": 0, "completion_tokens": 0}
    newest = current_prompts(judge)
    if judge.is_local and any(not judge.thresholds.get(d.name) for d in work.dimensions):
        recalibrate(judge=judge, dimensions=[d.name for d in work.dimensions], by=by)
    for dimension in work.dimensions:
        items = _asked(judge, dimension, _unlabelled(judge, dimension.name, work.items, newest.get(dimension.name), job=job))
        asked = _ask_local(judge, dimension, items) if judge.is_local else _ask_endpoint(judge, dimension, newest[dimension.name], items)
        for row in asked:
            row.job = job
            row.save(force_insert=True)
            counts["labelled" if row.status == MachineLabel.Status.OK else "failed"] += 1
            counts["prompt_tokens"] += row.prompt_tokens
            counts["completion_tokens"] += row.completion_tokens
            done += 1
            progress.advance(done, total)
        skipped = work.calls[dimension.name] - len(items)
        done += skipped
        progress.advance(done, total)
    with transaction.atomic():
        audit.record(campaign=judge.campaign, action=Action.MACHINE_JUDGED, by=by or (job.created_by if job else None),
                     subject=judge.name, details=counts)
    summary = f"{judge.name}: {counts['labelled']} labels, {counts['failed']} failed calls"
    return {**counts, "summary": summary, "warnings": [f"{counts['failed']} calls failed; they are recorded, with no label"] if counts["failed"] else []}


def recalibrate(*, judge: MachineJudge, dimensions: Sequence[str] = (), by: User | None = None) -> dict[str, list]:
    """Fit the local judge's thresholds to the human labels of judged documents (the majority per document)."""
    from assessments.services.evaluation import human_labels

    scheme = judge.campaign.label_scheme
    found: dict[str, list] = {}
    for dimension in _dimensions(judge, dimensions):
        labels = human_labels(judge.campaign, dimension.name)
        documents = {d.doc_id: d for d in Document.objects.filter(collection=judge.campaign.collection, doc_id__in={doc for docs in labels.values() for doc in docs})}
        topics = {t.number: t for t in Topic.objects.filter(campaign=judge.campaign, number__in=labels)}
        pairs = []
        for number, docs in labels.items():
            present = [(documents[doc], grade) for doc, grade in docs.items() if doc in documents and number in topics]
            scores = _similarities(topics[number], [document for document, _ in present]) if present else []
            pairs += [(score, grade) for score, (_, grade) in zip(scores, present, strict=True)]
        if not pairs:
            raise MachineJudgeError(f"the local judge calibrates on judged documents: campaign {judge.campaign.slug} has no {dimension.name} labels yet")
        found[dimension.name] = [list(cut) for cut in calibrate(pairs, sorted(scheme.values(dimension.name)))]  # type: ignore[arg-type]
    with transaction.atomic():
        MachineJudge.objects.filter(pk=judge.pk).update(thresholds={**judge.thresholds, **found})
        judge.thresholds = {**judge.thresholds, **found}
        audit.record(campaign=judge.campaign, action=Action.MACHINE_PROMPT, by=by, subject=f"{judge.name} calibration", after={"thresholds": found})
    return found


def _ask_endpoint(judge: MachineJudge, dimension: Dimension, prompt: JudgePrompt, items: list[Item]) -> Iterator[MachineLabel]:
    """One call per item, ``judge.in_flight`` at a time; rows yielded as answers arrive (written by the caller,
    on the caller's connection: the threads only talk to the endpoint)."""
    endpoint = ChatEndpoint(
        base_url=judge.base_url, model=judge.model, key=_key(judge), parameters=judge.parameters,
        max_attempts=judge.max_attempts, backoff=settings.MACHINE_JUDGE_BACKOFF_SECONDS, rate=RateLimit(judge.per_minute),
    )
    base = {"judge": judge, "prompt": prompt, "dimension": dimension.name, "model": judge.model,
            "prompt_version": prompt.version, "parameters": judge.parameters}
    pending: dict[Future, Item] = {}
    queue = iter(items)
    with ThreadPoolExecutor(max_workers=judge.in_flight, thread_name_prefix="machine-judge") as pool:
        try:
            while True:
                while len(pending) < judge.in_flight and (item := next(queue, None)) is not None:
                    user = prompts.render(prompt.template, _fields(item))
                    pending[pool.submit(endpoint.complete, system=prompt.system, user=user)] = item
                if not pending:
                    return
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    item = pending.pop(future)
                    yield _row(base, item, future, prompt.answers)
        finally:  # a cancel (raised at a progress report) leaves calls unstarted
            for future in pending:
                future.cancel()


def _row(base: dict, item: Item, future: Future, answers: dict) -> MachineLabel:
    row = MachineLabel(**base, topic=item.topic, document=item.document)
    try:
        reply = future.result()
    except CallFailed as exc:
        row.status, row.error, row.attempts = MachineLabel.Status.FAILED, str(exc), exc.attempts
        return row
    row.raw_answer, row.attempts, row.duration_ms = reply.text, reply.attempts, reply.duration_ms
    row.prompt_tokens, row.completion_tokens = reply.prompt_tokens, reply.completion_tokens
    try:
        answer = prompts.parse_answer(reply.text, answers)
    except prompts.AnswerError as exc:
        row.status, row.error = MachineLabel.Status.FAILED, str(exc)
        return row
    row.status, row.labels, row.reason = MachineLabel.Status.OK, {base["dimension"]: answer.value}, answer.reason
    return row


def _ask_local(judge: MachineJudge, dimension: Dimension, items: list[Item]) -> Iterator[MachineLabel]:
    cuts = [tuple(cut) for cut in judge.thresholds[dimension.name]]
    lowest = min(dimension.value_type(v.value) for v in dimension.values)
    parameters = {"thresholds": judge.thresholds[dimension.name]}
    by_topic: dict[int, list[Item]] = {}
    for item in items:
        by_topic.setdefault(item.topic.pk, []).append(item)
    for batch in (group[i:i + LOCAL_BATCH] for group in by_topic.values() for i in range(0, len(group), LOCAL_BATCH)):
        scores = _similarities(batch[0].topic, [item.document for item in batch])
        for item, score in zip(batch, scores, strict=True):
            value = grade_of(score, cuts, lowest)
            yield MachineLabel(
                judge=judge, dimension=dimension.name, topic=item.topic, document=item.document, model=judge.model,
                prompt_version=0, parameters=parameters, status=MachineLabel.Status.OK, labels={dimension.name: value},
                raw_answer=f"{score:.6f}", reason=f"cosine similarity {score:.3f} to the topic",
            )


def _similarities(topic: Topic, documents: Sequence[Document]) -> list[float]:
    from assessments.services.machine_local import similarities

    query = " ".join(part for part in (topic.title, topic.description, topic.narrative) if part)
    return similarities(query, [_document_text(document) for document in documents])


def _unlabelled(judge: MachineJudge, dimension: str, items: list[Item], prompt: JudgePrompt | None, *, job: Job | None = None) -> list[Item]:
    """The items with no label under the current prompt version. A failed call counts as done within the job that
    made it, so the job's retry resumes without paying for it again; a new run asks it again."""
    rows = MachineLabel.objects.filter(judge=judge, dimension=dimension, prompt_version=prompt.version if prompt else 0)
    done = set(rows.filter(status=MachineLabel.Status.OK).values_list("topic_id", "document_id"))
    if job is not None:
        done |= set(rows.filter(job=job).values_list("topic_id", "document_id"))
    return [item for item in items if (item.topic.pk, item.document.pk) not in done]


def _asked(judge: MachineJudge, dimension: Dimension, items: list[Item]) -> list[Item]:
    """The items whose condition for ``dimension`` holds on the judge's own current label of the dimension it
    depends on (all of them for an unconditional dimension)."""
    condition = dimension.condition
    if condition is None:
        return items
    own = current_labels(judge, condition.dimension)
    return [item for item in items
            if (value := own.get((item.topic.pk, item.document.pk))) is not None and condition.holds({condition.dimension: value})]


def current_labels(judge: MachineJudge, dimension: str, *, topic_ids: Sequence[int] | None = None) -> dict[tuple[int, int], Value]:
    """(topic id, document id) -> the judge's newest successful label of ``dimension``."""
    rows = MachineLabel.objects.filter(judge=judge, dimension=dimension, status=MachineLabel.Status.OK)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=topic_ids)
    newest = rows.values("topic_id", "document_id").annotate(last=Max("id")).values("last")
    return {(t, d): labels.get(dimension) for t, d, labels in
            MachineLabel.objects.filter(id__in=newest).values_list("topic_id", "document_id", "labels")}


def _dimensions(judge: MachineJudge, names: Sequence[str]) -> list[Dimension]:
    scheme = judge.campaign.label_scheme
    chosen = [_dimension(scheme, name) for name in names] if names else list(scheme.dimensions)
    if judge.is_local:
        categories = [d.name for d in chosen if d.kind == CATEGORY]
        if names and categories:
            raise MachineJudgeError(f"the local judge grades by similarity; it cannot tell {', '.join(categories)} (a category)")
        chosen = [d for d in chosen if d.kind != CATEGORY and d.condition is None] if not names else chosen
    order = {d.name: i for i, d in enumerate(scheme.dimensions)}
    return sorted(chosen, key=lambda d: order[d.name])


def _dimension(scheme: LabelScheme, name: str) -> Dimension:
    try:
        return scheme.dimension(name)
    except SchemeError as exc:
        raise MachineJudgeError(str(exc)) from None


def _key(judge: MachineJudge) -> str:
    if not judge.key_name:
        return ""
    key = os.environ.get(judge.key_name) or settings.MACHINE_JUDGE_KEYS.get(judge.key_name, "")
    if not key:
        raise MachineJudgeError(f"judge {judge.name}: no key in ${judge.key_name} (set it in the environment of the worker)")
    return key


def _document_text(document: Document) -> str:
    body = html_text(document.body) if document.is_html else document.body
    return f"{document.title}\n{body}".strip() if document.title else body


def _fields(item: Item) -> dict[str, str]:
    topic = item.topic
    return {
        "title": topic.title, "description": topic.description, "narrative": topic.narrative,
        "document": _document_text(item.document), "cause": topic.cause, "effect": topic.effect,
        "objects": " vs ".join(topic.compared_objects),
    }


def reveal(*, assessor: User, topic: Topic, document: Document, judged: bool) -> list[MachineLabel]:
    """The machine labels an assessor is shown beside a document, each showing recorded: none unless the campaign
    reveals them (an explicit setting) and the assessor has saved their own complete label of the document, so the
    model never speaks first. Every later change of that assessor's label is then model-influenced (`influenced`)."""
    if not (judged and topic.campaign.reveal_machine_labels):
        return []
    newest = (MachineLabel.objects.filter(topic=topic, document=document, status=MachineLabel.Status.OK)
              .values("judge", "dimension").annotate(last=Max("id")).values("last"))
    shown = list(MachineLabel.objects.filter(id__in=newest).select_related("judge").order_by("judge__name", "dimension"))
    if shown:
        with transaction.atomic():
            MachineExposure.objects.bulk_create(
                [MachineExposure(assessor=assessor, topic=topic, document=document, label=label) for label in shown]
            )
    return shown


def influenced(campaign: Campaign) -> QuerySet[Judgment]:
    """Judgments changed after their assessor was shown a machine label of the document: model-influenced, since
    people drift toward a label they have seen."""
    shown_before = MachineExposure.objects.filter(
        assessor=OuterRef("assessor"), topic=OuterRef("topic"), document=OuterRef("document"), at__lt=OuterRef("updated_at"),
    )
    return Judgment.objects.filter(topic__campaign=campaign).filter(Exists(shown_before))
