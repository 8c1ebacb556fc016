"""Which submissions were being graded when a run died: a marker per job, written when the
job is handed to a worker and removed when its result is recorded.

A kernel can kill or stop the grading process itself (without a sandbox it runs as the same
user). Every finished job is recorded as it finishes, so nothing recorded is lost; the
markers left behind say whose jobs were in flight. The next run grades those first, one at
a time, so a submission that kills the grader again is the only one in flight: after a
second such death it is recorded as an error with 0 on every cell instead of being graded
a third time, and the run goes on with everyone else.
"""

from pathlib import Path

from autograder.grading.course.course_root import Course

FOLDER = "in-flight"  # under autograde_logs/ASSIGNMENT/, with nbgrader's output per job
DEATHS_BEFORE_GIVING_UP = 2


def marker(course: Course, assignment: str, student: str) -> Path:
    """The job's marker file."""
    return course.root / "autograde_logs" / assignment / FOLDER / student


def deaths(course: Course, assignment: str, student: str) -> int:
    """How many runs died while grading this submission (0: none, or it was recorded)."""
    path = marker(course, assignment, student)
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def mark(course: Course, assignment: str, student: str) -> None:
    """The job is being handed to a worker: one more run in flight on it."""
    path = marker(course, assignment, student)
    count = deaths(course, assignment, student) + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{count}\n")


def restore(course: Course, assignment: str, student: str, count: int) -> None:
    """Put a marker back to ``count`` deaths (the run was interrupted by its user)."""
    if count:
        path = marker(course, assignment, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{count}\n")
    else:
        clear(course, assignment, student)


def clear(course: Course, assignment: str, student: str) -> None:
    """The job's result was recorded (or the run was interrupted by its user)."""
    path = marker(course, assignment, student)
    path.unlink(missing_ok=True)
    if path.parent.is_dir() and not any(path.parent.iterdir()):
        path.parent.rmdir()
