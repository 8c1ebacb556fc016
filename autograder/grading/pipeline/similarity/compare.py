"""Pairwise similarity: winnowed fingerprints of tokens (copydetect), and expression shapes.

copydetect's tokenizer turns every identifier into one letter and drops comments and
whitespace before hashing k-grams, so renaming variables, rewriting comments or moving
blank lines changes no fingerprint; fingerprints are compared as sets, so reordering
independent definitions moves matches but does not lose them. Fingerprints that occur in
the boilerplate (the release's cells) are removed first, and between two students also
those of the reference solution: code the text leads everyone to write is no evidence.
Reordered statements and swapped constructs (a loop for a comprehension) break token runs;
the shapes of the expressions inside survive them (``structure``), scored the same way.
A pair is flagged on either measure.
"""

import hashlib
import io
from collections import Counter
from dataclasses import dataclass, replace
from itertools import combinations

import copydetect.utils
import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import get_token_coverage

from autograder.grading.pipeline.similarity.extract import Document
from autograder.grading.pipeline.similarity.settings import Settings
from autograder.grading.pipeline.similarity.structure import shapes, structure_score, without


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
    structure: float = 0.0  # the larger side's share of its expression shapes in the other
    shared_shapes: int = 0
    in_reference: float = 0.0  # of the code the two share, the share the reference holds too

    def flagged(self, settings: Settings) -> bool:
        """Evidence for a person to read: a high score over enough shared code, on tokens,
        or between two students on expression shapes (against the reference, shapes are
        what the text leads every honest student to)."""
        tokens = self.score >= settings.threshold and self.overlap >= settings.min_overlap
        shapes = (
            self.kind != "reference"
            and self.structure >= settings.structure_threshold
            and self.shared_shapes >= settings.min_shapes
        )
        return tokens or shapes

    @property
    def rank(self) -> float:
        """What orders pairs: the higher of the two scores."""
        return max(self.score, self.structure)


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
) -> Pair:
    """The pair's score from its fingerprint sets alone: each side's share found in the other.

    Counting shared winnowed fingerprints is the measure MOSS reports, and costs a set
    intersection, so every pair of a cohort of hundreds gets one; where the shared code
    lies is worked out afterwards for the highest pairs only (``locate``).
    """
    (doc_a, print_a), (doc_b, print_b) = first, second
    shared = len(print_a.hashes & print_b.hashes)
    share_a = shared / len(print_a.hashes) if print_a.hashes else 0.0
    share_b = shared / len(print_b.hashes) if print_b.hashes else 0.0
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
    given: list[str] | None = None,
) -> list[Pair]:
    """Every student against every other, the reference and every archived submission.

    ``given``: the release's code cells (their expression shapes are no evidence).
    Pairs scoring under ``settings.floor`` on both measures are left out; the rest come
    highest first, the first ``settings.detail`` (by the quick scores) located and scored
    exactly; the rest keep the quick score and no regions (flagged on shapes alone).
    """
    common = boilerplate_hashes(boilerplate, settings)
    taught = common | (boilerplate_hashes(reference.text, settings) if reference else set())
    others = [*archives] if reference is None else [reference, *archives]
    everyone = [*cohort, *others]
    # Against the reference: the release left out; between students: the reference too.
    plain = {d.author: (d, fingerprint(d, settings, common)) for d in everyone}
    between = {d.author: (d, fingerprint(d, settings, taught)) for d in cohort + archives}
    handed = shapes(given or [])
    reference_shapes = without(shapes(reference.sources), handed) if reference else Counter()
    bags = {d.author: without(shapes(d.sources), handed) for d in everyone}
    students_only = {d.author: without(bags[d.author], reference_shapes) for d in cohort + archives}

    def measured(a: Document, b: Document) -> Pair:
        prints = plain if b.origin == "reference" else between
        pair = quick_pair(prints[a.author], prints[b.author])
        kept = bags if b.origin == "reference" else students_only
        structure, shared_shapes = structure_score(kept[a.author], kept[b.author])
        return replace(pair, structure=structure, shared_shapes=shared_shapes)

    only_reference = taught - common

    def with_reference_share(pair: Pair) -> Pair:
        shared = plain[pair.a][1].hashes & plain[pair.b][1].hashes
        share = len(shared & only_reference) / len(shared) if shared else 0.0
        return replace(pair, in_reference=share)

    found = [measured(x, y) for x, y in combinations(cohort, 2)]
    found += [measured(x, y) for x in cohort for y in others]
    pairs = [with_reference_share(p) for p in found if p.rank >= settings.floor]
    pairs.sort(key=lambda p: (-p.rank, p.a, p.b))
    located = [
        locate(pair, plain if pair.kind == "reference" else between)
        for pair in pairs[: settings.detail]
    ]
    located.sort(key=lambda p: (-p.rank, -p.overlap, p.a, p.b))
    return located + pairs[settings.detail :]
