from .adjudication import Adjudication, AdjudicationEvent
from .audit import AuditEvent
from .campaigns import Campaign, Kind, Membership, Phase
from .collections import Collection, Document
from .discussion import Reply
from .jobs import Job
from .judgments import Judgment, JudgmentEvent
from .machine import JudgePrompt, MachineExposure, MachineJudge, MachineLabel
from .pools import Assignment, AssignmentItem, PoolEntry, PoolSource
from .qrels import QrelsSnapshot, QrelsSnapshotPart
from .runs import Ranking, Run
from .topics import Topic

__all__ = [
    "Adjudication",
    "AdjudicationEvent",
    "Assignment",
    "AssignmentItem",
    "AuditEvent",
    "Campaign",
    "Collection",
    "Document",
    "Job",
    "JudgePrompt",
    "Judgment",
    "JudgmentEvent",
    "MachineExposure",
    "MachineJudge",
    "MachineLabel",
    "Membership",
    "Kind",
    "Phase",
    "PoolEntry",
    "PoolSource",
    "QrelsSnapshot",
    "QrelsSnapshotPart",
    "Ranking",
    "Reply",
    "Run",
    "Topic",
]
