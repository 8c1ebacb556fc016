"""The term in nbgrader's gradebook: due dates copied from term.toml, extensions granted.

nbgrader computes lateness from the gradebook (an assignment's ``duedate``, a submission's
``extension``), so the due dates of ``term.toml``, their one place, are written there
before every grading; extensions are nbgrader's own (``grant_extension``), kept only there.
"""

import math
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from autograder.grading.course.course_root import AutogradeError, Course
from autograder.grading.course.term import Term, read_term


LONGEST_HOURS = 24 * 366  # an extension past a year is a typo (or a term of its own)


def course_term(course: Course) -> Term:
    """The term of the course root (its term.toml, its gradebook's extensions)."""
    known = sorted(p.name for p in course.source.iterdir() if p.is_dir())
    return read_term(course.root / "term.toml", known, course.sqlite_file)


def utc_naive(moment: datetime) -> datetime:
    """An aware time as nbgrader stores it: UTC, without a zone."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def write_due_dates(course: Course, term: Term) -> list[str]:
    """Put each assignment's due date from ``term`` into the gradebook (none where the term
    gives none); one line per change."""
    changed = []
    with Gradebook(course.db_url) as book:
        for assignment in book.assignments:
            due = term.due.get(assignment.name)
            wanted = utc_naive(due) if due else None
            if assignment.duedate != wanted:
                changed.append(f"{assignment.name}: due date {assignment.duedate} -> {wanted} UTC")
                assignment.duedate = wanted
        book.db.commit()
    return changed


@dataclass(frozen=True)
class Extension:
    """A student's extension on an assignment, and until when it runs."""

    assignment: str
    student: str
    hours: float
    until: datetime


def known_students(course: Course, assignment: str) -> set[str]:
    """The gradebook's students and those with a hand-in of ``assignment``."""
    with Gradebook(course.db_url) as book:
        names = {student.id for student in book.students}
    handed_in = course.submitted.glob(f"*/{assignment}")
    return names | {path.parent.name for path in handed_in if path.is_dir()}


def grant(
    course: Course, assignment: str, student: str, hours: float | None, until: datetime | None
) -> Extension:
    """Give ``student`` ``hours`` past the due date of ``assignment`` (or until ``until``;
    0 hours takes an extension back) in nbgrader's gradebook; refuse an unknown student or
    assignment, or one without a due date, with nothing written."""
    term = course_term(course)
    due = term.due.get(assignment)
    if due is None:
        raise AutogradeError(
            f"{assignment} has no due date in {course.root / 'term.toml'}: give it one first"
        )
    if student not in known_students(course, assignment):
        raise AutogradeError(
            f"unknown student {student!r}: not in the gradebook and no hand-in of {assignment}"
        )
    if until is not None:
        hours = (until - due) / timedelta(hours=1)
    if hours is None or not math.isfinite(hours) or hours < 0:
        raise AutogradeError(f"an extension must end after the due date ({due:%Y-%m-%d %H:%M %Z})")
    if hours > LONGEST_HOURS:
        raise AutogradeError(f"an extension of {hours:g} h is longer than a year: not a term's")
    with Gradebook(course.db_url) as book:
        try:
            book.find_assignment(assignment)
        except MissingEntry:
            raise AutogradeError(
                f"{assignment} is not in the gradebook: run nbgrader generate_assignment first"
            ) from None
        book.update_or_create_student(student)
        with warnings.catch_warnings():  # nbgrader's autoflush warnings on a new submission
            warnings.simplefilter("ignore", SAWarning)
            book.update_or_create_submission(assignment, student)
        book.grant_extension(assignment, student, minutes=round(hours * 60))
    return Extension(assignment, student, hours, due + timedelta(hours=hours))
