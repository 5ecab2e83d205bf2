"""The real check: Touché 2021 Task 1's runs, imported by the import service and pooled at depth 5, give the
union of every run's top 5 computed here straight from the files."""

from collections import defaultdict

import pytest

from assessments.models import PoolEntry, PoolSource
from assessments.services.imports.runs import import_runs
from assessments.services.pooling import PoolSpec, build_pool
from tests.factories import TopicFactory


def top_k_from_files(paths, k):
    """topic -> {doc: {(tag, order, position)}}, read with nothing but str.split and sorted.

    Orders as the Touché README states them: trec_eval's is score descending with ties broken by document id
    descending (the rank column ignored); Touché's is the rank column ascending, here with the same tie-break.
    """
    lines = defaultdict(list)  # (topic, tag) -> [(doc, rank, score)]
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                topic, _, doc, rank, score, tag = line.split()
                lines[(topic, tag)].append((doc, int(rank), float(score)))
    pool = defaultdict(lambda: defaultdict(set))
    for (topic, tag), entries in lines.items():
        by_score = sorted(entries, key=lambda e: (e[2], e[0]), reverse=True)
        by_rank = sorted(sorted(entries, key=lambda e: e[0], reverse=True), key=lambda e: e[1])
        for order, ranking in (("score", by_score), ("rank", by_rank)):
            for position, (doc, _, _) in enumerate(ranking[:k], 1):
                pool[topic][doc].add((tag, order, position))
    return pool


@pytest.mark.django_db
def test_depth_5_pool_of_touche_2021_task1_is_the_union_of_every_runs_top_5(campaign, touche_data):
    paths = sorted((touche_data / "2021-task1" / "runs").glob("*.txt"))
    assert len(paths) == 9
    for number in range(51, 101):
        TopicFactory(campaign=campaign, number=str(number), position=number)
    import_runs(campaign=campaign, paths=paths)

    summary = build_pool(campaign=campaign, spec=PoolSpec(depth=5))

    expected = top_k_from_files(paths, 5)
    pooled = defaultdict(set)
    for topic, doc in PoolEntry.objects.filter(topic__campaign=campaign).values_list("topic__number", "document__doc_id"):
        pooled[topic].add(doc)
    assert {t: set(docs) for t, docs in expected.items()} == dict(pooled)
    sources = defaultdict(lambda: defaultdict(set))
    for topic, doc, tag, by_rank, by_score in PoolSource.objects.filter(entry__topic__campaign=campaign).values_list(
        "entry__topic__number", "entry__document__doc_id", "run__tag", "rank_position", "score_position"
    ):
        sources[topic][doc].update((tag, order, position) for order, position in (("rank", by_rank), ("score", by_score)) if position)
    assert {t: dict(docs) for t, docs in sources.items()} == {t: dict(docs) for t, docs in expected.items()}
    assert summary.total == sum(len(docs) for docs in expected.values())
    # Ties and ranks starting at 0 make the orders differ in these runs: the union is larger than either order.
    by_score = sum(len({d for d, s in docs.items() if any(o == "score" for _, o, _ in s)}) for docs in expected.values())
    assert summary.total > by_score
