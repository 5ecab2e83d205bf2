"""Imports in the API, for organisers' scripts: the same service as the imports page and the commands.

* ``GET  campaigns/<slug>/topics/``: the campaign's topics; ``POST`` a topics file (multipart ``file``) → 202 and the job.
* ``GET  campaigns/<slug>/runs/``: the campaign's runs; ``POST`` one or more run files (``file`` repeated, ``team``) → 202.
* ``GET  campaigns/<slug>/documents/``: document counts; ``POST`` collection files (``file``, ``format``, ``only_pooled``) → 202.
* ``GET  campaigns/<slug>/images/``: an image campaign's image counts; ``POST`` the collection as one zip (``file``,
  ``only_pooled``) → 202; its thumbnails follow as a job of their own.
* ``GET  jobs/<id>/``: a job's progress (done/total), and once finished its summary, warnings or errors.
* ``POST jobs/<id>/cancel/``: cancel a queued job, or stop a running one at its next step (nothing is stored).
* ``POST jobs/<id>/retry/``: queue a failed job again (202), with the files it was given.
* ``POST jobs/<id>/confirm/``: run a job refused until someone decides (``result.confirm``, e.g. changes to judged
  topics) again on its own files, applying exactly what it listed (202); it is refused again if that changed. The
  body names the list read (``{"digest": result.digest}``): 409, and nothing runs, if the job lists others now.

Uploads are answered at once with the queued job; poll it until its status is ``succeeded``, ``failed`` or
``cancelled`` (every job ends: one whose worker is lost is failed within a minute or two, saying so). When the
job queue is down an upload is answered 503 with Retry-After, and nothing of it is kept.
"""

from collections.abc import Callable

from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from accounts.models import User
from accounts.tokens import TokenAuthentication
from assessments import access
from assessments.models import Job, Run, Topic
from assessments.selectors.campaigns import document_counts
from assessments.services import job_queue
from assessments.services.imports import ImportProblem
from assessments.services.imports.documents import DOCUMENT_FORMATS
from assessments.services.imports.uploads import start_import

from .permissions import IsOrganiser
from .serializers import ErrorSerializer, JobSerializer, UploadField


class TopicSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["number", "title", "description", "narrative", "compared_objects", "cause", "effect", "is_training", "position"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    uploaded_by: "serializers.SlugRelatedField[User]" = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Run
        fields = ["tag", "team", "file_name", "has_stance", "line_count", "warnings", "uploaded_by", "uploaded_at"]
        read_only_fields = fields


class DocumentCountsSerializer(serializers.Serializer):
    collection = serializers.CharField()
    total = serializers.IntegerField(help_text="documents in the campaign's collection")
    with_text = serializers.IntegerField(help_text="of which have text (the others are stubs a pool created)")
    pooled = serializers.IntegerField(help_text="documents in the campaign's pools")
    pooled_with_text = serializers.IntegerField()


class TopicUploadSerializer(serializers.Serializer):
    file = UploadField(help_text="Touché topics XML or number<TAB>title lines, plain or gzip")
    allow_changes = serializers.BooleanField(
        default=False, help_text="apply whatever changes the file makes to topics that have judgments; without it such a "
        "job fails listing them, and POST jobs/<id>/confirm/ applies exactly those"
    )


class DocumentUploadSerializer(serializers.Serializer):
    file = serializers.ListField(child=UploadField(), min_length=1, help_text="one or more collection files (.gz too)")
    format = serializers.ChoiceField(choices=DOCUMENT_FORMATS, default="auto")
    only_pooled = serializers.BooleanField(default=False, help_text="keep only documents some pool needs")


class RunUploadSerializer(serializers.Serializer):
    file = serializers.ListField(child=UploadField(), min_length=1, help_text="one or more TREC run files")
    team = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")


class ItemUploadSerializer(serializers.Serializer):
    comments = UploadField(help_text="the comments file: TAB-separated with a header (id id_prop … comment … lan … label)")
    proposals = UploadField(required=False, help_text="the proposals file: id title proposal proposal_en title_en … lan")
    assessor = serializers.CharField(
        required=False, allow_blank=True, max_length=150, default="",
        help_text="the import source the file's labels are kept under (never a person's account); needed when it has labels",
    )


class ImageUploadSerializer(serializers.Serializer):
    file = UploadField(help_text="the collection as one zip, in the lab's layout (images/I<2 hex>/I<16 hex>/…)")
    only_pooled = serializers.BooleanField(default=False, help_text="keep only images some pool needs")


class _ImportView(generics.GenericAPIView):
    """POST uploads files for one kind of import and answers 202 with the queued job."""

    # Token first, so an anonymous client is told 401 with how to authenticate (session auth alone gives 403).
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsOrganiser]
    parser_classes = [MultiPartParser]
    kind = ""
    upload_serializer: type[serializers.Serializer]

    def campaign(self):
        return access.get_campaign_for_organiser(self.request.user, self.kwargs["slug"])

    def post(self, request, slug: str):
        campaign = self.campaign()
        upload = self.upload_serializer(data=request.data)
        upload.is_valid(raise_exception=True)
        options = dict(upload.validated_data)
        files = options.pop("file") if "file" in options else [options.pop("comments"), *filter(None, [options.pop("proposals", None)])]
        try:
            job = start_import(
                kind=self.kind, campaign=campaign, uploads=files if isinstance(files, list) else [files],
                options=options, created_by=request.user,
            )
        except ImportProblem as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


@extend_schema_view(
    get=extend_schema(summary="The campaign's topics, in file order"),
    post=extend_schema(
        request={"multipart/form-data": TopicUploadSerializer}, responses={202: JobSerializer},
        summary="Import topics (created or updated by number; none deleted); runs as a job",
    ),
)
class TopicsView(generics.ListAPIView, _ImportView):
    serializer_class = TopicSerializer
    kind = "import_topics"
    upload_serializer = TopicUploadSerializer

    def get_queryset(self):
        return self.campaign().topics.order_by("position", "number")


@extend_schema_view(
    get=extend_schema(summary="The campaign's runs"),
    post=extend_schema(
        request={"multipart/form-data": RunUploadSerializer}, responses={202: JobSerializer},
        summary="Import TREC runs (a tag imported again replaces its run); runs as a job",
    ),
)
class RunsView(generics.ListAPIView, _ImportView):
    serializer_class = RunSerializer
    kind = "import_runs"
    upload_serializer = RunUploadSerializer

    def get_queryset(self):
        return self.campaign().runs.select_related("uploaded_by").order_by("tag")


@extend_schema_view(
    post=extend_schema(
        request={"multipart/form-data": DocumentUploadSerializer}, responses={202: JobSerializer},
        summary="Import documents (inserted or updated by id); runs as a job",
    ),
)
class DocumentsView(_ImportView):
    serializer_class = DocumentCountsSerializer
    kind = "import_documents"
    upload_serializer: type[serializers.Serializer] = DocumentUploadSerializer

    @extend_schema(summary="How many documents the collection and the pools have")
    def get(self, request, slug: str):
        campaign = self.campaign()
        return Response(DocumentCountsSerializer({"collection": campaign.collection.slug, **document_counts(campaign)}).data)


@extend_schema_view(
    post=extend_schema(
        request={"multipart/form-data": ImageUploadSerializer}, responses={202: JobSerializer},
        summary="Import an image campaign's collection (a zip; each image checked by its bytes, all or nothing); "
        "runs as a job, and its thumbnails as another",
    ),
)
class ImagesView(DocumentsView):
    kind = "import_images"
    upload_serializer = ImageUploadSerializer


@extend_schema_view(
    post=extend_schema(
        request={"multipart/form-data": ItemUploadSerializer}, responses={202: JobSerializer},
        summary="Import a classification campaign's items (comments, and their proposals); runs as a job",
    ),
)
class ItemsView(_ImportView):
    kind = "import_items"
    upload_serializer = ItemUploadSerializer


@extend_schema_view(get=extend_schema(summary="A job's progress, and once finished its summary, warnings or errors"))
class JobView(generics.RetrieveAPIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsOrganiser]
    serializer_class = JobSerializer

    def get_object(self):
        return access.get_job_for_organiser(self.request.user, self.kwargs["job_id"])


class _JobChangeView(generics.GenericAPIView):
    """POST changes a job through its service and answers with the job; 409 when its state does not allow it."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsOrganiser]
    serializer_class = JobSerializer
    change: Callable[..., Job]  # the service, keyword arguments job and by (and those of `body`)
    body: type[serializers.Serializer] | None = None
    answer: int = status.HTTP_200_OK

    def post(self, request, job_id: int):
        job = access.get_job_for_organiser(request.user, job_id)
        arguments = {}
        if self.body is not None:
            params = self.body(data=request.data)
            params.is_valid(raise_exception=True)
            arguments = params.validated_data
        try:
            job = self.change(job=job, by=request.user, **arguments)
        except job_queue.JobStateError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(JobSerializer(job).data, status=self.answer)


@extend_schema_view(post=extend_schema(
    request=None, responses={200: JobSerializer, 409: ErrorSerializer},
    examples=[OpenApiExample("Already ended", value={"detail": "job 12 has already ended (succeeded)"}, response_only=True,
                             status_codes=["409"])],
    summary="Cancel a queued job, or stop a running one at its next step (nothing of it is stored); 409 once it ended",
))
class JobCancelView(_JobChangeView):
    change = staticmethod(job_queue.cancel_job)


@extend_schema_view(post=extend_schema(
    request=None, responses={202: JobSerializer, 409: ErrorSerializer},
    examples=[OpenApiExample("Not failed", value={"detail": "job 12 has not failed (succeeded); only a failed job is retried"},
                             response_only=True, status_codes=["409"])],
    summary="Queue a failed job again with the files it was given; 409 when it has not failed or its files are gone",
))
class JobRetryView(_JobChangeView):
    change = staticmethod(job_queue.retry_job)
    answer = status.HTTP_202_ACCEPTED


class ConfirmSerializer(serializers.Serializer):
    digest = serializers.CharField(help_text="the job's result.digest: the list of changes read and confirmed")


@extend_schema_view(post=extend_schema(
    request=ConfirmSerializer, responses={202: JobSerializer, 409: ErrorSerializer},
    examples=[OpenApiExample("Other changes now", response_only=True, status_codes=["409"],
                             value={"detail": "job 12 lists other changes than those confirmed; read them and confirm again"})],
    summary="Run a job refused until someone decides (result.confirm) again on its own files, applying exactly what it "
    "listed; 409 when it asked for no confirmation, its files are gone or it lists other changes than the digest's",
))
class JobConfirmView(_JobChangeView):
    change = staticmethod(job_queue.confirm_job)
    body = ConfirmSerializer
    answer = status.HTTP_202_ACCEPTED


def register(router) -> list:
    return [
        path("campaigns/<slug:slug>/topics/", TopicsView.as_view(), name="api-topics"),
        path("campaigns/<slug:slug>/runs/", RunsView.as_view(), name="api-runs"),
        path("campaigns/<slug:slug>/documents/", DocumentsView.as_view(), name="api-documents"),
        path("campaigns/<slug:slug>/items/", ItemsView.as_view(), name="api-items"),
        path("campaigns/<slug:slug>/images/", ImagesView.as_view(), name="api-images"),
        path("jobs/<int:job_id>/", JobView.as_view(), name="api-job"),
        path("jobs/<int:job_id>/cancel/", JobCancelView.as_view(), name="api-job-cancel"),
        path("jobs/<int:job_id>/retry/", JobRetryView.as_view(), name="api-job-retry"),
        path("jobs/<int:job_id>/confirm/", JobConfirmView.as_view(), name="api-job-confirm"),
    ]
