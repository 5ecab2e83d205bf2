"""A small campaign whose judge-impact answers are known: three topics, six runs whose human leaderboard is strict,
and a machine judge whose labels each test chooses.

In every topic, document j has the human grade GRADES[j] (2 for 0–5, 1 for 6–11, 0 for 12–19), and run rN's top
five is documents OFFSETS[rN] … OFFSETS[rN] + 4: r0 retrieves the best documents, r5 documents only it retrieves,
all judged 0, so it is last.
"""

from assessments.models import MachineJudge, MachineLabel
from tests.assessments.test_evaluation_service import add_run, judge_all
from tests.factories import DocumentFactory, UserFactory

TOPICS = ("11", "12", "13")  # clear of the named cast's training topic 1
GRADES = [2] * 6 + [1] * 6 + [0] * 8
OFFSETS = {"r0": 0, "r1": 2, "r2": 4, "r3": 6, "r4": 8, "r5": 15}


def doc(topic: str, j: int) -> str:
    return f"t{topic}-d{j:02d}"


def run_lines(tag: str) -> dict[str, list[tuple[str, int, float]]]:
    """Each topic's ten lines of run ``tag`` (doc, rank, score), best first."""
    start = OFFSETS[tag]
    return {t: [(doc(t, j), j - start + 1, 20.0 - j) for j in range(start, min(start + 10, 20))] for t in TOPICS}


def human_qrels(holes: frozenset[int] = frozenset()) -> dict[str, dict[str, int]]:
    """What the assessor judged: every document but those numbered in ``holes``."""
    return {t: {doc(t, j): grade for j, grade in enumerate(GRADES) if j not in holes} for t in TOPICS}


def build_campaign(campaign, *, holes: frozenset[int] = frozenset()):
    """The runs and the human labels in ``campaign`` (every document exists in its collection), and a judge."""
    for tag in OFFSETS:
        add_run(campaign, tag, run_lines(tag), team=f"team-{tag[1]}")
    judge_all(campaign, UserFactory(username="anna"), human_qrels(holes))
    for t in TOPICS:
        for j in holes:
            DocumentFactory(collection=campaign.collection, doc_id=doc(t, j))
    return MachineJudge.objects.create(campaign=campaign, name="umbrela", kind="endpoint", base_url="http://127.0.0.1:9/v1",
                                       model="test-model")


def local_judge(campaign) -> MachineJudge:
    """A second judge, the local model, with no labels."""
    return MachineJudge.objects.create(campaign=campaign, name="local", kind="local", model="bundled")


def label(judge: MachineJudge, grades: dict[tuple[str, str], int], *, dimension: str = "relevance", status: str = "ok") -> None:
    """Machine labels (one call's row each) of (topic number, doc id) -> grade, in one insert."""
    topics = {t.number: t for t in judge.campaign.topics.all()}
    documents = {d.doc_id: d for d in judge.campaign.collection.documents.all()}
    MachineLabel.objects.bulk_create([
        MachineLabel(judge=judge, topic=topics[t], document=documents[d], dimension=dimension, status=status,
                     labels={dimension: grade} if status == "ok" else {}, model=judge.model, prompt_version=1)
        for (t, d), grade in grades.items()
    ])


def machine_grades(change: dict[int, int] | None = None, *, skip: frozenset[int] = frozenset()) -> dict[tuple[str, str], int]:
    """The human grades in every topic, with documents ``change`` maps given other grades, and ``skip`` unlabelled."""
    change = change or {}
    return {(t, doc(t, j)): change.get(j, grade) for t in TOPICS for j, grade in enumerate(GRADES) if j not in skip}
