"""The three precision@10 measures of Touché Task 3, computed as the organisers' ``submission-evaluator.sh`` does.

For each topic the run gives a PRO list and a CON list of up to ten images. An image at rank 1–10 of the list for
stance S counts as

* on topic (``topicRelevanceP@10``) when judged ONTOPIC = 1;
* argumentative (``argumentativenessP@10``) when on topic and judged PRO = 1 or CON = 1, whichever S is;
* on stance (``stanceRelevanceP@10``) when on topic and judged S = 1.

An image the qrels do not judge for the topic counts as off-topic, and so does a question they leave out. What the
evaluator does, and these functions with it (read from the script, checked against it by tests/metrics):

* The denominator is fixed: 10 per topic and stance, 20 per topic (both lists), 20 × the number of topics overall.
  A short list is not scored on its length; a missing list scores 0 of 10.
* The topics are **the run's**: those with at least one line the evaluator counts. A topic the qrels judge but the
  run lacks is left out of the average, not scored 0, so a run that answers fewer topics is not penalised for it.
  A topic of the run that the qrels lack is scored, every image unjudged.
* Which lines count is the evaluator's per-line checks in file order (rank 1–10 and above the list's previous rank,
  a plain decimal score not above the previous one, topic 1–50): `ImageRunEntry.skipped`, set by the run reader.
* The overall figures pool the hits of all topics (hits / 20n), which equals the mean of the topics' figures.

The script prints the topic rows with two decimals and the overall measures with three; `script_csv` and
`script_measures` give the same text from a report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from assessments.formats.image_qrels import ImageJudgment
from assessments.formats.image_runs import DEPTH, STANCES, ImageRun
from assessments.formats.qrels import topic_sort_key

TOPIC_RELEVANCE = "topicRelevanceP@10"
ARGUMENTATIVENESS = "argumentativenessP@10"
STANCE_RELEVANCE = "stanceRelevanceP@10"
MEASURES = (TOPIC_RELEVANCE, ARGUMENTATIVENESS, STANCE_RELEVANCE)

# (topic, image) -> question (ONTOPIC, PRO, CON) -> 0 or 1
ImageQrels = Mapping[tuple[str, str], Mapping[str, int]]


@dataclass(frozen=True, slots=True)
class Hits:
    """What one list (or several, summed) earned: images of each kind, out of `depth` slots."""

    on_topic: int
    argumentative: int
    on_stance: int
    unjudged: int  # counted as off-topic
    depth: int

    def precision(self) -> dict[str, float]:
        """The three measures by their names in the script's output."""
        if not self.depth:
            return dict.fromkeys(MEASURES, 0.0)
        return {
            TOPIC_RELEVANCE: self.on_topic / self.depth,
            ARGUMENTATIVENESS: self.argumentative / self.depth,
            STANCE_RELEVANCE: self.on_stance / self.depth,
        }

    def __add__(self, other: Hits) -> Hits:
        return Hits(
            self.on_topic + other.on_topic, self.argumentative + other.argumentative,
            self.on_stance + other.on_stance, self.unjudged + other.unjudged, self.depth + other.depth,
        )


NO_HITS = Hits(0, 0, 0, 0, 0)


@dataclass(frozen=True)
class TopicHits:
    topic: str
    stances: dict[str, Hits]  # PRO and CON, each out of 10

    @property
    def both(self) -> Hits:
        """Both lists together, out of 20: the script's topic columns."""
        return sum(self.stances.values(), NO_HITS)


@dataclass(frozen=True)
class ImagePrecisionReport:
    topics: list[TopicHits]  # the run's topics, by number, as the script lists them

    @property
    def overall(self) -> Hits:
        """All topics' hits out of 20 × topics: the three measures the script writes to its output file."""
        return sum((topic.both for topic in self.topics), NO_HITS)

    def measures(self) -> dict[str, float]:
        return self.overall.precision()

    def overall_for(self, stance: str) -> Hits:
        """One stance's hits over the run's topics (out of 10 × topics); the script prints them per topic only."""
        return sum((topic.stances[stance] for topic in self.topics), NO_HITS)


def image_qrels_table(judgments: Iterable[ImageJudgment]) -> dict[tuple[str, str], dict[str, int]]:
    """The answers by (topic, image), as the evaluator looks them up (a later line for the same question wins)."""
    table: dict[tuple[str, str], dict[str, int]] = {}
    for judgment in judgments:
        table.setdefault((judgment.topic, judgment.image), {})[judgment.question] = judgment.value
    return table


def evaluate_image_run(run: ImageRun, qrels: ImageQrels) -> ImagePrecisionReport:
    """Score `run` against `qrels` (see `image_qrels_table`) as submission-evaluator.sh does."""
    counts: dict[str, dict[str, list[int]]] = {}  # topic -> stance -> [on topic, argumentative, on stance, unjudged]
    for (topic, stance), entries in run.entries.items():
        for entry in entries:
            if entry.skipped is not None:
                continue
            tally = counts.setdefault(topic, {s: [0, 0, 0, 0] for s in STANCES})[stance]
            answers = qrels.get((topic, entry.image))
            if answers is None:
                tally[3] += 1
                continue
            if answers.get("ONTOPIC") != 1:
                continue
            tally[0] += 1
            if answers.get(stance) == 1:
                tally[1] += 1
                tally[2] += 1
            elif any(answers.get(s) == 1 for s in STANCES):
                tally[1] += 1
    return ImagePrecisionReport([
        TopicHits(topic, {stance: _hits(counts[topic][stance]) for stance in STANCES})
        for topic in sorted(counts, key=topic_sort_key)
    ])


def _hits(tally: list[int]) -> Hits:
    on_topic, argumentative, on_stance, unjudged = tally
    return Hits(on_topic, argumentative, on_stance, unjudged, DEPTH)


def script_csv(report: ImagePrecisionReport) -> str:
    """The per-topic table the script prints, header included, with its two decimals."""
    lines = ["topic,onTopic,argumentative,onStance,onTopicPro,argumentativePro,onStancePro,onTopicCon,argumentativeCon,onStanceCon\n"]
    for topic in report.topics:
        figures = [topic.both.precision()] + [topic.stances[stance].precision() for stance in STANCES]
        values = ",".join(f"{measures[name]:.2f}" for measures in figures for name in MEASURES)
        lines.append(f"{int(topic.topic)},{values}\n")
    return "".join(lines)


def script_measures(report: ImagePrecisionReport) -> str:
    """The output file the script writes: the three overall measures with three decimals."""
    measures = report.measures()
    return "".join(f'measure {{\n key: "{name}"\n value: "{measures[name]:.3f}"\n}}\n' for name in MEASURES)
