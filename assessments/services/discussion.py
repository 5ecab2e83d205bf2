"""The discussion of flagged documents and notes: organisers' replies to an assessor's judgment."""

from django.db import transaction

from accounts.models import User
from assessments.models import Judgment, Reply


class DiscussionError(ValueError):
    """A reply that cannot be posted as given (the message says why)."""


@transaction.atomic
def reply(*, judgment: Judgment, text: str, resolves: bool, by: User) -> Reply:
    """Answer the assessor's flag or note on `judgment`; `resolves` closes the discussion (a later reply without
    it opens it again). The caller resolved `judgment` through assessments.access."""
    text = text.strip()
    if not text:
        raise DiscussionError("write a reply")
    # Once replied to, a judgment stays discussed: its assessor may have taken the flag and the note away.
    if not (judgment.flagged or judgment.note or judgment.replies.exists()):
        raise DiscussionError("this judgment has neither a flag nor a note to discuss")
    return Reply.objects.create(judgment=judgment, author=by, text=text, resolves=resolves)
