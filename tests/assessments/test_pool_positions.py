"""metrics.pooling.pool_positions, what a build stores, is pool_of_heads with each run's contributions to a document
merged: the same documents, and per run the position by rank, the position by score, the better of two stance
lists. Checked against pool_of_heads, merged here the plain way, on generated runs."""

from hypothesis import given, settings
from hypothesis import strategies as st

from assessments.metrics.pooling import pool_of_heads, pool_positions

DOCS = [f"d{i}" for i in range(12)]


def merged(heads, depth):
    """pool_of_heads, each run's contributions to a document as one (run, rank position, score position)."""
    pool = {}
    for doc, contributions in pool_of_heads(heads, depth=depth).items():
        by_run: dict[str, list] = {}
        for run, order, position in contributions:
            slot = by_run.setdefault(run, [None, None])
            index = 1 if order == "score" else 0
            slot[index] = position if slot[index] is None else min(slot[index], position)
        pool[doc] = [(run, by_rank, by_score) for run, (by_rank, by_score) in by_run.items()]
    return pool


rankings = st.lists(st.sampled_from(DOCS), unique=True, max_size=len(DOCS))
text_run = st.one_of(
    st.fixed_dictionaries({"rank": rankings, "score": rankings}),
    st.fixed_dictionaries({"rank": rankings}),
    st.fixed_dictionaries({"score": rankings}),
    # Ranks that agree with the scores: the same list in both orders.
    rankings.map(lambda ranking: {"rank": ranking, "score": list(ranking)}),
)
image_run = st.dictionaries(st.sampled_from(["PRO", "CON", "NEUTRAL"]), rankings, min_size=1)
runs = st.dictionaries(st.sampled_from(["alpha", "beta", "gamma", "delta"]), st.one_of(text_run, image_run), max_size=4)


@settings(max_examples=300, deadline=None)
@given(heads=runs, depth=st.integers(min_value=1, max_value=len(DOCS) + 1))
def test_it_is_pool_of_heads_with_each_runs_positions_merged(heads, depth):
    assert pool_positions(heads, depth=depth) == merged(heads, depth)
    assert list(pool_positions(heads, depth=depth)) == sorted(pool_of_heads(heads, depth=depth))


def test_a_run_that_pooled_a_document_by_both_orders_is_one_source():
    heads = {"agree": {"rank": ["a", "b"], "score": ["a", "b"]}, "disagree": {"rank": ["a", "b"], "score": ["c", "a"]}}

    assert pool_positions(heads, depth=2) == {
        "a": [("agree", 1, 1), ("disagree", 1, 2)],
        "b": [("agree", 2, 2), ("disagree", 2, None)],
        "c": [("disagree", None, 1)],
    }


def test_an_image_in_both_stance_lists_keeps_its_better_position():
    heads = {"img": {"PRO": ["x", "y"], "CON": ["y", "z"]}}

    assert pool_positions(heads, depth=2) == {"x": [("img", 1, None)], "y": [("img", 1, None)], "z": [("img", 2, None)]}
