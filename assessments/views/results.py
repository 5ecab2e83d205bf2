"""Organiser pages for a campaign's results: the leaderboard, computed from the judgments as they are now, and
qrels (exports kept as numbered snapshots, their diffs, and imports of earlier judgments).

Views parse the request, call one service and render; exports stream straight from the database cursor to
the response, so a million-line file never sits in memory.
"""

from collections.abc import Sequence
from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.formats.errors import FormatError
from assessments.formats.qrels import MERGED_COLUMNS
from assessments.metrics import image_precision
from assessments.metrics.classification import CONVENTIONS, MEASURES
from assessments.models import Campaign
from assessments.selectors.campaigns import recent_jobs
from assessments.services import classification, evaluation, exports, image_runs
from assessments.services.imports import ImportProblem
from assessments.services.imports import qrels as qrels_imports

PHASE_CHOICES = [("main", "Main phase"), ("training", "Training phase"), ("all", "Both phases")]
ORDER_CHOICES = [("score", "Score, ties by doc id (trec_eval)"), ("rank", "Rank column (Touché)")]
DIFF_LINES_SHOWN = 1000


def kind_choices(campaign: Campaign, *, measured: bool = False) -> list[tuple[str, str]]:
    """The dimensions of the campaign's label scheme, by title; `measured`: only those a measure can score."""
    scheme = campaign.label_scheme
    names = evaluation.measured_kinds(scheme) if measured else scheme.names
    return [(name, scheme.dimension(name).title) for name in names]


def _rule_choices(campaign: Campaign, user) -> list[tuple[str, str]]:
    """The aggregation rules; one assessor's labels alone only for those who may see them (access)."""
    rules = [
        ("majority", "Majority (tie: the lower label)"),
        ("max", "Maximum"),
        ("mean", "Mean, rounded (.5 up)"),
        ("adjudicated", "Adjudicated where decided, else majority"),
    ]
    if not access.allows_rule(user, campaign, "assessor:"):
        return rules
    return rules + [(f"assessor:{name}", f"Only {name}") for name in exports.assessors_of(campaign)]


def _phase_choices(campaign: Campaign, user) -> list[tuple[str, str]]:
    """The phases whose labels the user may aggregate now (access.label_phases)."""
    allowed = access.label_phases(user, campaign)
    return [(value, text) for value, text in PHASE_CHOICES if value in allowed]


TREC_EVAL_CHOICES = [(10, "trec_eval 10 (scores as doubles)"), (9, "trec_eval 9, pytrec_eval (as floats)")]
CI_CHOICES = [("", "None"), ("0.95", "95%"), ("0.9", "90%"), ("0.99", "99%")]
TEST_CHOICES = [("", "No grouping"), ("t", "Paired t-test"), ("permutation", "Randomisation test")]


class EvaluationForm(forms.Form):
    """What to score and how: the options every results page shares."""

    measure = forms.CharField(initial="nDCG@5", max_length=80, help_text="one, or several: nDCG@5,P@10,AP")
    order = forms.ChoiceField(choices=ORDER_CHOICES, initial="score")
    trec_eval = forms.TypedChoiceField(choices=TREC_EVAL_CHOICES, coerce=int, initial=10, label="Scores")
    phase = forms.ChoiceField(choices=PHASE_CHOICES, initial="main")
    rule = forms.ChoiceField(initial="majority")
    defaults: tuple[str, ...] = ("measure", "order", "trec_eval", "phase", "rule")

    def __init__(self, data, *, campaign: Campaign, user, initial: dict | None = None):
        # A link forcing a rule or phase not offered: 403.
        access.check_rule(user, campaign, (data or {}).get("rule", ""), (data or {}).get("phase") or "main")
        if data is not None:
            # Only the fields a link sets are given; the rest keep their defaults.
            data = data.copy()
            for name in self.defaults:
                data.setdefault(name, self.base_fields[name].initial)
        super().__init__(data, initial=initial)
        cast(forms.ChoiceField, self.fields["rule"]).choices = _rule_choices(campaign, user)
        cast(forms.ChoiceField, self.fields["phase"]).choices = _phase_choices(campaign, user)

    def clean_measure(self) -> str:
        try:
            return ",".join(str(evaluation.parse_measure(name)) for name in evaluation.parse_measures(self.cleaned_data["measure"]))
        except evaluation.EvaluationError as exc:
            raise forms.ValidationError(str(exc)) from None


class LeaderboardForm(EvaluationForm):
    kind = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    ci = forms.TypedChoiceField(choices=CI_CHOICES, coerce=float, empty_value=None, required=False, initial="0.95",
                                label="Intervals")
    test = forms.ChoiceField(choices=TEST_CHOICES, required=False, initial="t", label="Group with the best")
    best = forms.BooleanField(required=False, label="Best run per team")
    sort = forms.CharField(required=False)
    dir = forms.ChoiceField(choices=[("desc", "desc"), ("asc", "asc")], required=False)
    defaults = (*EvaluationForm.defaults, "ci", "test")

    def __init__(self, data, *, campaign: Campaign, user):
        kinds = kind_choices(campaign, measured=True)
        if data is not None and "kind" not in data:
            data = data.copy()
            data.setlist("kind", [value for value, _ in kinds])
        super().__init__(data, campaign=campaign, user=user, initial={"kind": [value for value, _ in kinds]})
        cast(forms.MultipleChoiceField, self.fields["kind"]).choices = kinds


def _evaluate(request: AuthenticatedHttpRequest, campaign: Campaign, *, statistics: bool = True):
    """The form and one leaderboard per measure asked (the first one's intervals and groups are shown), or the
    error that stopped them."""
    form = LeaderboardForm(request.GET, campaign=campaign, user=request.user)
    if not form.is_valid():
        return form, [], form.errors.as_text()
    options = form.cleaned_data
    try:
        boards = evaluation.evaluate_measures(
            campaign=campaign, measures=options["measure"].split(","), kinds=tuple(options["kind"]), order=options["order"],
            trec_eval=options["trec_eval"], phase=options["phase"], rule=options["rule"],
            ci=options["ci"] if statistics else None, test=(options["test"] or None) if statistics else None,
        )
    except exports.ExportError as exc:
        return form, [], str(exc)
    return form, boards, ""


FEW_DRAWN = 10  # below this, a bootstrap has too few topics (or items) to draw from: its interval is said to be rough


def _ci_bar(low: float, high: float, mean: float, drawn: int, unit: str = "topic") -> dict:
    """Where an interval's bar and mean tick sit on a 0–1 scale (every measure here lies in it), in percent, its
    bounds as text, and a caveat when it rests on few topics (or items: `unit`)."""
    def percent(value: float) -> float:
        return round(100 * min(1.0, max(0.0, value)), 1)

    few = f"only {drawn} {unit}{'s' if drawn != 1 else ''}: a rough interval" if drawn < FEW_DRAWN else ""
    return {"left": percent(low), "width": max(0.5, percent(high) - percent(low)), "mean": percent(mean),
            "text": f"[{low:.4f}, {high:.4f}]", "few": few}


def _table(
    board: evaluation.Leaderboard, results: list, sort: str, descending: bool, others: Sequence[evaluation.Leaderboard] = ()
) -> tuple[list[dict], list[list[dict]]]:
    """Header cells (what each sorts by, the direction a click asks for next) and the body's cells. The first
    measure's board orders the table and gives the intervals and groups; `others` (more measures) add their means."""
    level = board.statistics.ci_level
    columns = [("team", "Team", False), ("run", "Run", False)]
    for kind in board.kinds:
        columns.append((kind, f"{kind.capitalize()} {board.measure}", True))
        if level:
            columns.append(("", f"{level:.0%} interval", False))
        columns.append((f"{kind}_judged", f"judged@{board.judged_depth}", True))
        columns += [("", f"{kind.capitalize()} {other.measure}", True) for other in others]
    scores_of = [{result.run_id: result.scores for result in other.results} for other in others]
    if board.stance_kind:
        name = board.stance_kind.capitalize()
        columns += [("accuracy", f"{name} accuracy", True), ("macro_f1", f"{name} macro-F1", True)]
    header = []
    for key, label, numeric in columns:
        active = key == sort
        header.append({
            "key": key, "label": label, "numeric": numeric,
            "aria_sort": ("descending" if descending else "ascending") if active else "none",
            "next_dir": ("asc" if descending else "desc") if active else ("desc" if numeric else "asc"),
        })
    rows = []
    for result in results:
        cells = [{"text": result.team or "—"}, {"text": result.tag, "mono": True}]
        for kind in board.kinds:
            if not board.judged(kind):
                cells.append({"text": "no judgments", "title": f"no {board.describe_judgments(kind)}", "muted": True})
                if level:
                    cells.append({"text": "–"})
                cells.append({"text": "–", "numeric": True})
                cells += [{"text": "–", "numeric": True} for _ in others]
                continue
            scores = result.scores[kind]
            note = result.other_version.get(kind)
            cells.append({
                "text": f"{scores.mean:.4f}", "numeric": True, "title": note.reason if note else f"{len(scores.per_topic)} topics",
                "version_note": bool(note), "top_group": result.run_id in board.top_group.get(kind, ()),
            })
            if level:
                interval = result.ci.get(kind)
                bar = _ci_bar(interval[0], interval[1], scores.mean, len(scores.per_topic)) if interval else None
                cells.append({"bar": bar, "text": "" if interval else "–"})
            # Below 1 the pool has holes: unjudged documents in this run's top k count as non-relevant.
            cells.append({"text": f"{scores.judged_at_k:.3f}", "numeric": True, "warn": scores.judged_at_k < 1})
            for other, scored in zip(others, scores_of):
                mean = scored[result.run_id][kind].mean
                cells.append({"text": f"{mean:.4f}", "numeric": True, "title": f"{other.measure}, judged@{other.judged_depth} "
                              f"{scored[result.run_id][kind].judged_at_k:.3f}"})
        if board.stance_kind:
            stance = result.stance
            for value in (stance and stance.accuracy, stance and stance.macro_f1):
                cells.append({
                    "text": "–" if value is None else f"{value:.4f}", "numeric": True,
                    "title": f"{stance.n} documents with a {board.stance_kind} judgment" if stance else "no stance column",
                })
        rows.append(cells)
    return header, rows


class ClassificationForm(forms.Form):
    """What a classification campaign's leaderboard shows (Touché 2023 Task 4): the measure it is sorted by (and
    shown per language), the scorer's convention, whose labels decide."""

    measure = forms.ChoiceField(choices=[(name, name) for name in MEASURES], initial=classification.DEFAULT_MEASURE)
    by = forms.ChoiceField(choices=[("language", "Overall and per language"), ("", "Overall only")], required=False,
                           initial="language", label="Figures")
    convention = forms.ChoiceField(choices=[(name, f"{name}: {text}") for name, text in CONVENTIONS.items()], initial="touche")
    phase = forms.ChoiceField(choices=PHASE_CHOICES, initial="main")
    rule = forms.ChoiceField(initial=classification.DEFAULT_RULE)
    ci = forms.TypedChoiceField(choices=CI_CHOICES, coerce=float, empty_value=None, required=False, initial="", label="Intervals")
    test = forms.ChoiceField(choices=[("", "No grouping"), ("permutation", "Randomisation test")], required=False,
                             initial="", label="Group with the best")
    defaults = ("measure", "by", "convention", "phase", "rule", "ci", "test")

    def __init__(self, data, *, campaign: Campaign, user):
        access.check_rule(user, campaign, (data or {}).get("rule", ""), (data or {}).get("phase") or "main")
        data = data.copy()
        for name in self.defaults:
            data.setdefault(name, self.base_fields[name].initial)
        super().__init__(data)
        cast(forms.ChoiceField, self.fields["phase"]).choices = _phase_choices(campaign, user)
        # max and mean mean nothing for classes; a tie goes to the label first in the scheme
        names = {"majority": "Majority (tie: the label first in the scheme)"}
        choices = [(rule, names.get(rule, text)) for rule, text in _rule_choices(campaign, user) if rule not in ("max", "mean")]
        cast(forms.ChoiceField, self.fields["rule"]).choices = sorted(choices, key=lambda c: c[0] != classification.DEFAULT_RULE)


def _classification_leaderboard(request: AuthenticatedHttpRequest, campaign: Campaign) -> HttpResponse:
    form = ClassificationForm(request.GET, campaign=campaign, user=request.user)
    context: dict = {"campaign": campaign, "form": form, "classification": True, "error": ""}
    if not form.is_valid():
        context["error"] = form.errors.as_text()
    else:
        options = form.cleaned_data
        try:
            board = classification.score_submissions(
                campaign, measure=(options["measure"], *(name for name in MEASURES if name != options["measure"])),
                by=options["by"] or None, convention=options["convention"],
                phase=options["phase"], rule=options["rule"], ci=options["ci"], test=options["test"] or None,
            )
        except exports.ExportError as exc:
            context["error"] = str(exc)
        else:
            context.update(board=board, **_classification_table(board))
    template = "assessments/results_table.html" if request.htmx else "assessments/results.html"
    return render(request, template, context, status=400 if context["error"] and not request.htmx else 200)


def _classification_table(board: classification.ClassificationBoard) -> dict:
    """The header and body cells (the shape `_table` gives the ranking table): every measure overall, the chosen
    one first (with its interval), then the chosen one per language."""
    measures = board.measures
    level = board.statistics.ci_level

    def figure(value: float | None, **cell) -> dict:
        return {"text": "–" if value is None else f"{value:.4f}", "numeric": True, **cell}

    labels = ["Team", "Run", f"{board.measure} (all)", *([f"{level:.0%} interval"] if level else []),
              *measures[1:], *(f"{board.measure} ({language})" for language in (board.languages if board.by else ()))]
    header = [{"key": "", "label": label} for label in labels]
    rows = []
    for result in board.results:
        cells: list[dict] = [{"text": result.team or "—"}, {"text": result.tag, "mono": True}]
        if not result.scored:
            missing = f"no prediction for {len(result.missing)} comments with a decided label"
            rows.append(cells + [{"text": "not scored", "title": missing, "muted": True}] + [{"text": "–"}] * (len(labels) - 3))
            continue
        value = result.value(board.measure)
        cells.append(figure(value, top_group=result.run_id in board.top_group))
        if level:
            low, high = result.ci[board.measure]
            cells.append({"bar": _ci_bar(low, high, value or 0.0, board.items, "comment")})
        cells += [figure(result.value(name)) for name in measures[1:]]
        for language in board.languages if board.by else ():
            cells.append(figure(result.value(board.measure, language), title=f"{board.languages[language]} comments in {language}"))
        rows.append(cells)
    return {"columns": header, "rows": rows}


@login_required
def leaderboard(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    if campaign.is_classification:  # submissions of labels, scored as the lab's evaluation.py scores them
        return _classification_leaderboard(request, campaign)
    if campaign.is_images:  # Task 3: the three precision@10 measures, as the lab's submission-evaluator.sh
        return _image_leaderboard(request, campaign)
    form, boards, error = _evaluate(request, campaign)
    board = boards[0] if boards else None
    context = {"campaign": campaign, "form": form, "board": board, "error": error}
    if board:
        sort = form.cleaned_data["sort"] or board.kinds[0]
        descending = (form.cleaned_data["dir"] or "desc") == "desc"
        try:
            results = board.sorted_by(sort, descending=descending)
        except evaluation.EvaluationError:  # a stale link's column: fall back to the default order
            sort, descending, results = board.kinds[0], True, board.results
        if form.cleaned_data["best"]:
            kept = {result.run_id for result in board.best_per_team()}
            results = [result for result in results if result.run_id in kept]
        context["columns"], context["rows"] = _table(board, results, sort, descending, boards[1:])
        context["notes"] = [
            {"run": result.tag, "kind": kind, "reason": note.reason}
            for result in results for kind, note in result.other_version.items()
        ]
    template = "assessments/results_table.html" if request.htmx else "assessments/results.html"
    return render(request, template, context, status=400 if error and not request.htmx else 200)


class ImageResultsForm(forms.Form):
    """What an image campaign's leaderboard shows (Touché Task 3): the measure it is sorted by, grouped and given
    intervals for, and whose answers decide."""

    measure = forms.ChoiceField(choices=[(name, name) for name in image_precision.MEASURES], initial=image_precision.MEASURES[0],
                                label="Sorted by")
    phase = forms.ChoiceField(choices=PHASE_CHOICES, initial="main")
    rule = forms.ChoiceField(initial="majority")
    ci = LeaderboardForm.base_fields["ci"]
    test = LeaderboardForm.base_fields["test"]
    defaults = ("measure", "phase", "rule", "ci", "test")

    def __init__(self, data, *, campaign: Campaign, user):
        access.check_rule(user, campaign, (data or {}).get("rule", ""), (data or {}).get("phase") or "main")
        data = data.copy()
        for name in self.defaults:  # only the fields a link sets are given; the rest keep their defaults
            data.setdefault(name, self.base_fields[name].initial)
        super().__init__(data)
        cast(forms.ChoiceField, self.fields["rule"]).choices = _rule_choices(campaign, user)
        cast(forms.ChoiceField, self.fields["phase"]).choices = _phase_choices(campaign, user)


def _image_leaderboard(request: AuthenticatedHttpRequest, campaign: Campaign) -> HttpResponse:
    form = ImageResultsForm(request.GET, campaign=campaign, user=request.user)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain; charset=utf-8")
    options = form.cleaned_data
    measure = options["measure"]
    statistics = evaluation.Statistics(ci_level=options["ci"], test=options["test"] or None)
    results = image_runs.evaluate_image_runs(campaign, rule=options["rule"], phase=options["phase"], statistics=statistics)
    measures = (measure, *(name for name in image_precision.MEASURES if name != measure))
    results.sort(key=lambda r: (-r.report.measures()[measure], r.tag))
    rows = []
    for r in results:
        mean = r.report.measures()[measure]
        interval = r.ci.get(measure)
        rows.append({
            "tag": r.tag, "team": r.team, "topics": len(r.report.topics), "top_group": measure in r.top_group,
            "overall": [r.report.measures()[m] for m in measures],
            "bar": _ci_bar(interval[0], interval[1], mean, len(r.report.topics)) if interval else None,
            "stances": [r.report.overall_for(stance).precision()[m] for stance in ("PRO", "CON") for m in measures],
        })
    return render(request, "assessments/image_results.html", {
        "campaign": campaign, "form": form, "rows": rows, "measures": measures, "statistics": statistics,
        "interval_label": f"{statistics.ci_level:.0%} interval" if statistics.ci_level else "",
    })


@login_required
def leaderboard_csv(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    if campaign.is_classification:
        return _classification_csv(request, campaign)
    _, boards, error = _evaluate(request, campaign, statistics=False)
    if error:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    board = boards[0]
    measures = "+".join(b.measure for b in boards)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="{campaign.slug}-{measures}-{board.order}-trec_eval{board.trec_eval}-per-topic.csv"'
    )
    evaluation.write_per_topic_csv(boards, response)
    return response


def _classification_csv(request: AuthenticatedHttpRequest, campaign: Campaign) -> HttpResponse:
    """Every measure overall and per language, one row each (`evaluate_runs --format csv`)."""
    form = ClassificationForm(request.GET, campaign=campaign, user=request.user)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain; charset=utf-8")
    options = form.cleaned_data
    try:
        board = classification.score_submissions(
            campaign, measure=MEASURES, by="language", convention=options["convention"], phase=options["phase"],
            rule=options["rule"],
        )
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-{board.convention}-per-language.csv"'
    board.write_csv(response)
    return response


class ExportForm(forms.Form):
    kind = forms.ChoiceField()
    phase = forms.ChoiceField(choices=PHASE_CHOICES, initial="main")
    rule = forms.ChoiceField(initial="majority")

    def __init__(self, data=None, *, campaign: Campaign, user):
        # A post forcing a rule or phase not offered: 403.
        access.check_rule(user, campaign, (data or {}).get("rule", ""), (data or {}).get("phase") or "main")
        super().__init__(data)
        cast(forms.ChoiceField, self.fields["kind"]).choices = kind_choices(campaign)
        cast(forms.ChoiceField, self.fields["rule"]).choices = _rule_choices(campaign, user)
        cast(forms.ChoiceField, self.fields["phase"]).choices = _phase_choices(campaign, user)


class ImportForm(forms.Form):
    file = forms.FileField(help_text=f"topic 0 doc label, or the five-column topic doc {' '.join(MERGED_COLUMNS)} 0; plain or gzip")
    kind = forms.ChoiceField()
    assessor = forms.CharField(max_length=150, help_text="the import source the labels are kept under, e.g. touche2020 (made if missing; never a person's account)")
    phase = forms.ChoiceField(choices=PHASE_CHOICES[:2], initial="main")

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["kind"]).choices = kind_choices(campaign)


def _qrels_page(request: AuthenticatedHttpRequest, campaign: Campaign, *, import_form: ImportForm | None = None, status: int = 200):
    context = {
        "campaign": campaign,
        "jobs": recent_jobs(campaign, kinds=["import_qrels"]),
        "snapshots": access.snapshots_for_user(request.user, campaign),
        "export_form": ExportForm(campaign=campaign, user=request.user),
        "import_form": import_form or ImportForm(campaign=campaign),
    }
    return render(request, "assessments/qrels.html", context, status=status)


@login_required
def qrels(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    return _qrels_page(request, access.get_campaign_for_organiser(request.user, slug))


@require_POST
@login_required
def qrels_export(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = ExportForm(request.POST, campaign=campaign, user=request.user)
    if not form.is_valid():
        messages.error(request, f"Export not made: {form.errors.as_text()}")
        return redirect("assessments:qrels", slug=campaign.slug)
    try:
        empty = exports.nothing_to_export(campaign=campaign, **form.cleaned_data)
        if empty:  # a download of an empty file, kept as a numbered snapshot, would read like a result
            messages.warning(request, f"Export not made: {empty}")
            return redirect("assessments:qrels", slug=campaign.slug)
        export = exports.export_qrels(campaign=campaign, created_by=request.user, **form.cleaned_data)
    except exports.ExportError as exc:
        messages.error(request, f"Export not made: {exc}")
        return redirect("assessments:qrels", slug=campaign.slug)
    return streaming_qrels_response(export)


def streaming_qrels_response(export: exports.QrelsExport) -> StreamingHttpResponse:
    """The export as a download; its snapshot is stored when the last byte has been sent."""
    response = StreamingHttpResponse(export, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export.download_name}"'
    return response


@login_required
def qrels_snapshot(request: AuthenticatedHttpRequest, slug: str, number: int) -> HttpResponse | StreamingHttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    snapshot = access.get_snapshot_for_user(request.user, campaign, number)
    try:
        content = exports.snapshot_content(snapshot)
    except exports.ExportError as exc:
        messages.error(request, f"Download refused: {exc}.")
        return _qrels_page(request, campaign, status=409)
    response = StreamingHttpResponse(content, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{snapshot.file_name}"'
    return response


@login_required
def qrels_diff(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    numbers = [request.GET.get(name, "") for name in ("older", "newer")]
    if not all(number.isdigit() for number in numbers):
        raise Http404("Choose two snapshots")
    found = {s.number: s for s in access.snapshots_for_user(request.user, campaign).filter(number__in=numbers)}
    if len(found) != len(set(numbers)):
        raise Http404("No such snapshot")
    context = {"campaign": campaign, "shown": DIFF_LINES_SHOWN}
    try:
        context["diff"] = diff = exports.diff_snapshots(older=found[int(numbers[0])], newer=found[int(numbers[1])],
                                                        named_phases=access.named_label_phases(request.user, campaign))
        # The lines' labels, written as every page writes them (a stance by its name in the scheme).
        scheme = campaign.label_scheme
        context["dimension"] = scheme.dimension(diff.newer.kind) if scheme.has(diff.newer.kind) else None
    except (exports.ExportError, FormatError) as exc:
        context["error"] = str(exc)
    return render(request, "assessments/qrels_diff.html", context, status=400 if "error" in context else 200)


@require_POST
@login_required
def qrels_import_upload(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    form = ImportForm(request.POST, request.FILES, campaign=campaign)
    if form.is_valid():
        try:
            job = qrels_imports.start_qrels_import(campaign=campaign, upload=form.cleaned_data["file"], created_by=request.user,
                                                  kind=form.cleaned_data["kind"], assessor=form.cleaned_data["assessor"],
                                                  phase=form.cleaned_data["phase"])
        except ImportProblem as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Import of {form.cleaned_data['file'].name} queued (job {job.pk}).")
            return redirect("assessments:qrels", slug=campaign.slug)
    return _qrels_page(request, campaign, import_form=form, status=400)


urlpatterns = [
    path("<slug:slug>/results/", leaderboard, name="leaderboard"),
    path("<slug:slug>/results/per-topic.csv", leaderboard_csv, name="leaderboard_csv"),
    path("<slug:slug>/qrels/", qrels, name="qrels"),
    path("<slug:slug>/qrels/export/", qrels_export, name="qrels_export"),
    path("<slug:slug>/qrels/import/", qrels_import_upload, name="qrels_import"),
    path("<slug:slug>/qrels/diff/", qrels_diff, name="qrels_diff"),
    path("<slug:slug>/qrels/<int:number>/", qrels_snapshot, name="qrels_snapshot"),
]
