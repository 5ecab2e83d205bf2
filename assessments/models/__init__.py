from .campaigns import Campaign, Membership, Phase
from .collections import Collection, Document
from .jobs import Job
from .judgments import Judgment, JudgmentEvent
from .pools import Assignment, AssignmentItem, PoolEntry, PoolSource
from .qrels import QrelsSnapshot, QrelsSnapshotPart
from .runs import Ranking, Run
from .topics import Topic

__all__ = [
    "Assignment",
    "AssignmentItem",
    "Campaign",
    "Collection",
    "Document",
    "Job",
    "Judgment",
    "JudgmentEvent",
    "Membership",
    "Phase",
    "PoolEntry",
    "PoolSource",
    "QrelsSnapshot",
    "QrelsSnapshotPart",
    "Ranking",
    "Run",
    "Topic",
]
