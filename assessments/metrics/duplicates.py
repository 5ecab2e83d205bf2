"""Group exact and near-duplicate documents, so that one judgment can stand for every copy in a pool.

Python and numpy, with no Django import: the grouping service (services.duplicates) passes a mapping of document
id -> plain text and stores each group's canonical member as ``PoolEntry.duplicate_of`` for the others.

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
import re
import unicodedata
from collections.abc import Mapping
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from assessments.metrics.union_find import find, union

# Unicode-aware: anything that is neither a word character nor whitespace.
_PUNCTUATION = re.compile(r"[^\w\s]+")
# The same rule for ASCII text as a table over bytes that also lowercases and turns every whitespace character into a
# space (bytes.split knows fewer of them than str.split): a third faster than str methods, four times faster than
# the regular expression, and most documents are ASCII.
_ASCII_FOLD = bytes(
    32 if _PUNCTUATION.match(chr(c)) or chr(c).isspace() else ord(chr(c).lower()) for c in range(128)
) + bytes(range(128, 256))

_MASK64 = (1 << 64) - 1


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
    verified again. The n-grams are hashed and sorted by numpy, a batch of documents at a time (`_distinct_ngrams`).
    The index holds packed 64-bit integers (the high bits of the n-gram hash, then the document number), so it costs
    8 bytes per indexed n-gram: about 25 MB for 100,000 documents of ~100 words, and under 100 MB for the whole
    call. Two different n-grams that agree in those high bits only add a candidate pair to verify.

    Worst case: boilerplate, i.e. an n-gram in the prefixes of very many documents that are not near-duplicates
    of each other, makes its posting list quadratic to verify. CopyCat counts co-occurrences over *all* 8-grams
    and has the same worst case; pass the documents' main text, not raw pages.

    Sizes and the index use 64-bit hashes of the n-grams, verification Python's hashes of the n-grams' words. A
    collision between two different n-grams (a few in a million for a pool of 100,000 documents) can change a size
    or an overlap by one, nothing worse.
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
    first_with_digest: dict[bytes, int] = {}
    batch: dict[int, bytes] = {}  # document -> its normalised text, until its batch is hashed
    sizes: dict[int, int] = {}
    index: list[np.ndarray] = []
    verified_sets: dict[int, set[int]] = {}

    def add_batch() -> None:
        grams = _distinct_ngrams(list(batch.values()), n)
        sizes.update(zip(batch, grams.sizes.tolist()))
        # S3 >= t and |A ∩ B| <= |B| give |A ∩ B| >= t |A| / (2 - t): the fewest n-grams A must share with a match.
        min_overlap = -(-num * grams.sizes // (2 * den - num))
        in_prefix = grams.rank < (grams.sizes - min_overlap + 1)[grams.doc]
        documents = np.fromiter(batch, dtype=np.uint64, count=len(batch))
        index.append((grams.hashes[in_prefix] & np.uint64(_MASK64 ^ doc_mask)) | documents[grams.doc[in_prefix]])
        batch.clear()

    def shingle_set(i: int) -> set[int]:
        # Only candidates are verified, a few per cent of the documents, one at a time: Python's tuple hashes of the
        # words themselves. Any hash does, as long as both sides of a comparison use the same one.
        if i not in verified_sets:
            words = normalise(docs[ids[i]]).split()
            verified_sets[i] = set(map(hash, zip(*(words[k:] for k in range(n)))))
        return verified_sets[i]

    batch_bytes = 0
    for i, doc_id in enumerate(ids):
        text = normalised_utf8(docs[doc_id])
        first = first_with_digest.setdefault(_digest(text), i)
        if first != i:
            union(parent, first, i)
            continue
        if not text or text.count(b" ") + 1 < n:
            continue  # no n-gram: exact duplicates only, as in CopyCat
        batch[i] = text
        batch_bytes += len(text)
        if batch_bytes >= _BATCH_BYTES:
            add_batch()
            batch_bytes = 0
    if batch:
        add_batch()

    packed = np.sort(np.concatenate(index)) if index else np.zeros(0, dtype=np.uint64)
    index.clear()
    keys = packed >> np.uint64(doc_bits)
    # Postings with two documents or more: runs of equal keys. Most n-grams are in one document's prefix only.
    shared = keys[1:] == keys[:-1]
    in_run = np.zeros(len(keys), dtype=bool)
    in_run[1:] |= shared
    in_run[:-1] |= shared
    run_keys, run_docs = keys[in_run], (packed[in_run] & np.uint64(doc_mask)).astype(np.int64)
    del packed, keys
    rejected: set[tuple[int, int]] = set()
    for members in np.split(run_docs, np.flatnonzero(run_keys[1:] != run_keys[:-1]) + 1):
        for a, b in itertools.combinations(members.tolist(), 2):
            # a == b when two n-grams of one document share their leading hash bits.
            if a == b or find(parent, a) == find(parent, b) or (a, b) in rejected:
                continue
            # S3 = 2 |A ∩ B| / (|A| + |B|) >= t, in integers. The overlap is at most the smaller set, which rules out
            # pairs of very different lengths before any set is built.
            bound = num * (sizes[a] + sizes[b])
            if 2 * min(sizes[a], sizes[b]) * den >= bound and 2 * len(shingle_set(a) & shingle_set(b)) * den >= bound:
                union(parent, a, b)
            else:
                rejected.add((a, b))

    groups: dict[int, list[str]] = {}
    for i, doc_id in enumerate(ids):
        groups.setdefault(find(parent, i), []).append(doc_id)
    return sorted(group for group in groups.values() if len(group) > 1)


_BATCH_BYTES = 1 << 22  # normalised text whose n-grams are hashed and sorted together (arrays of 32 MB at most)
# The multiplier of the polynomial hashes (of a word's bytes, of an n-gram's words), odd so that it has an inverse
# modulo 2**64, and the constants of SplitMix64's finaliser, which spreads a polynomial's values over all 64 bits, so
# that sorting by hash puts n-grams in a random order (what prefix filtering assumes).
_POLYNOMIAL = 0x9E3779B97F4A7C15
_INVERSE = pow(_POLYNOMIAL, -1, 1 << 64)
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


class _Ngrams(NamedTuple):
    """The distinct n-gram hashes of a batch of documents: sorted by document (its place in the batch), then hash."""

    hashes: np.ndarray  # uint64
    doc: np.ndarray  # each hash's document
    rank: np.ndarray  # each hash's place among its document's (0 = smallest)
    sizes: np.ndarray  # distinct n-grams per document


def _distinct_ngrams(texts: list[bytes], n: int) -> _Ngrams:
    """Hash every word n-gram of a batch of normalised texts at once, in numpy over the batch's bytes, then keep
    each document's distinct hashes in order. Nothing is done per word in Python: a word's hash is the polynomial
    of its bytes, read off prefix sums; an n-gram's is the polynomial of its words' hashes. Both depend on the text
    alone, so the work is the same in every process."""
    data = np.frombuffer(b" ".join(texts), dtype=np.uint8)
    # Prefix sums of byte * P**position (wrapping at 2**64): a word's polynomial, relative to its first byte, is the
    # difference of two of them times P**-start.
    power = np.full(len(data) + 1, _POLYNOMIAL, dtype=np.uint64)
    power[0] = 1
    power = np.cumprod(power)
    inverse = np.full(len(data), _INVERSE, dtype=np.uint64)
    inverse[0] = 1
    inverse = np.cumprod(inverse)
    prefix = np.zeros(len(data) + 1, dtype=np.uint64)
    np.cumsum((data.astype(np.uint64) + np.uint64(1)) * power[:-1], out=prefix[1:])
    space = np.flatnonzero(data == 32)  # every word is followed by one space or the end, and preceded by one or the start
    starts = np.concatenate(([0], space + 1))
    ends = np.concatenate((space, [len(data)]))
    words = _mixed((prefix[ends] - prefix[starts]) * inverse[starts])
    # Documents are joined by one space, so the word counts follow from each text's spaces.
    lengths = np.fromiter((text.count(b" ") + 1 for text in texts), dtype=np.int64, count=len(texts))
    count = len(words) - n + 1
    hashes = np.zeros(count, dtype=np.uint64)
    for k in range(n):
        hashes = hashes * np.uint64(_POLYNOMIAL) + words[k : k + count]
    hashes = _mixed(hashes)
    doc = np.repeat(np.arange(len(texts), dtype=np.uint64), lengths)[:count]
    first_word = np.cumsum(lengths) - lengths
    whole = np.arange(count) - first_word[doc] <= lengths[doc] - n
    # One sort of (document, hash) packed into 64 bits, four times faster than sorting by two keys: the document
    # takes the top bits, the hash's top bits follow. Two n-grams of one document that agree in those count as one:
    # a collision like any other, one in 10^11 for documents of a few hundred words.
    shift = np.uint64(max(1, (len(texts) - 1).bit_length()))
    keys = np.sort((doc[whole] << (np.uint64(64) - shift)) | (hashes[whole] >> shift))
    distinct = np.ones(len(keys), dtype=bool)
    distinct[1:] = keys[1:] != keys[:-1]
    keys = keys[distinct]
    doc = (keys >> (np.uint64(64) - shift)).astype(np.int64)
    sizes = np.bincount(doc, minlength=len(texts))
    rank = np.arange(len(keys)) - (np.cumsum(sizes) - sizes)[doc]
    return _Ngrams(keys << shift, doc, rank, sizes)


def _mixed(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, on a whole array."""
    values = values ^ (values >> np.uint64(30))
    values *= np.uint64(_MIX1)
    values ^= values >> np.uint64(27)
    values *= np.uint64(_MIX2)
    values ^= values >> np.uint64(31)
    return values


def _digest(text: bytes) -> bytes:
    return hashlib.blake2b(text, digest_size=16).digest()

