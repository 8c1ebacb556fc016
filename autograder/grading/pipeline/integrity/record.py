"""The scan as a grading step: scan an assignment's submissions, keep the flags, maybe zero.

``integrity.json`` in the course root holds the flags of every assignment scanned so far
(the report reads it); scanning an assignment again replaces only that assignment's flags.
The runtime record's flags (rules ``runtime-*``) are written there as each job is graded,
replacing that student's earlier ones, and a scan keeps them and zeroes with them too.
"""

import sys
from pathlib import Path

from autograder.grading.course.course_root import FLAGS_NAME, Course
from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.pipeline.integrity.flags import (
    RUNTIME_PREFIX,
    Flag,
    read_flags,
    write_flags,
)
from autograder.grading.pipeline.integrity.scan import scan_submissions
from autograder.grading.pipeline.integrity.zeroing import zero_flagged_exercises


def stored_flags(root: Path) -> list[Flag]:
    """Every flag in ``root/integrity.json`` ([] when there is none)."""
    path = root / FLAGS_NAME
    return read_flags(path) if path.exists() else []


def runtime_flags_of(root: Path, assignment: str) -> list[Flag]:
    """The runtime record's flags of ``assignment`` kept in ``root/integrity.json``."""
    return [
        f
        for f in stored_flags(root)
        if f.assignment == assignment and f.rule.startswith(RUNTIME_PREFIX)
    ]


def record_flags(root: Path, assignment: str, flags: list[Flag]) -> Path:
    """Replace ``assignment``'s scan flags in ``root/integrity.json``; other assignments'
    flags and the runtime record's stay."""
    path = root / FLAGS_NAME
    kept = [
        f
        for f in stored_flags(root)
        if f.assignment != assignment or f.rule.startswith(RUNTIME_PREFIX)
    ]
    write_flags(kept + [f for f in flags if not f.rule.startswith(RUNTIME_PREFIX)], path)
    return path


def record_runtime_flags(root: Path, assignment: str, student: str, flags: list[Flag]) -> Path:
    """Replace one student's runtime flags of ``assignment`` (written as each job finishes)."""
    path = root / FLAGS_NAME
    kept = [
        f
        for f in stored_flags(root)
        if not (
            f.assignment == assignment
            and f.student == student
            and f.rule.startswith(RUNTIME_PREFIX)
        )
    ]
    write_flags(kept + flags, path)
    return path


def scan_assignment(
    course: Course, assignment: str, zero: bool = False
) -> tuple[list[Flag], list[tuple[str, str, str]]]:
    """Scan every submission of ``assignment``, record the flags, zero them when asked.

    Submissions are compared with the course's release of the assignment; a course without
    one is not scanned (against no release the course's own given cells would be taken for
    the student's) and a warning says so. Zeroing writes the gradebook at ``course.db_url``.
    Returns the flags (the scan's, then the runtime record's) and the (student, assignment,
    test) grades set to 0.
    """
    if notebook_path(course.release, assignment).is_file():
        flags = scan_submissions(course.submitted, assignment, course.release)
    else:
        print(
            f"warning: integrity scan of {assignment} skipped: the course has no release of "
            f"it ({notebook_path(course.release, assignment)}); generate it "
            f"(nbgrader generate_assignment {assignment}) and run the scan again",
            file=sys.stderr,
        )
        flags = []
    record_flags(course.root, assignment, flags)
    flags += runtime_flags_of(course.root, assignment)
    zeroed = []
    if zero:
        source = notebook_path(course.source, assignment)
        zeroed = zero_flagged_exercises(course.db_url, flags, source)
    return flags, zeroed
