"""Bringing a finished job into the course: its automatic grades (or 0 on every cell when
nbgrader saved none), its autograded notebooks and its output. Only the main thread runs
this, so the course gradebook has one writer; each result is recorded once."""

import datetime as dt
import shutil

import nbformat
from nbgrader.api import Gradebook

from autograder.grading.course.course_root import Course
from autograder.grading.course.grading_status import Status
from autograder.grading.course.json_records import utc_now
from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.pipeline.autograde.intake.hand_in_time import (
    LONGEST,
    TIMESTAMP,
    read_timestamp,
)
from autograder.grading.pipeline.autograde.job.folder_files import write_files
from autograder.grading.pipeline.autograde.job.gradebook import quiet_gradebook
from autograder.grading.pipeline.autograde.job.spec import GradeRows, JobResult
from autograder.grading.pipeline.autograde.log import GradingRecord
from autograder.grading.pipeline.integrity.flags import Flag
from autograder.grading.pipeline.integrity.record import record_runtime_flags
from autograder.grading.pipeline.integrity.runtime_record import in_run_order, runtime_flags
from autograder.grading.pipeline.integrity.scan import with_metadata

OUTPUT_LOGS = "autograde_logs"  # full nbgrader output of each job: root/autograde_logs/A/S.txt


def copy_auto_grades(rows: GradeRows, course: Course, assignment: str, student: str) -> None:
    """Copy what ``nbgrader autograde`` wrote for one submission into the course gradebook.

    Only the automatic fields: a manual grade given in formgrader meanwhile is kept, and so
    are the student's name and email (the student is created only if missing).
    """
    with quiet_gradebook(), Gradebook(course.db_url) as book:
        book.update_or_create_student(student)
        submission = book.update_or_create_submission(assignment, student)
        submission.timestamp = rows.timestamp
        for notebook, penalty in rows.penalties.items():
            target = book.find_submission_notebook(notebook, assignment, student)
            target.late_submission_penalty = penalty
        for (notebook, name), (score, needs_manual) in rows.grades.items():
            into = book.find_grade(name, notebook, assignment, student)
            into.auto_score = score
            into.needs_manual_grade = needs_manual
        for (notebook, name), text in rows.comments.items():
            into = book.find_comment(name, notebook, assignment, student)
            into.auto_comment = text
        book.db.commit()


def submission_timestamp(course: Course, assignment: str, student: str) -> dt.datetime | None:
    """The submission's timestamp.txt, as grading reads it (None without a readable one)."""
    path = course.submitted / student / assignment / TIMESTAMP
    if not path.is_file():
        return None
    with path.open("rb") as handle:  # a bounded read: the file is the student's
        return read_timestamp(handle.read(LONGEST + 1))


def record_zero_grades(course: Course, assignment: str, student: str) -> None:
    """Put an ungraded submission in the gradebook with 0 on every cell, flagged for review."""
    with quiet_gradebook(), Gradebook(course.db_url) as book:
        book.update_or_create_student(student)
        submission = book.update_or_create_submission(assignment, student)
        timestamp = submission_timestamp(course, assignment, student)
        if timestamp is not None:
            submission.timestamp = timestamp
        for notebook in submission.notebooks:
            notebook.flagged = True
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        book.db.commit()


def install_autograded(course: Course, result: JobResult) -> None:
    """Replace the course's autograded/S/A with the job's (or remove it, if none was made)."""
    job = result.job
    target = course.autograded / job.student / job.assignment
    if target.exists():
        shutil.rmtree(target)
    if result.grades_saved and result.autograded:
        write_files(target, result.autograded)


def keep_output(course: Course, result: JobResult) -> None:
    """Save nbgrader's output of the job for the instructor: autograde_logs/A/S.txt."""
    folder = course.root / OUTPUT_LOGS / result.job.assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{result.job.student}.txt").write_text(result.output)


def release_notebook(course: Course, assignment: str) -> nbformat.NotebookNode | None:
    """What the students were given: the course's release (None when it has none)."""
    path = notebook_path(course.release, assignment)
    return nbformat.read(path, as_version=4) if path.is_file() else None


def job_runtime_flags(course: Course, result: JobResult) -> list[Flag]:
    """The runtime record's flags of a finished job, charged to the autograded notebook's
    student cells; when nbgrader saved none (a dead or killed kernel), to the submitted
    notebook's, counted in the order nbclient runs them."""
    job = result.job
    if result.runtime is None:
        return []
    release = release_notebook(course, job.assignment)
    notebooks = [
        (nbformat.reads(data.decode(), as_version=4), True)
        for name, data in sorted(result.autograded.items())
        if name.endswith(".ipynb") and "/" not in name
    ]
    if not notebooks:
        submitted = sorted((course.submitted / job.student / job.assignment).glob("*.ipynb"))
        # As graded: with the metadata an editor stripped put back (checked before grading).
        notebooks = [
            (in_run_order(with_metadata(nbformat.read(path, as_version=4), release)), False)
            for path in submitted
        ]
    flags = []
    for notebook, complete in notebooks:
        flags += runtime_flags(
            result.runtime, notebook, release, job.student, job.assignment, complete
        )
    return flags


def finish_job(course: Course, result: JobResult) -> GradingRecord:
    """Bring one finished job into the course; its record for the log."""
    job = result.job
    status, message = result.status, result.message
    try:
        if result.grades is not None:
            copy_auto_grades(result.grades, course, job.assignment, job.student)
        else:
            record_zero_grades(course, job.assignment, job.student)
        install_autograded(course, result)
        keep_output(course, result)
        flags = job_runtime_flags(course, result)
        record_runtime_flags(course.root, job.assignment, job.student, flags)
    except Exception as error:  # one broken job must not stop the run
        status, message = Status.ERROR, f"could not record the grades: {error!r}"
    return GradingRecord(
        student=job.student,
        assignment=job.assignment,
        status=status,
        seconds=round(result.seconds, 2),
        seed=job.seed,
        message=message,
        finished_at=utc_now(),
    )
