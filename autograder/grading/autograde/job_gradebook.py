"""The private gradebook of each job: the course's assignments and this one student's own
rows, nobody else's.

The student's kernel can read its job folder (``../../../gradebook.db`` from the notebook),
so a copy of the whole course gradebook there would show every student's grades, comments
and names. ``nbgrader autograde`` needs only what generate_assignment wrote (assignments,
notebooks, cells) and the graded student's earlier submission, if any.
"""

import contextlib
import shutil
import sqlite3
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.grading.autograde.job_spec import GradeRows
from autograder.grading.course_root import AutogradeError, Course, shown_url

# The student's own rows for one assignment, parents before children, selected in the
# course gradebook (attached as "course"). Copied with their ids, so the job's gradebook
# holds that submission exactly as the course's does: an extension still counts toward
# lateness, and a manual grade still marks the regraded cell for review, as nbgrader does.
_SUBMISSION = (
    "SELECT s.id FROM course.submitted_assignment AS s JOIN course.assignment AS a"
    " ON s.assignment_id = a.id WHERE s.student_id = :student AND a.name = :assignment"
)
_NOTEBOOKS = f"SELECT id FROM course.submitted_notebook WHERE assignment_id IN ({_SUBMISSION})"
OWN_ROWS = (
    ("student", "id = :student"),
    ("submitted_assignment", f"id IN ({_SUBMISSION})"),
    ("submitted_notebook", f"id IN ({_NOTEBOOKS})"),
    ("grade", f"notebook_id IN ({_NOTEBOOKS})"),
    ("comment", f"notebook_id IN ({_NOTEBOOKS})"),
)


@contextlib.contextmanager
def quiet_gradebook() -> Iterator[None]:
    """Silence the SQLAlchemy autoflush warnings that nbgrader's add_submission raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield


def course_sqlite_file(course: Course) -> Path:
    """The course gradebook's sqlite file: the jobs' gradebooks are made from it with sqlite."""
    path = course.sqlite_file
    if path is None:
        raise AutogradeError(
            "parallel autograde copies rows with sqlite's backup and ATTACH; the course "
            f"gradebook {shown_url(course.db_url)} is not a sqlite file"
        )
    return path


def snapshot_gradebook(course: Course, target: Path) -> Path:
    """A consistent copy of the course gradebook without any student, for the jobs to copy.

    sqlite's backup copies it while formgrader may write; nbgrader's ``remove_student``
    removes each student with their submissions, grades and comments; VACUUM then rewrites
    the file so the removed rows do not linger in its free pages.
    """
    with contextlib.closing(sqlite3.connect(course_sqlite_file(course))) as source:
        with contextlib.closing(sqlite3.connect(target)) as copy:
            source.backup(copy)
    with quiet_gradebook(), Gradebook(f"sqlite:///{target}") as book:
        for student in [s.id for s in book.students]:
            book.remove_student(student)
    with contextlib.closing(sqlite3.connect(target)) as copy:
        copy.execute("VACUUM")
    return target


def add_own_rows(course: Course, job_gradebook: Path, assignment: str, student: str) -> None:
    """Copy the student's own rows for ``assignment`` from the course gradebook into a job's.

    A student not in the course gradebook yet gets none: nbgrader creates them, as it
    would in the course gradebook (``Autograde.create_student``).
    """
    names = {"student": student, "assignment": assignment}
    with contextlib.closing(sqlite3.connect(job_gradebook)) as db:
        db.execute("ATTACH DATABASE ? AS course", (str(course_sqlite_file(course)),))
        with db:  # one transaction
            for table, where in OWN_ROWS:
                db.execute(
                    f'INSERT INTO main."{table}" SELECT * FROM course."{table}" WHERE {where}',
                    names,
                )
        db.execute("DETACH DATABASE course")


def job_gradebook_bytes(course: Course, snapshot: Path, assignment: str, student: str) -> bytes:
    """A job's private gradebook, as bytes to ship: the snapshot plus the student's rows."""
    with tempfile.TemporaryDirectory(prefix="autograde-gradebook-") as folder:
        path = Path(folder) / "gradebook.db"
        shutil.copyfile(snapshot, path)
        add_own_rows(course, path, assignment, student)
        return path.read_bytes()


def read_grade_rows(db_url: str, assignment: str, student: str) -> GradeRows:
    """The automatic fields nbgrader wrote for one submission, as plain data."""
    with quiet_gradebook(), Gradebook(db_url) as book:
        submission = book.find_submission(assignment, student)
        penalties, grades, comments = {}, {}, {}
        for notebook in submission.notebooks:
            penalties[notebook.name] = notebook.late_submission_penalty
            for grade in notebook.grades:
                grades[notebook.name, grade.name] = (grade.auto_score, grade.needs_manual_grade)
            for comment in notebook.comments:
                comments[notebook.name, comment.name] = comment.auto_comment
        return GradeRows(submission.timestamp, penalties, grades, comments)
