"""Group exact and near-duplicate documents, so that one judgment can stand for every copy in a pool.

Pure Python with no Django import and no third-party dependency: the pooling service passes a mapping of
document id -> plain text and stores each group's canonical member as ``PoolEntry.duplicate_of`` for the others.

Near-duplicates follow the Touché organisers' tool, CopyCat (Fröbe et al., SIGIR 2021; chatnoir-eu/chatnoir-copycat,
used for Touché's own data cleaning). Two documents are near-duplicates when their S3 score on word 8-grams is
at least 0.82::

    S3(A, B) = |A ∩ B| / ((|A| + |B|) / 2)      A, B = the sets of distinct word 8-grams of each document

which is ``S3Score`` in webis-de/ecir20-effect-of-near-duplicates-on-ir-evaluation: shared 8-grams divided by
the mean 8-gram set size (the Dice coefficient), compared with ``>=`` as in CopyCat's ``DeduplicateTrecRunFile``
(default ``--s3Threshold 0.82``). Groups are the connected components of the "near-duplicate" relation, as in
CopyCat's ``extractGroupsOfEquivalentDocuments``, so A~B and B~C put A and C in one group even if A and C alone
would not qualify. Documents with fewer than 8 words have no 8-gram: CopyCat gives them S3 = 1 only when their
canonical texts are identical, so they only ever join exact groups.

Deliberate difference: CopyCat tokenises with Lucene's StandardAnalyzer (Unicode word boundaries, lower case)
and Porter-stems every token (``TextCanonicalization.fullCanonicalization``) before building 8-grams. We only
``normalise``: stemming would need a dependency. Without it, two copies that differ only in word endings share
fewer 8-grams, so at the same 0.82 we usually find slightly fewer pairs than CopyCat.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import re
import unicodedata
from array import array
from collections.abc import Mapping
from fractions import Fraction

# Unicode-aware: anything that is neither a word character nor whitespace.
_PUNCTUATION = re.compile(r"[^\w\s]+")
# The same rule for ASCII text as a table over bytes that also lowercases and turns every whitespace character into a
# space (bytes.split knows fewer of them than str.split): a third faster than str methods, four times faster than
# the regular expression, and most documents are ASCII.
_ASCII_FOLD = bytes(
    32 if _PUNCTUATION.match(chr(c)) or chr(c).isspace() else ord(chr(c).lower()) for c in range(128)
) + bytes(range(128, 256))

_MASK64 = (1 << 64) - 1
# The packed inverted index is split by the top bits of the shingle hash, so only one part is sorted at a time.
_INDEX_PARTS_BITS = 6


def normalise(text: str) -> str:
    """Return ``text`` as compared for duplicates: NFKC, casefolded, punctuation turned into spaces, and whitespace
    collapsed to single spaces.

    Copies of one text on the web and in args.me differ in exactly these ways: curly vs straight quotes, dashes,
    ellipses, non-breaking spaces, full-width letters, capitalisation after re-formatting, and line breaks.
    Punctuation goes because a single changed mark otherwise breaks every 8-gram around it (``word,`` and
    ``word`` would be different words), and because CopyCat's tokenizer (Lucene's StandardAnalyzer) drops it too.
    It becomes a space rather than nothing so that ``well-known`` splits like ``well known`` does. Digits and
    letters of every script stay.
    """
    if text.isascii():  # NFKC leaves ASCII unchanged, and casefold() is lower() on it
        return _ascii_normalised(text).decode()
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCTUATION.sub(" ", folded).split())


def normalised_utf8(text: str) -> bytes:
    """``normalise(text)`` as UTF-8, what a digest of it reads: ASCII text (a million passages at import) never
    becomes a str again."""
    return _ascii_normalised(text) if text.isascii() else normalise(text).encode()


def _ascii_normalised(text: str) -> bytes:
    return b" ".join(text.encode().translate(_ASCII_FOLD).split())


def exact_groups(docs: Mapping[str, str]) -> list[list[str]]:
    """Return groups (two or more members) of documents whose normalised texts are identical.

    Each group is sorted, so ``group[0]``, the smallest id, is its canonical member; groups are sorted by it. Texts
    are compared by a 128-bit BLAKE2b digest of the normalised text, so no normalised copy of the pool is kept.
    Documents that normalise to the empty string (only punctuation, or empty) form a group of their own.
    """
    by_digest: dict[bytes, list[str]] = {}
    for doc_id in sorted(docs):
        by_digest.setdefault(_digest(normalised_utf8(docs[doc_id])), []).append(doc_id)
    return sorted(group for group in by_digest.values() if len(group) > 1)


def near_duplicate_groups(docs: Mapping[str, str], *, n: int = 8, threshold: float = 0.82) -> list[list[str]]:
    """Return groups (two or more members) of near-duplicate documents, exact duplicates included.

    Two documents are linked when ``S3 >= threshold`` on their word ``n``-grams (see the module docstring) or when
    their normalised texts are identical; groups are the connected components of these links. Each group is
    sorted, so ``group[0]`` (smallest id) is its canonical member; groups are sorted by it. The result does not
    depend on the order of ``docs``.

    Complexity. There is no all-pairs comparison. Exact duplicates are collapsed first (one digest per document).
    Candidate pairs then come from an inverted index of hashed n-grams with prefix filtering (Chaudhuri et al.
    2006; Bayardo et al. 2007, "AllPairs"): under one fixed order of n-grams (by hash value), two sets with
    ``S3 >= t`` must share one of the first ``|A| - ceil(t |A| / (2 - t)) + 1`` n-grams of each, roughly 30% of
    them at t = 0.82, so only those are indexed. The filter loses no pair, so the result is the same as an exact
    all-pairs comparison; each candidate is then verified with the exact S3. Pairs already in one group are not
    verified again. The index holds packed 64-bit integers (the high bits of the n-gram hash, then the document
    number), sorted one part at a time, so it costs 8 bytes per indexed n-gram: about 25 MB for 100,000 documents
    of ~100 words, and under 100 MB for the whole call. Two different n-grams that agree in those high bits only
    add a candidate pair to verify.

    Worst case: boilerplate, i.e. an n-gram in the prefixes of very many documents that are not near-duplicates
    of each other, makes its posting list quadratic to verify. CopyCat counts co-occurrences over *all* 8-grams
    and has the same worst case; pass the documents' main text, not raw pages.

    Verification compares 64-bit hashes of the n-grams' word numbers. A collision between two different n-grams (a
    few in a million for a pool of 100,000 documents) can add one to an overlap, nothing worse.
    """
    if n < 1:
        raise ValueError(f"n-gram length must be positive, got {n}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    # Exact rational arithmetic, so a score of exactly 0.82 is ">= 0.82" and the prefix bound is never off by one.
    t = Fraction(repr(threshold))
    num, den = t.numerator, t.denominator
    ids = sorted(docs)
    parent = list(range(len(ids)))
    doc_bits = max(1, (len(ids) - 1).bit_length())
    doc_mask = (1 << doc_bits) - 1
    hash_mask = _MASK64 ^ doc_mask
    index_parts = [array("Q") for _ in range(1 << _INDEX_PARTS_BITS)]
    part_shift = 64 - _INDEX_PARTS_BITS
    vocabulary: dict[str, int] = {}
    word_numbers = itertools.count()
    sizes: dict[int, int] = {}
    first_with_digest: dict[bytes, int] = {}
    verified_sets: dict[int, set[int]] = {}

    def shingles(normalised: str) -> set[int]:
        # Words are numbered in order of first appearance (documents in id order), so the hashes, and therefore
        # the work done, are the same in every process: hash() of a tuple of ints is not salted.
        words = list(map(vocabulary.setdefault, normalised.split(), word_numbers))
        return set(map(hash, zip(*(words[k:] for k in range(n)))))

    def shingle_set(i: int) -> set[int]:
        if i not in verified_sets:
            verified_sets[i] = shingles(normalise(docs[ids[i]]))
        return verified_sets[i]

    for i, doc_id in enumerate(ids):
        text = normalise(docs[doc_id])
        first = first_with_digest.setdefault(_digest(text.encode()), i)
        if first != i:
            _union(parent, first, i)
            continue
        grams = shingles(text)
        if not grams:
            continue  # shorter than n words: exact duplicates only, as in CopyCat
        size = sizes[i] = len(grams)
        # S3 >= t and |A ∩ B| <= |B| give |A ∩ B| >= t |A| / (2 - t): the fewest n-grams A must share with a match.
        min_overlap = -(-num * size // (2 * den - num))
        for gram in sorted(grams)[: size - min_overlap + 1]:
            packed = (gram & hash_mask) | i
            index_parts[packed >> part_shift].append(packed)

    rejected: set[tuple[int, int]] = set()
    for number, part in enumerate(index_parts):
        index_parts[number] = array("Q")  # each part is sorted into a list and freed in turn
        packed_sorted = sorted(part)
        del part
        keys = [packed >> doc_bits for packed in packed_sorted]
        postings: dict[int, list[int]] = {}
        # Positions whose n-gram equals the previous one's; most n-grams are in one document's prefix only.
        for k in itertools.compress(range(1, len(keys)), map(operator.eq, keys, itertools.islice(keys, 1, None))):
            postings.setdefault(keys[k], [packed_sorted[k - 1] & doc_mask]).append(packed_sorted[k] & doc_mask)
        for members in postings.values():
            for a, b in itertools.combinations(members, 2):
                # a == b when two n-grams of one document share their leading hash bits.
                if a == b or _find(parent, a) == _find(parent, b) or (a, b) in rejected:
                    continue
                # S3 = 2 |A ∩ B| / (|A| + |B|) >= t, in integers. The overlap is at most the smaller set, which
                # rules out pairs of very different lengths before any set is built.
                bound = num * (sizes[a] + sizes[b])
                if (
                    2 * min(sizes[a], sizes[b]) * den >= bound
                    and 2 * len(shingle_set(a) & shingle_set(b)) * den >= bound
                ):
                    _union(parent, a, b)
                else:
                    rejected.add((a, b))

    groups: dict[int, list[str]] = {}
    for i, doc_id in enumerate(ids):
        groups.setdefault(_find(parent, i), []).append(doc_id)
    return sorted(group for group in groups.values() if len(group) > 1)


def _digest(text: bytes) -> bytes:
    return hashlib.blake2b(text, digest_size=16).digest()


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving
        x = parent[x]
    return x


def _union(parent: list[int], x: int, y: int) -> None:
    # The smaller index (smaller doc id) becomes the root, so a group's root is its canonical member.
    rx, ry = _find(parent, x), _find(parent, y)
    if rx != ry:
        parent[max(rx, ry)] = min(rx, ry)
