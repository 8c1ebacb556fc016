"""Bringing a finished job into the course: its automatic grades (or 0 on every cell when
nbgrader saved none), its autograded notebooks and its output. Only the main thread runs
this, so the course gradebook has one writer."""

import datetime as dt
import shutil

from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc

from autograder.grading.autograde.job_gradebook import quiet_gradebook
from autograder.grading.autograde.jobs import JobResult
from autograder.grading.autograde.log import GradingRecord, utc_now
from autograder.grading.course_root import Course

OUTPUT_LOGS = "autograde_logs"  # full nbgrader output of each job: root/autograde_logs/A/S.txt


def copy_auto_grades(job_db_url: str, course: Course, assignment: str, student: str) -> None:
    """Copy what ``nbgrader autograde`` wrote for one submission into the course gradebook.

    Only the automatic fields: a manual grade given in formgrader meanwhile is kept, and so
    are the student's name and email (the student is created only if missing).
    """
    with quiet_gradebook(), Gradebook(job_db_url) as job_book, Gradebook(course.db_url) as book:
        graded = job_book.find_submission(assignment, student)
        book.update_or_create_student(student)
        submission = book.update_or_create_submission(assignment, student)
        submission.timestamp = graded.timestamp
        for notebook in graded.notebooks:
            target = book.find_submission_notebook(notebook.name, assignment, student)
            target.late_submission_penalty = notebook.late_submission_penalty
            for grade in notebook.grades:
                into = book.find_grade(grade.name, notebook.name, assignment, student)
                into.auto_score = grade.auto_score
                into.needs_manual_grade = grade.needs_manual_grade
            for comment in notebook.comments:
                into = book.find_comment(comment.name, notebook.name, assignment, student)
                into.auto_comment = comment.auto_comment
        book.db.commit()


def submission_timestamp(course: Course, assignment: str, student: str) -> dt.datetime | None:
    """The submission's timestamp.txt, as nbgrader reads it (None without one)."""
    path = course.submitted / student / assignment / "timestamp.txt"
    text = path.read_text().strip() if path.is_file() else ""
    return parse_utc(text) if text else None


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
    if result.grades_saved and job.autograded.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(job.autograded, target)


def keep_output(course: Course, result: JobResult) -> None:
    """Save nbgrader's output of the job for the instructor: autograde_logs/A/S.txt."""
    folder = course.root / OUTPUT_LOGS / result.job.assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{result.job.student}.txt").write_text(result.output)


def finish_job(course: Course, result: JobResult) -> GradingRecord:
    """Bring one finished job into the course, remove its folder; its record for the log."""
    job = result.job
    status, message = result.status, result.message
    try:
        if result.grades_saved:
            copy_auto_grades(job.db_url, course, job.assignment, job.student)
        else:
            record_zero_grades(course, job.assignment, job.student)
        install_autograded(course, result)
        keep_output(course, result)
    except Exception as error:  # one broken job must not stop the run
        status, message = "error", f"could not record the grades: {error!r}"
    finally:
        shutil.rmtree(job.folder, ignore_errors=True)
    return GradingRecord(
        student=job.student,
        assignment=job.assignment,
        status=status,
        seconds=round(result.seconds, 2),
        seed=job.seed,
        message=message,
        finished_at=utc_now(),
    )
