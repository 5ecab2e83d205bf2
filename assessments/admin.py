from django.contrib import admin

from . import models


@admin.register(models.Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ("slug", "name")
    search_fields = ("slug", "name")


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "preset", "phase", "training_round", "collection", "created_at")
    list_filter = ("phase", "preset")
    search_fields = ("slug", "name")


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


class JudgmentEventInline(admin.TabularInline):
    model = models.JudgmentEvent
    extra = 0
    can_delete = False
    readonly_fields = [f.name for f in models.JudgmentEvent._meta.fields]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Read-only: labels change only through the judging service, which keeps their history."""

    list_display = ("topic", "document", "assessor", "phase", "relevance", "quality", "stance", "flagged", "revision", "updated_at")
    list_filter = ("phase", "flagged", "source", "topic__campaign", "assessor")
    search_fields = ("document__doc_id", "assessor__username")
    list_select_related = ("topic", "document", "assessor")
    inlines = [JudgmentEventInline]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "campaign", "status", "done", "total", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "status")
    readonly_fields = ("created_at", "started_at", "finished_at")


@admin.register(models.QrelsSnapshot)
class QrelsSnapshotAdmin(admin.ModelAdmin):
    list_display = ("campaign", "number", "kind", "phase", "rule", "line_count", "created_by", "created_at")
    list_filter = ("campaign", "kind", "phase")
