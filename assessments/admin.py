from django.contrib import admin

from . import models


@admin.register(models.Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ("slug", "name")
    search_fields = ("slug", "name")


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "preset", "phase", "training_round", "collection", "created_at", "archived_at")
    list_filter = ("phase", "preset", ("archived_at", admin.EmptyFieldListFilter))
    search_fields = ("slug", "name")
    # Archiving goes through services.campaigns.set_archived (the campaign page, the API), which keeps its audit event.
    readonly_fields = ("archived_at",)


@admin.register(models.Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("number", "title", "campaign", "is_training")
    list_filter = ("campaign", "is_training")
    search_fields = ("number", "title")


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("doc_id", "title", "collection", "has_text", "is_html")
    list_filter = ("collection", "has_text", "is_html")
    search_fields = ("doc_id",)  # exact-ish id lookups; full-text search of bodies would scan a million rows
    show_full_result_count = False


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("tag", "team", "campaign", "has_stance", "line_count", "uploaded_at")
    list_filter = ("campaign", "has_stance")
    search_fields = ("tag", "team")


@admin.register(models.Ranking)
class RankingAdmin(admin.ModelAdmin):
    list_display = ("run", "topic", "length")
    list_filter = ("run__campaign",)
    raw_id_fields = ("run", "topic")
    list_select_related = ("run", "topic")
    show_full_result_count = False


class PoolSourceInline(admin.TabularInline):
    model = models.PoolSource
    extra = 0
    raw_id_fields = ("run",)


@admin.register(models.PoolEntry)
class PoolEntryAdmin(admin.ModelAdmin):
    list_display = ("topic", "document", "order", "strategy", "duplicate_of")
    list_filter = ("topic__campaign", "strategy")
    search_fields = ("document__doc_id",)
    raw_id_fields = ("topic", "document", "duplicate_of")
    list_select_related = ("topic", "document")
    inlines = [PoolSourceInline]


class AssignmentItemInline(admin.TabularInline):
    model = models.AssignmentItem
    extra = 0
    raw_id_fields = ("entry",)


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("topic", "assessor", "phase", "scope", "round", "active", "created_at")
    list_filter = ("phase", "scope", "active", "topic__campaign")
    search_fields = ("assessor__username", "topic__number")
    list_select_related = ("topic", "assessor")
    inlines = [AssignmentItemInline]


class _ReadOnly:
    """Shown, never changed: the record of who judged what, and the qrels exported from it. Judgments change only
    through the judging service, which keeps their history; the database refuses the rest anyway (0008, 0009)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(_ReadOnly, admin.ModelAdmin):
    pass


class JudgmentEventInline(_ReadOnly, admin.TabularInline):
    model = models.JudgmentEvent
    extra = 0
    fields = ("revision", "relevance", "quality", "stance", "note", "flagged", "time_spent_ms", "source", "assessor", "at")
    readonly_fields = fields


@admin.register(models.Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ("topic", "document", "assessor", "phase", "relevance", "quality", "stance", "flagged", "revision", "updated_at")
    list_filter = ("phase", "flagged", "source", "topic__campaign", "assessor")
    search_fields = ("document__doc_id", "assessor__username")
    list_select_related = ("topic", "document", "assessor")
    raw_id_fields = ("topic", "document")  # a read-only page still must not list a million documents
    inlines = [JudgmentEventInline]


@admin.register(models.JudgmentEvent)
class JudgmentEventAdmin(ReadOnlyAdmin):
    list_display = ("judgment", "revision", "relevance", "quality", "stance", "flagged", "source", "assessor", "at")
    list_filter = ("source", "judgment__topic__campaign")
    search_fields = ("judgment__document__doc_id", "assessor__username")
    list_select_related = ("assessor",)
    raw_id_fields = ("judgment",)
    show_full_result_count = False


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "campaign", "status", "done", "total", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "status")
    readonly_fields = ("created_at", "started_at", "finished_at")


@admin.register(models.QrelsSnapshot)
class QrelsSnapshotAdmin(ReadOnlyAdmin):
    list_display = ("campaign", "number", "kind", "phase", "rule", "line_count", "sha256", "created_by", "created_at")
    list_filter = ("campaign", "kind", "phase")
