"""``autograd-course similarity``: copied code found, each submission against the cohort,
the reference and earlier cohorts; evidence for a person, no grade changed."""

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading.cli.common import (
    UsageError,
    add_command,
    add_root,
    course_at,
    fraction,
    positive,
)

if TYPE_CHECKING:
    from autograder.grading.pipeline.similarity.settings import Settings

EXAMPLES = """
autograd-course similarity 01-worked-example --root ~/course
autograd-course similarity 01-worked-example --root ~/course --against ~/2026/submitted
"""


def add(commands) -> None:
    """The similarity command's parser; its defaults are the comparison's Settings."""
    from autograder.grading.pipeline.similarity.settings import Settings

    defaults = Settings()
    similarity = add_command(
        commands,
        "similarity",
        EXAMPLES,
        help="find copied code: each submission against the cohort, the reference and archives",
        description="Compare what each student wrote in the solution cells (not the given "
        "code) with every other student, the reference solution and earlier cohorts' "
        "submissions, with copydetect's winnowing over normalised tokens (renamed "
        "identifiers, comments and blank lines change nothing). Writes "
        "ROOT/similarity/ASSIGNMENT/pairs.json and report.html. Evidence for a person: no "
        "grade is changed.",
    )
    similarity.add_argument("assignment", help="assignment id")
    add_root(similarity)
    similarity.add_argument(
        "--against",
        action="append",
        type=Path,
        metavar="DIR",
        help="an earlier cohort's submissions, laid out as submitted/ (repeatable)",
    )
    _add_knobs(similarity, defaults)
    similarity.set_defaults(run=run)


def _add_knobs(similarity: argparse.ArgumentParser, defaults: "Settings") -> None:
    """The comparison's thresholds and sizes, each defaulting to Settings'."""
    similarity.add_argument(
        "--threshold",
        type=fraction,
        default=defaults.threshold,
        help=f"flag a pair whose score (share of one side's code found in the other) "
        f"reaches this (default {defaults.threshold})",
    )
    similarity.add_argument(
        "--min-overlap",
        type=int,
        default=defaults.min_overlap,
        metavar="N",
        help="...and that shares at least N characters of normalised code, so agreeing "
        f"on a two-line answer is never flagged (default {defaults.min_overlap})",
    )
    similarity.add_argument(
        "--structure-threshold",
        type=float,
        default=defaults.structure_threshold,
        metavar="S",
        help="also flag two students whose expression shapes (every name the same; order "
        f"and loop or comprehension do not matter) score S or more (default "
        f"{defaults.structure_threshold})",
    )
    similarity.add_argument(
        "--min-shapes",
        type=int,
        default=defaults.min_shapes,
        metavar="N",
        help=f"...over at least N shared expression shapes (default {defaults.min_shapes})",
    )
    similarity.add_argument(
        "--top",
        type=positive,
        default=defaults.top,
        metavar="N",
        help=f"pairs shown side by side in report.html (default {defaults.top})",
    )
    similarity.add_argument(
        "--detail",
        type=positive,
        default=defaults.detail,
        metavar="N",
        help="locate the shared code of the N highest pairs (copydetect's exact score); the "
        f"others keep a quick fingerprint count and are never flagged (default {defaults.detail})",
    )
    similarity.add_argument(
        "--noise",
        type=positive,
        default=defaults.noise,
        metavar="K",
        help=f"shortest match that counts, in normalised characters (default {defaults.noise})",
    )
    similarity.add_argument(
        "--guarantee",
        type=positive,
        default=defaults.guarantee,
        metavar="G",
        help=f"a match this long is always found (default {defaults.guarantee})",
    )


def run(args: argparse.Namespace) -> int:
    """Compare the cohort's submissions; print the flagged pairs and the files written."""
    from autograder.grading.pipeline.similarity.run import SimilarityError, run_similarity
    from autograder.grading.pipeline.similarity.settings import Settings

    course = course_at(args.root)
    settings = Settings(
        noise=args.noise,
        guarantee=max(args.guarantee, args.noise),
        threshold=args.threshold,
        min_overlap=args.min_overlap,
        structure_threshold=args.structure_threshold,
        min_shapes=args.min_shapes,
        top=args.top,
        detail=max(args.detail, args.top),
    )
    try:
        run = run_similarity(course, args.assignment, args.against or [], settings)
    except SimilarityError as error:
        raise UsageError(str(error)) from None
    for skipped in run.skipped:
        print(f"  skipped {skipped.author}: {skipped.reason}")
    if note := run.alone_note():
        print(f"  note: {note}")
    flagged = [pair for pair in run.pairs if pair.flagged(settings)]
    for pair in flagged:
        print(
            f"  {pair.a} ~ {pair.b} ({pair.kind}): {pair.score:.2f}, structure {pair.structure:.2f}"
        )
    print(
        f"{args.assignment}: {len(flagged)} flagged pairs of {len(run.pairs)} that share code "
        f"(evidence for a person; no grade changed): {', '.join(map(str, run.written))}"
    )
    return 0
