from django.db import models


class Collection(models.Model):
    """A document collection (args.me, ClueWeb12 passages, …), shared by the campaigns that use it."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    """A document by its official id.

    Runs, pools and imported qrels name documents whose text may never have been loaded, so a row
    can exist with `has_text=False` (a stub) and be filled in by a later import.
    """

    # A collection holds up to millions of documents, written only by the document import, pool builds and qrels
    # imports (stubs), which resolve the collection themselves: checking the key per row was a quarter of a
    # 1 M-document import, so there is no database-level foreign key (Django still cascades deletes; `manage.py
    # check_integrity` finds rows that point nowhere), and the unique (collection, doc_id) index serves lookups by
    # collection.
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="documents", db_constraint=False, db_index=False
    )
    doc_id = models.CharField(max_length=255)
    title = models.TextField(blank=True)
    # Web HTML is untrusted: it is stored as given and sanitised when rendered (assessments.rendering).
    body = models.TextField(blank=True)
    is_html = models.BooleanField(default=False)
    url = models.URLField(max_length=2000, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    has_text = models.BooleanField(default=False)
    # Hash of the normalised text, for exact-duplicate grouping without reading bodies again.
    text_hash = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "doc_id"], name="document_unique_id_per_collection"),
        ]

    def __str__(self) -> str:
        return self.doc_id
