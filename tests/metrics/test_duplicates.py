"""Duplicate detection: normalisation, exact groups and CopyCat-style near-duplicate groups (S3 on word 8-grams).

Expected S3 values are worked out by hand for constructed texts and checked against a brute-force all-pairs
reference written here; the module's indexed search must find exactly what the brute force finds.
"""

import itertools
import random
import re
import time

import pytest

from assessments.metrics import duplicates
from assessments.metrics.duplicates import exact_groups, near_duplicate_groups, normalise, normalised_utf8


def words(prefix: str, count: int) -> list[str]:
    """``count`` distinct words, so every 8-gram of the text is distinct and S3 can be counted by hand."""
    return [f"{prefix}{i}" for i in range(count)]


def text(tokens: list[str]) -> str:
    return " ".join(tokens)


def s3(a: str, b: str, n: int = 8) -> float:
    """Reference S3: shared distinct word n-grams over the mean number of distinct n-grams."""
    grams_a, grams_b = (set(zip(*(t.split()[k:] for k in range(n)))) for t in (normalise(a), normalise(b)))
    return len(grams_a & grams_b) / ((len(grams_a) + len(grams_b)) / 2)


def brute_force_groups(docs: dict[str, str], n: int = 8, threshold: float = 0.82) -> list[list[str]]:
    """All pairs, no index: link equal normalised texts and pairs with S3 >= threshold; take components."""
    ids = sorted(docs)
    parent = {doc: doc for doc in ids}

    def root(doc):
        while parent[doc] != doc:
            doc = parent[doc]
        return doc

    for a, b in itertools.combinations(ids, 2):
        same = normalise(docs[a]) == normalise(docs[b])
        long_enough = min(len(normalise(docs[d]).split()) for d in (a, b)) >= n
        if same or (long_enough and s3(docs[a], docs[b], n) >= threshold - 1e-12):
            parent[max(root(a), root(b))] = min(root(a), root(b))
    groups: dict[str, list[str]] = {}
    for doc in ids:
        groups.setdefault(root(doc), []).append(doc)
    return sorted(group for group in groups.values() if len(group) > 1)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Hello,   World!\n\nNew line", "hello world new line"),
        ("\u201cCurly\u201d \u2018quotes\u2019 \u2014 and dashes\u2026", "curly quotes and dashes"),
        ("non\u00a0breaking\u2003spaces", "non breaking spaces"),
        ("\uff26\uff55\uff4c\uff4c-width \ufb01ne", "full width fine"),  # NFKC: full-width letters, the fi ligature
        ("STRASSE Straße", "strasse strasse"),  # casefold, not lower
        ("well-known 3.5% <b>tag</b>", "well known 3 5 b tag b"),
        ("Ünïcödé ΑΘΗΝΑ 東京", "ünïcödé αθηνα 東京"),  # letters of every script stay
        ("  ...  ", ""),
    ],
)
def test_normalise_folds_what_copies_differ_in(raw, expected):
    assert normalise(raw) == expected


def test_ascii_text_normalises_by_the_unicode_rule():
    # ASCII takes a shortcut (one byte table); it must agree with the rule written out for every character, control
    # characters and the separators str.split knows (\x1c-\x1f) included.
    every_ascii = "".join(map(chr, range(128)))
    rng = random.Random(5)
    for text in [every_ascii, *("".join(rng.choices(every_ascii, k=rng.randrange(40))) for _ in range(2000))]:
        expected = " ".join(re.sub(r"[^\w\s]+", " ", text.lower()).split())
        assert normalise(text) == expected
        assert normalised_utf8(text) == expected.encode()
    assert normalised_utf8("Straße, \u201cQuoted\u201d") == b"strasse quoted"


def test_exact_groups_ignore_case_punctuation_and_spacing():
    docs = {
        "c": "Abortion should be legal.",
        "a": "abortion   should be legal",
        "b": "ABORTION, should be \u201clegal\u201d!",
        "d": "Abortion should be illegal.",
        "e": "Nuclear energy is safe.",
        "f": "nuclear energy is safe",
    }
    assert exact_groups(docs) == [["a", "b", "c"], ["e", "f"]]


# A: 100 distinct words, so 93 distinct 8-grams. Hand counts for variants of it:
#   last m words replaced by new ones  -> 93 - m shared of 93 each:      S3 = (93 - m) / 93
#   only the first L words kept         -> L - 7 shared, sizes 93, L - 7:  S3 = 2 (L - 7) / (86 + L)
A = words("a", 100)


@pytest.mark.parametrize(
    "variant, expected_s3, grouped",
    [
        (A[:84] + words("x", 16), 77 / 93, True),  # 0.828
        (A[:83] + words("x", 17), 76 / 93, False),  # 0.817
        (A[:72], 2 * 65 / 158, True),  # 0.823: a min-denominator overlap would give 1.0, Jaccard 0.70
        (A[:71], 2 * 64 / 157, False),  # 0.815
    ],
)
def test_near_duplicates_at_the_copycat_threshold(variant, expected_s3, grouped):
    docs = {"original": text(A), "variant": text(variant)}
    assert s3(docs["original"], docs["variant"]) == pytest.approx(expected_s3)
    assert near_duplicate_groups(docs) == ([["original", "variant"]] if grouped else [])


def test_a_score_of_exactly_the_threshold_counts():
    # 57 words -> 50 8-grams; replacing the last 9 words keeps 41: S3 = 41 / 50 = 0.82 exactly.
    base = words("b", 57)
    docs = {"p": text(base), "q": text(base[:48] + words("y", 9)), "r": text(base[:47] + words("z", 10))}
    assert s3(docs["p"], docs["q"]) == pytest.approx(0.82)
    assert s3(docs["p"], docs["r"]) == pytest.approx(0.80)
    assert near_duplicate_groups(docs) == [["p", "q"]]


def test_groups_are_connected_components():
    # A ~ B and B ~ C, but A and C alone are below the threshold: one group, as in CopyCat.
    b_words = A[:90] + words("x", 10)
    c_words = words("y", 10) + b_words[10:]
    docs = {"A": text(A), "B": text(b_words), "C": text(c_words)}
    assert s3(docs["A"], docs["B"]) >= 0.82
    assert s3(docs["B"], docs["C"]) >= 0.82
    assert s3(docs["A"], docs["C"]) < 0.82
    assert near_duplicate_groups(docs) == [["A", "B", "C"]]


def test_short_documents_are_grouped_only_when_identical():
    docs = {
        "s1": "Yes, abortion should be legal.",
        "s2": "yes abortion should be LEGAL",
        "s3": "Yes, abortion should be illegal.",  # one word differs: no 8-gram to compare, so not a duplicate
        "long": "Yes, abortion should be legal. " + text(words("w", 20)),
    }
    assert near_duplicate_groups(docs) == [["s1", "s2"]]


def test_exact_duplicates_of_long_documents_are_grouped_with_their_near_duplicates():
    docs = {"z": text(A), "y": text(A).upper(), "x": text(A[:84] + words("x", 16))}
    assert near_duplicate_groups(docs) == [["x", "y", "z"]]


def test_result_matches_brute_force_on_random_mutations():
    # Few distinct words make accidental shared 8-grams and borderline pairs common; mutations of every strength
    # and length (including docs under 8 words) exercise the prefix filter's bound.
    rng = random.Random(20)
    vocab = words("v", 12)
    docs: dict[str, str] = {}
    for i in range(60):
        base = rng.choices(vocab, k=rng.randint(3, 120))
        docs[f"b{i:02d}"] = text(base)
        for j in range(rng.randint(0, 3)):
            mutated = list(base)
            for _ in range(rng.randint(0, max(1, len(base) // 6))):
                mutated[rng.randrange(len(mutated))] = rng.choice(vocab + ["new"])
            if rng.random() < 0.3:
                mutated = mutated[: rng.randint(1, len(mutated))]
            docs[f"b{i:02d}m{j}"] = text(mutated)
    expected = brute_force_groups(docs)
    assert expected  # the construction must produce groups, or the comparison proves nothing
    assert near_duplicate_groups(docs) == expected
    for n, threshold in ((4, 0.5), (1, 0.9)):
        assert near_duplicate_groups(docs, n=n, threshold=threshold) == brute_force_groups(docs, n, threshold)


@pytest.mark.parametrize("batch_bytes", [1, 700, duplicates._BATCH_BYTES])
def test_result_matches_brute_force_on_unicode_texts_in_any_batching(monkeypatch, batch_bytes):
    # Words of several byte lengths in UTF-8 (n-grams are hashed from the bytes), hashed one document per batch, a
    # few per batch, or all together: documents never share an n-gram across a batch's joins.
    monkeypatch.setattr(duplicates, "_BATCH_BYTES", batch_bytes)
    rng = random.Random(33)
    vocab = ["été", "αθηνα", "東京", "straße", "naïve", "ok", "x", "Ünïcödé", "💬", "déjà"]
    docs: dict[str, str] = {}
    for i in range(40):
        base = rng.choices(vocab, k=rng.randint(5, 60))
        docs[f"u{i:02d}"] = " ".join(base)
        for j in range(rng.randint(0, 2)):
            mutated = list(base)
            for _ in range(rng.randint(0, max(1, len(base) // 8))):
                mutated[rng.randrange(len(mutated))] = rng.choice(vocab)
            docs[f"u{i:02d}m{j}"] = " ".join(mutated)
    expected = brute_force_groups(docs)
    assert expected
    assert near_duplicate_groups(docs) == expected


@pytest.mark.parametrize("n, threshold", [(1, 0.5), (1, 0.7), (1, 0.82), (2, 0.5)])
def test_result_matches_brute_force_on_small_word_sets(n, threshold):
    # Short texts over 16 words have many pairs at exactly the smallest overlap the threshold allows, which is
    # where a prefix one n-gram too short would lose pairs (this test fails for that mistake).
    rng = random.Random(5)
    vocab = words("v", 16)
    docs = {f"d{i:03d}": text(rng.sample(vocab, rng.randint(2, 10))) for i in range(150)}
    assert near_duplicate_groups(docs, n=n, threshold=threshold) == brute_force_groups(docs, n, threshold)


def test_result_does_not_depend_on_mapping_order():
    docs = {f"d{i}": text(A[: 60 + i]) for i in range(10)}
    reversed_docs = dict(reversed(list(docs.items())))
    assert near_duplicate_groups(reversed_docs) == near_duplicate_groups(docs)


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"threshold": 0}, {"threshold": 1.5}])
def test_near_duplicate_groups_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        near_duplicate_groups({"a": "x"}, **kwargs)


def test_it_scales_to_a_pool_of_100k_documents():
    # 100,000 random 100-word documents (no two share an 8-gram by chance), plus planted duplicates whose groups
    # are known by construction: 1000 near-duplicates with one word changed (S3 = 85 / 93), 200 reformatted exact
    # copies, and 100 pairs of identical short documents.
    rng = random.Random(100_000)
    vocab = words("w", 20_000)
    docs = {f"doc{i:06d}": " ".join(rng.choices(vocab, k=100)) for i in range(100_000)}
    expected = []
    for i in range(1000):
        original = f"doc{i:06d}"
        changed = docs[original].split()
        changed[50] = "changed"
        docs[f"near{i:04d}"] = " ".join(changed)
        expected.append([original, f"near{i:04d}"])
    for i in range(1000, 1200):
        original = f"doc{i:06d}"
        docs[f"copy{i:04d}"] = docs[original].upper().replace(" ", ",  ")
        expected.append([f"copy{i:04d}", original])
    for i in range(100):
        docs[f"short{i:03d}a"] = docs[f"short{i:03d}b"] = f"Short text number {i}."
        expected.append([f"short{i:03d}a", f"short{i:03d}b"])

    started = time.perf_counter()
    groups = near_duplicate_groups(docs)
    print(f"\nnear_duplicate_groups: {len(docs):,} documents in {time.perf_counter() - started:.1f} s")
    assert groups == sorted(expected)
