"""One similarity run: read a course's submissions, compare them, write the results."""

from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.course.course_root import Course
from autograder.grading.pipeline.similarity.compare import Pair, Settings, compare_all
from autograder.grading.pipeline.similarity.extract import (
    Document,
    Release,
    Skipped,
    reference_document,
    submission_document,
)
from autograder.grading.pipeline.similarity.report import write_results

OUT_NAME = "similarity"


class SimilarityError(ValueError):
    """Bad input for the whole run (unknown assignment, missing archive): one line, exit 2."""


@dataclass
class SimilarityRun:
    """What a run compared, skipped and found, and where it wrote it."""

    pairs: list[Pair]
    documents: dict[str, Document]
    skipped: list[Skipped] = field(default_factory=list)
    written: tuple[Path, ...] = ()

    def alone_note(self) -> str | None:
        """What a run with one comparable submission and no archive compared it with (only
        the reference solution), or None when students were compared with each other."""
        origins = [document.origin for document in self.documents.values()]
        if origins.count("cohort") != 1 or "archive" in origins:
            return None
        [student] = [d.author for d in self.documents.values() if d.origin == "cohort"]
        return (
            f"only one submission to compare ({student}): it was compared with the reference "
            "solution alone; pass --against with earlier years' submitted/ folders to compare "
            "it with them"
        )


def read_folder(
    folder: Path, assignment: str, origin: str, prefix: str, release: Release
) -> tuple[list[Document], list[Skipped]]:
    """Every ``<student>/<assignment>/`` of a submitted/-like folder, read or skipped."""
    documents, skipped = [], []
    for student in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        place = folder / student / assignment
        if not place.is_dir():
            continue  # a student of another assignment, or of none
        found = submission_document(prefix + student, origin, place, release)
        (documents if isinstance(found, Document) else skipped).append(found)
    return documents, skipped


def run_similarity(
    course: Course, assignment: str, against: list[Path], settings: Settings
) -> SimilarityRun:
    """Compare ``assignment``'s submissions; write ``ROOT/similarity/ASSIGNMENT/``."""
    source = course.source / assignment
    if not source.is_dir():
        raise SimilarityError(f"unknown assignment {assignment!r}: no {source}")
    missing = [str(folder) for folder in against if not folder.is_dir()]
    if missing:
        raise SimilarityError(f"--against folder not found: {', '.join(missing)}")
    if not course.submitted.is_dir():
        raise SimilarityError(f"no submissions: {course.submitted} is missing")
    release = Release(course.release / assignment, source)
    cohort, skipped = read_folder(course.submitted, assignment, "cohort", "", release)
    if not cohort and not skipped:
        raise SimilarityError(f"no submissions of {assignment} in {course.submitted}")
    archives: list[Document] = []
    for folder in against:
        # Archived students are named by their folder so two years' "alice" stay apart.
        found, _ = read_folder(folder, assignment, "archive", f"{folder.name}/", release)
        archives += found
    reference = reference_document(source)
    documents = {d.author: d for d in [*cohort, *archives, reference]}
    pairs = compare_all(cohort, reference, archives, release.boilerplate, settings, release.cells)
    out = course.root / OUT_NAME / assignment
    written = write_results(out, assignment, pairs, documents, skipped, settings)
    return SimilarityRun(pairs, documents, skipped, written)
