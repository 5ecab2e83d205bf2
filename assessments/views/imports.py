"""The organiser's imports page: upload topics, documents and runs, and watch each import's job.

Uploads go through `services.imports.uploads.start_import` (the API's service too), which keeps the files and
queues a Job; the page shows the job's live progress by polling the reusable `_job_status.html` partial, which
also cancels and retries jobs of every kind (imports, pool builds, qrels imports) here.
"""

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from assessments import access
from assessments.models import Campaign, Job, Kind
from assessments.selectors.campaigns import document_counts, recent_jobs
from assessments.services import job_queue
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import DOCUMENT_FORMATS
from assessments.services.imports.uploads import IMPORT_KINDS, start_import


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more files under one name (Django's documented pattern for `<input type=file multiple>`)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None) -> list:
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(file, initial) for file in files]


class TopicsForm(forms.Form):
    kind = "import_topics"
    file = forms.FileField(label="Topics file", help_text="Touché topics XML (any year's shape) or number<TAB>title lines, plain or gzip")

    # Changes to judged topics are confirmed on the refused job (job_change "confirm"), which runs again on its
    # own file: a new upload could change other topics than the ones listed.
    def uploads(self) -> list:
        return [self.cleaned_data["file"]]

    def options(self) -> dict:
        return {}


class DocumentsForm(forms.Form):
    kind = "import_documents"
    # The form metaclass takes declared fields off the class: this does not replace BaseForm.files (the stubs' view).
    files = MultipleFileField(label="Collection files", help_text="args.me JSON, passage JSONL or generic JSONL; .gz too")  # type: ignore[assignment]
    format = forms.ChoiceField(choices=[(f, f) for f in DOCUMENT_FORMATS], initial="auto")
    only_pooled = forms.BooleanField(required=False, label="Only documents a pool needs")

    def uploads(self) -> list:
        return self.cleaned_data["files"]

    def options(self) -> dict:
        return {"format": self.cleaned_data["format"], "only_pooled": self.cleaned_data["only_pooled"]}


class RunsForm(forms.Form):
    kind = "import_runs"
    # The form metaclass takes declared fields off the class: this does not replace BaseForm.files (the stubs' view).
    files = MultipleFileField(label="Run files", help_text="TREC runs; a tag uploaded again replaces its run")  # type: ignore[assignment]
    team = forms.CharField(required=False, max_length=200, help_text="default: TEAM from files named TEAM-TAG.txt")

    def uploads(self) -> list:
        return self.cleaned_data["files"]

    def options(self) -> dict:
        return {"team": self.cleaned_data["team"]}


class ItemsForm(forms.Form):
    kind = "import_items"
    comments = forms.FileField(label="Comments file", help_text="TAB-separated with a header (id id_prop … comment … lan … label), as the lab's CoFE files")
    proposals = forms.FileField(required=False, label="Proposals file", help_text="optional: id title proposal proposal_en title_en … lan")
    assessor = forms.CharField(
        required=False, max_length=150, label="Source of the labels in the file",
        help_text="a name no person's account has (e.g. cofe-test); needed when the file has labels other than ---",
    )

    def uploads(self) -> list:
        return [self.cleaned_data["comments"], *([self.cleaned_data["proposals"]] if self.cleaned_data["proposals"] else [])]

    def options(self) -> dict:
        return {"assessor": self.cleaned_data["assessor"]}


class ImagesForm(forms.Form):
    kind = "import_images"
    file = forms.FileField(
        label="Image collection (.zip)",
        help_text="the lab's layout: images/I<2 hex>/I<16 hex>/{image.webp, image-url.txt, image-phash.txt, pages/…}",
    )
    only_pooled = forms.BooleanField(required=False, label="Only images a pool needs")

    def uploads(self) -> list:
        return [self.cleaned_data["file"]]

    def options(self) -> dict:
        return {"only_pooled": self.cleaned_data["only_pooled"]}


FORMS: dict[str, type[TopicsForm | DocumentsForm | RunsForm | ItemsForm | ImagesForm]] = {
    "topics": TopicsForm, "documents": DocumentsForm, "runs": RunsForm, "items": ItemsForm, "images": ImagesForm,
}
# A classification campaign's items are comments beside their proposals, imported together; its runs are
# submissions of labels. An image campaign's collection is a zip of images. A ranking campaign has neither.
_SHOWN: dict[str, tuple[str, ...]] = {
    Kind.CLASSIFICATION: ("items", "runs"), Kind.IMAGES: ("topics", "images", "runs"),
    Kind.RANKING: ("topics", "documents", "runs"),
}
# The import jobs the page lists: an image import queues its thumbnails as a job of their own.
_JOBS = (*IMPORT_KINDS, "make_thumbnails")


def _form(what: str, campaign: Campaign) -> forms.Form:
    form = FORMS[what](prefix=what)
    if what == "runs" and campaign.is_classification:
        form.fields["files"].label = "Submission files"
        form.fields["files"].help_text = "comment_id<TAB>label lines, no header; the file's name is its tag, which a later file may not reuse"
        form.fields["team"].help_text = "the team that submitted them (optional)"
    elif what == "runs" and campaign.is_images:
        form.fields["files"].label = "Image run files"
        form.fields["files"].help_text = "topic PRO|CON imageId rank score tag lines; a tag uploaded again replaces its run"
    return form


@login_required
def imports_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    return render(request, "assessments/imports.html", {
        "campaign": campaign,
        # Pairs, not a dict: a template reads forms.items as the "items" form before the method.
        "forms": [(what, _form(what, campaign)) for what in _SHOWN[campaign.kind]],
        "topics": campaign.topics.order_by("position", "number"),
        "runs": campaign.runs.select_related("uploaded_by").order_by("tag"),
        "documents": document_counts(campaign),
        "jobs": recent_jobs(campaign, kinds=_JOBS),
    })


@require_POST
@login_required
def upload(request: AuthenticatedHttpRequest, slug: str, what: str) -> HttpResponse:
    campaign = access.get_campaign_for_organiser(request.user, slug)
    if what not in FORMS:
        raise Http404("No such import")
    form = FORMS[what](request.POST, request.FILES, prefix=what)
    if form.is_valid():
        try:
            job = start_import(
                kind=form.kind, campaign=campaign, uploads=form.uploads(), options=form.options(), created_by=request.user
            )
        except ImportProblem as exc:
            form.add_error(None, str(exc))
        else:
            if request.htmx:
                return _job_block(request, campaign, job)
            messages.success(request, f"Import of {what} started.")
            return redirect(f"{reverse('assessments:imports', args=[slug])}#job-{job.pk}")
    problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    if request.htmx:
        # htmx swaps only 2xx answers; the refusal is shown where the job would have appeared.
        return render(request, "assessments/_job_status.html", {"campaign": campaign, "refused": problems})
    messages.error(request, f"The {what} were not imported: {problems}")
    return redirect("assessments:imports", slug)


@login_required
def job_status(request: AuthenticatedHttpRequest, slug: str, job_id: int) -> HttpResponse:
    """One job's progress, polled every second by the page while it runs (the partial stops the polling)."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    return _job_block(request, campaign, access.get_job_for_organiser(request.user, job_id, campaign=campaign))


def _job_block(request: AuthenticatedHttpRequest, campaign: Campaign, job: Job) -> HttpResponse:
    """The job's block; an htmx answer that finds it ended tells the page (`job-finished`), whose figures and
    tables then load again."""
    response = render(request, "assessments/_job_status.html", {"campaign": campaign, "job": job})
    if request.htmx and not job.is_unfinished:
        response["HX-Trigger"] = "job-finished"
    return response


# What Cancel, Retry and Confirm do, and where the job is shown when the page is posted without htmx.
JOB_CHANGES: dict[str, Callable[..., Job]] = {"cancel": job_queue.cancel_job, "retry": job_queue.retry_job, "confirm": job_queue.confirm_job}
PAGE_OF_KIND = {"build_pool": "assessments:pool", "import_qrels": "assessments:qrels", "machine_judge": "assessments:machine_judges"}


@require_POST
@login_required
def job_change(request: AuthenticatedHttpRequest, slug: str, job_id: int, change: str) -> HttpResponse:
    """Cancel a queued or running job, retry a failed one, or confirm what a refused one listed (the service says
    when it cannot)."""
    campaign = access.get_campaign_for_organiser(request.user, slug)
    job = access.get_job_for_organiser(request.user, job_id, campaign=campaign)
    # A confirmation names the list of changes it was shown (its digest), so it cannot apply a newer one unseen.
    shown = {"digest": request.POST.get("digest", "")} if change == "confirm" else {}
    try:
        job = JOB_CHANGES[change](job=job, by=request.user, **shown)
    except job_queue.JobStateError as exc:
        if not request.htmx:  # the block htmx swaps in shows the job as it now is, which says why
            messages.error(request, str(exc))
        job = Job.objects.get(pk=job.pk)
    if request.htmx:
        return render(request, "assessments/_job_status.html", {"campaign": campaign, "job": job})
    return redirect(f"{reverse(PAGE_OF_KIND.get(job.kind, 'assessments:imports'), args=[slug])}#job-{job.pk}")


urlpatterns = [
    path("<slug:slug>/import/", imports_page, name="imports"),
    path("<slug:slug>/import/<str:what>/", upload, name="import_upload"),
    path("<slug:slug>/jobs/<int:job_id>/", job_status, name="job"),
    path("<slug:slug>/jobs/<int:job_id>/cancel/", job_change, {"change": "cancel"}, name="job_cancel"),
    path("<slug:slug>/jobs/<int:job_id>/retry/", job_change, {"change": "retry"}, name="job_retry"),
    path("<slug:slug>/jobs/<int:job_id>/confirm/", job_change, {"change": "confirm"}, name="job_confirm"),
]
