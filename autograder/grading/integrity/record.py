"""The scan as a grading step: scan an assignment's submissions, keep the flags, maybe zero.

``integrity.json`` in the course root holds the flags of every assignment scanned so far
(the report reads it); scanning an assignment again replaces only that assignment's flags.
"""

from pathlib import Path

from autograder.grading.course_root import Course
from autograder.grading.integrity.flags import Flag, read_flags, write_flags
from autograder.grading.integrity.scan import scan_submissions
from autograder.grading.integrity.zeroing import zero_flagged_exercises
from autograder.grading.repo_paths import notebook_path

FLAGS_NAME = "integrity.json"


def record_flags(root: Path, assignment: str, flags: list[Flag]) -> Path:
    """Replace ``assignment``'s flags in ``root/integrity.json``; other assignments' stay."""
    path = root / FLAGS_NAME
    kept = [f for f in read_flags(path) if f.assignment != assignment] if path.exists() else []
    write_flags(kept + flags, path)
    return path


def scan_assignment(
    course: Course, assignment: str, zero: bool = False
) -> tuple[list[Flag], list[tuple[str, str, str]]]:
    """Scan every submission of ``assignment``, record the flags, zero them when asked.

    Submissions are compared with the course's release of the assignment (this repository's
    course/ when the course has none); zeroing writes the gradebook at ``course.db_url``.
    Returns the flags and the (student, assignment, test) grades set to 0.
    """
    release = course.release if (course.release / assignment).is_dir() else None
    flags = scan_submissions(course.submitted, assignment, release)
    record_flags(course.root, assignment, flags)
    zeroed = []
    if zero:
        source = notebook_path(course.source, assignment)
        zeroed = zero_flagged_exercises(course.db_url, flags, source)
    return flags, zeroed
