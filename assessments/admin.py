"""The admin shows a campaign's state and never changes it.

Every change of a campaign is made by a service that records it (an AuditEvent, a JudgmentEvent, a refusal to
rewrite a judged topic silently); an admin form would save the same rows with no trace and no check. So every
model here is view-only, and each page says where its changes are made: the campaign's pages under
/campaigns/<slug>/, the organiser API, or the management commands. Users and their roles stay editable
(accounts.admin): they are not campaign state, and the membership of a campaign is changed on its page.
"""

from django.contrib import admin

from . import models


class _ReadOnly:
    """View only: no add, change or delete permission, whoever asks (superusers too)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(_ReadOnly, admin.ModelAdmin):
    #: Where the model's changes are made with their trail, shown as the subtitle of its admin pages.
    changed_through = ""

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {"subtitle": self.changed_through, **(extra_context or {})})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return super().change_view(request, object_id, form_url, {"subtitle": self.changed_through, **(extra_context or {})})


class ReadOnlyInline(_ReadOnly, admin.TabularInline):
    extra = 0


@admin.register(models.Collection)
class CollectionAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name")
    search_fields = ("slug", "name")
    changed_through = "Collections are made by `manage.py create_campaign` and filled by the documents import."


@admin.register(models.Campaign)
class CampaignAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "preset", "phase", "training_round", "collection", "created_at", "archived_at")
    list_filter = ("phase", "preset", ("archived_at", admin.EmptyFieldListFilter))
    search_fields = ("slug", "name")
    changed_through = (
        "Changed on the campaign's pages, the API or the commands, which record each change on its timeline: phase "
        "and training rounds on the agreement page, members and archiving on the campaign page, scheme and "
        "guidelines by `manage.py create_campaign`."
    )


@admin.register(models.Topic)
class TopicAdmin(ReadOnlyAdmin):
    list_display = ("number", "title", "campaign", "is_training")
    list_filter = ("campaign", "is_training")
    search_fields = ("number", "title")
    changed_through = (
        "Topics change by a topics import (the campaign's import page, the API or `manage.py import_topics`), which "
        "lists the changes to judged topics and applies them only when confirmed; training topics are marked on "
        "the assignments page."
    )


@admin.register(models.Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("doc_id", "title", "collection", "has_text", "is_html")
    list_filter = ("collection", "has_text", "is_html")
    search_fields = ("doc_id",)  # exact-ish id lookups; full-text search of bodies would scan a million rows
    show_full_result_count = False
    changed_through = "Documents change by a documents import (the campaign's import page, the API or `manage.py import_documents`)."


@admin.register(models.Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ("tag", "team", "campaign", "has_stance", "line_count", "uploaded_at")
    list_filter = ("campaign", "has_stance")
    search_fields = ("tag", "team")
    changed_through = "Runs change by a runs import (the campaign's import page, the API or `manage.py import_runs`)."


@admin.register(models.Ranking)
class RankingAdmin(ReadOnlyAdmin):
    list_display = ("run", "topic", "length")
    list_filter = ("run__campaign",)
    raw_id_fields = ("run", "topic")
    list_select_related = ("run", "topic")
    show_full_result_count = False
    changed_through = RunAdmin.changed_through


class PoolSourceInline(ReadOnlyInline):
    model = models.PoolSource
    raw_id_fields = ("run",)


@admin.register(models.PoolEntry)
class PoolEntryAdmin(ReadOnlyAdmin):
    list_display = ("topic", "document", "order", "strategy", "duplicate_of")
    list_filter = ("topic__campaign", "strategy")
    search_fields = ("document__doc_id",)
    raw_id_fields = ("topic", "document", "duplicate_of")
    list_select_related = ("topic", "document")
    inlines = [PoolSourceInline]
    changed_through = "Pools are built on the campaign's pool page, by the API or by `manage.py build_pool`."


class AssignmentItemInline(ReadOnlyInline):
    model = models.AssignmentItem
    raw_id_fields = ("entry",)


@admin.register(models.Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("topic", "assessor", "phase", "scope", "round", "active", "created_at")
    list_filter = ("phase", "scope", "active", "topic__campaign")
    search_fields = ("assessor__username", "topic__number")
    list_select_related = ("topic", "assessor")
    inlines = [AssignmentItemInline]
    changed_through = (
        "Topics are assigned, overlap drawn and assignments withdrawn on the campaign's assignments page, by the "
        "API or by `manage.py assign_topics`."
    )


class JudgmentEventInline(ReadOnlyInline):
    model = models.JudgmentEvent
    fields = ("revision", "labels", "note", "flagged", "time_spent_ms", "source", "assessor", "at")
    readonly_fields = fields


@admin.register(models.Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ("topic", "document", "assessor", "phase", "labels", "flagged", "revision", "updated_at")
    list_filter = ("phase", "flagged", "source", "topic__campaign", "assessor")
    search_fields = ("document__doc_id", "assessor__username")
    list_select_related = ("topic", "document", "assessor")
    raw_id_fields = ("topic", "document")  # a read-only page still must not list a million documents
    inlines = [JudgmentEventInline]
    # The database refuses to rewrite the history anyway (migrations 0008, 0009).
    changed_through = "Labels change on the judge page and by adjudication, which keep their history; qrels come in by a qrels import."


@admin.register(models.JudgmentEvent)
class JudgmentEventAdmin(ReadOnlyAdmin):
    list_display = ("judgment", "revision", "labels", "flagged", "source", "assessor", "at")
    list_filter = ("source", "judgment__topic__campaign")
    search_fields = ("judgment__document__doc_id", "assessor__username")
    list_select_related = ("assessor",)
    raw_id_fields = ("judgment",)
    show_full_result_count = False
    changed_through = "The history of labels is append-only: every label the judging service records adds a row."


@admin.register(models.Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "campaign", "status", "done", "total", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "status")
    changed_through = "Jobs are cancelled and retried on the campaign's import page or by the API; the job sweep removes the files they kept."


@admin.register(models.QrelsSnapshot)
class QrelsSnapshotAdmin(ReadOnlyAdmin):
    list_display = ("campaign", "number", "kind", "phase", "rule", "line_count", "sha256", "created_by", "created_at")
    list_filter = ("campaign", "kind", "phase")
    changed_through = "Qrels snapshots are made by each export and import of qrels, and kept as they were."
