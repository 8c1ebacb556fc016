"""Pairwise similarity with copydetect: winnowed fingerprints of pygments tokens.

copydetect's tokenizer turns every identifier into one letter and drops comments and
whitespace before hashing k-grams, so renaming variables, rewriting comments or moving
blank lines changes no fingerprint; fingerprints are compared as sets, so reordering
independent definitions moves matches but does not lose them. Fingerprints that occur in
the boilerplate (the release's cells) are removed first.
"""

import hashlib
import io
from dataclasses import dataclass, replace
from itertools import combinations

import copydetect.utils
import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import get_token_coverage

from autograder.grading.pipeline.similarity.extract import Document
from autograder.grading.pipeline.similarity.settings import Settings


@dataclass(frozen=True)
class Region:
    """One stretch of shared code in one document."""

    cell: str
    first_line: int
    last_line: int
    start: int  # character offsets in the document's text
    end: int


@dataclass(frozen=True)
class Pair:
    """Two authors' similarity: scores per side, and where their shared code is."""

    a: str
    b: str
    kind: str  # "cohort", "reference" or "archive": where b comes from
    score: float  # the larger side's share of its own code found in the other
    overlap: int  # shared code, in filtered characters (names count one each)
    share_a: float
    share_b: float
    regions_a: tuple[Region, ...]
    regions_b: tuple[Region, ...]

    def flagged(self, settings: Settings) -> bool:
        """Evidence for a person to read: high score over enough shared code."""
        return self.score >= settings.threshold and self.overlap >= settings.min_overlap


def stable_kgram_hashes(text: str, k: int) -> np.ndarray:
    """The hash of every k-gram of ``text``, the same in every process.

    copydetect hashes k-grams with Python's ``hash()``, salted per process: winnowing then
    keeps other fingerprints in every run and a score moves by a point or two, across a
    threshold. A keyed-free BLAKE2b of the k-gram makes a run's scores repeatable.
    """
    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(text[i : i + k].encode(), digest_size=8).digest(),
                "little",
                signed=True,
            )
            for i in range(len(text) - k + 1)
        ],
        dtype=np.int64,
    )


# copydetect's fingerprinting looks the function up in its module at each call.
copydetect.utils.hashed_kgrams = stable_kgram_hashes


def fingerprint(document: Document, settings: Settings, boilerplate: set[int]) -> CodeFingerprint:
    """copydetect's fingerprint of a document, less every boilerplate fingerprint.

    The boilerplate is taken out here rather than through copydetect's ``boilerplate``
    argument, whose array intersection assumes unique hashes and can keep a repeated one.
    """
    window = settings.guarantee - settings.noise + 1
    print_ = CodeFingerprint(
        f"{document.author}.py",
        settings.noise,
        window,
        fp=io.StringIO(document.text),
        language="python",
    )
    shared = print_.hashes & boilerplate
    if shared:
        print_.hashes -= shared
        for value in shared:
            print_.hash_idx.pop(value, None)
        print_.token_coverage = get_token_coverage(
            print_.hash_idx, print_.k, len(print_.filtered_code)
        )
    return print_


def boilerplate_hashes(text: str, settings: Settings) -> set[int]:
    """Every k-gram hash of the boilerplate (no winnowing: none of it may count)."""
    window = 1
    print_ = CodeFingerprint(
        "boilerplate.py", settings.noise, window, fp=io.StringIO(text), language="python"
    )
    return set(print_.hashes)


def regions(document: Document, slices: np.ndarray) -> tuple[Region, ...]:
    """copydetect's slices (starts; ends) as regions, split where a cell ends."""
    found = []
    for start, end in zip(*(np.asarray(s, dtype=int) for s in slices), strict=True):
        start, end = int(start), min(int(end), len(document.text))
        while start < end:
            cell, first = document.origin_of(start)
            stop = start
            # Extend line by line while the next line is still in the same cell.
            while stop < end:
                newline = document.text.find("\n", stop, end)
                if newline < 0:
                    stop = end
                    break
                if newline + 1 < end and document.origin_of(newline + 1)[0] != cell:
                    stop = newline + 1
                    break
                stop = newline + 1
            _, last = document.origin_of(max(start, stop - 1))
            found.append(Region(cell, first, max(first, last), start, stop))
            start = stop
    return tuple(found)


def quick_pair(
    first: tuple[Document, CodeFingerprint], second: tuple[Document, CodeFingerprint]
) -> Pair | None:
    """The pair's score from its fingerprint sets alone: each side's share found in the other.

    Counting shared winnowed fingerprints is the measure MOSS reports, and costs a set
    intersection, so every pair of a cohort of hundreds gets one; where the shared code
    lies is worked out afterwards for the highest pairs only (``locate``).
    """
    (doc_a, print_a), (doc_b, print_b) = first, second
    shared = len(print_a.hashes & print_b.hashes)
    if not shared:  # most honest pairs
        return None
    share_a, share_b = shared / len(print_a.hashes), shared / len(print_b.hashes)
    return Pair(
        a=doc_a.author,
        b=doc_b.author,
        kind=doc_b.origin,
        score=max(share_a, share_b),
        overlap=0,
        share_a=share_a,
        share_b=share_b,
        regions_a=(),
        regions_b=(),
    )


def locate(pair: Pair, prints: dict[str, tuple[Document, CodeFingerprint]]) -> Pair:
    """``pair`` scored by copydetect (each side's share of its tokens covered by shared
    code), with the shared code's length and regions, named by cell and line."""
    (doc_a, print_a), (doc_b, print_b) = prints[pair.a], prints[pair.b]
    overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(print_a, print_b)
    return replace(
        pair,
        score=float(max(share_a, share_b)),
        share_a=float(share_a),
        share_b=float(share_b),
        overlap=int(overlap),
        regions_a=regions(doc_a, slices_a) if overlap else (),
        regions_b=regions(doc_b, slices_b) if overlap else (),
    )


def compare_all(
    cohort: list[Document],
    reference: Document | None,
    archives: list[Document],
    boilerplate: str,
    settings: Settings,
) -> list[Pair]:
    """Every student against every other, the reference and every archived submission.

    Pairs scoring under ``settings.floor`` are left out; the rest come highest score
    first, the first ``settings.detail`` (by the quick score) located and scored exactly;
    the rest keep the quick score and no regions (never flagged: no overlap measured).
    """
    common = boilerplate_hashes(boilerplate, settings)
    others = [*archives] if reference is None else [reference, *archives]
    prints = {d.author: (d, fingerprint(d, settings, common)) for d in [*cohort, *others]}
    students = [prints[d.author] for d in cohort]
    targets = [prints[d.author] for d in others]
    found = [quick_pair(x, y) for x, y in combinations(students, 2)]
    found += [quick_pair(x, y) for x in students for y in targets]
    pairs = [p for p in found if p is not None and p.score >= settings.floor]
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    located = [locate(pair, prints) for pair in pairs[: settings.detail]]
    located.sort(key=lambda p: (-p.score, -p.overlap, p.a, p.b))
    return located + pairs[settings.detail :]
