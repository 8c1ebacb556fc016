"""Which submissions a run grades: named students always; otherwise all but those graded
cleanly before (in the log and the gradebook) and unchanged on disk since, unless forced."""

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.checks.seed import student_seed
from autograder.grading.course.course_root import AutogradeError, Course, handed_in
from autograder.grading.course.grading_status import Status
from autograder.grading.course.json_records import utc_now
from autograder.grading.pipeline.autograde.log import (
    GradingRecord,
    latest_records,
    read_log_json,
)


def newest_change(folder: Path) -> float:
    """Latest modification time of ``folder`` and anything under it (epoch seconds)."""
    times = [folder.stat().st_mtime]
    times += [p.stat().st_mtime for p in folder.rglob("*")]
    return max(times)


@dataclass(frozen=True)
class Lateness:
    """What a hand-in's lateness is judged by now: the assignment's due date in the gradebook
    (None: nothing can be late), each student's extension there, and the late policy."""

    due: dt.datetime | None = None
    extensions: dict[str, dt.timedelta | None] = field(default_factory=dict)
    policy: str = ""

    def of(self, student: str) -> str:
        """``student``'s inputs as the log keeps them ("" when there is no due date)."""
        if self.due is None:
            return ""
        extension = self.extensions.get(student)
        return f"due {self.due.isoformat()}; extension {extension}; {self.policy}"


def late_inputs(course: Course, assignment: str, policy: str) -> Lateness:
    """The due date and extensions of ``assignment`` in the gradebook, with ``policy``."""
    with Gradebook(course.db_url) as gradebook:
        try:
            due = gradebook.find_assignment(assignment).duedate
        except MissingEntry:
            return Lateness()
        given = {s.student_id: s.extension for s in gradebook.assignment_submissions(assignment)}
    return Lateness(due, given, policy)


def already_graded(
    course: Course, assignment: str, student: str, log: dict, lateness: Lateness
) -> bool:
    """Graded cleanly before, in the log and the gradebook, unchanged on disk since, and
    with its lateness judged by the due date, extension and policy of now."""
    record = log.get((student, assignment))
    if record is None or record.get("status") != Status.GRADED:
        return False
    if record.get("late_inputs", "") != lateness.of(student):
        return False
    finished = dt.datetime.fromisoformat(record["finished_at"]).timestamp()
    if newest_change(course.submitted / student / assignment) > finished:
        return False
    with Gradebook(course.db_url) as gradebook:
        try:
            gradebook.find_submission(assignment, student)
        except MissingEntry:
            return False
    return True


def plan(
    course: Course,
    assignment: str,
    students: list[str] | None,
    force: bool,
    lateness: Lateness,
) -> tuple[list[str], list[str], dict[str, str]]:
    """(students to grade, students skipped as already graded, {student: why nbgrader
    cannot grade them} for hand-ins whose folder name it cannot take).

    Named students are always graded; otherwise those graded cleanly and unchanged since
    are skipped unless ``force`` (``lateness``: ``late_inputs`` of now).
    """
    gradable, refused = handed_in(course, assignment)
    if students is not None:
        missing = sorted(set(students) - set(gradable) - set(refused))
        if missing:
            raise AutogradeError(f"no submission of {assignment} by {missing}")
        named = set(students)
        chosen = {s: why for s, why in refused.items() if s in named}
        return sorted(named - set(refused)), [], chosen
    if force:
        return gradable, [], refused
    log = latest_records(read_log_json(course.root))
    skipped = [s for s in gradable if already_graded(course, assignment, s, log, lateness)]
    return [s for s in gradable if s not in skipped], skipped, refused


def refused_record(student: str, assignment: str, salt: str, why: str) -> GradingRecord:
    """The record of a hand-in nbgrader cannot grade under its folder's name (logged)."""
    return GradingRecord(
        student=student,
        assignment=assignment,
        status=Status.BAD_ID,
        seconds=0.0,
        seed=student_seed(student, assignment, salt),
        message=why,
        finished_at=utc_now(),
    )


def skipped_record(student: str, assignment: str, salt: str) -> GradingRecord:
    """The record of a submission skipped as already graded (returned, never logged)."""
    return GradingRecord(
        student=student,
        assignment=assignment,
        status=Status.SKIPPED,
        seconds=0.0,
        seed=student_seed(student, assignment, salt),
        message="already graded and unchanged since (force=True regrades)",
        finished_at=utc_now(),
    )
