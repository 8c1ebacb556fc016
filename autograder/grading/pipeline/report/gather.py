"""The instructor's grading report: one self-contained HTML page per graded assignment.

It gathers what a graded nbgrader workspace knows about an assignment (scores from the
gradebook, failing checks from the autograded notebooks' outputs, flags from
``integrity.json``, grading failures from ``autograde_log.json``) and writes
``out_dir/<assignment>/report.html`` with its figures embedded, plus the figures as PNG
files next to it. The page can be emailed as is: CSS inline, images as base64.

Failing checks show only ``ename: evalue`` of each error, never the traceback, because
a traceback of a hidden test quotes the hidden test's source.
"""

import datetime as dt
import json
import os
import re
import statistics
from collections import defaultdict
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from autograder.grading.course.course_root import Course, as_course
from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.report.figures import report_figures
from autograder.grading.pipeline.report.html import render_report
from autograder.grading.pipeline.report.logs import (
    latest_per_student,
    read_flag_rows,
    read_log_rows,
)
from autograder.grading.pipeline.report.model import (
    AssignmentReport,
    ExerciseStats,
    FailureGroup,
    SimilarityMatch,
    SimilaritySummary,
    Submission,
)

# ANSI colour codes that IPython puts in error names and tracebacks.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# How much of a failure message the report quotes as the example of its group.
EXAMPLE_LINES = 12
EXAMPLE_CHARS = 2000


def read_submissions(course: Course, assignment: str) -> tuple[float, list[Submission]]:
    """The assignment's max score and its submissions (sorted by student) from the gradebook."""
    database = course.sqlite_file
    if database is not None and not database.is_file():  # opening it would create one
        raise FileNotFoundError(f"no gradebook at {database}")
    with Gradebook(course.db_url) as gradebook:
        try:
            found = gradebook.find_assignment(assignment)
        except MissingEntry as error:
            raise ValueError(f"assignment {assignment!r} is not in the gradebook") from error
        submissions = [
            Submission(
                student=s.student_id,
                score=(s.score or 0.0) - (s.late_submission_penalty or 0.0),
                max_score=s.max_score,
                timestamp=str(s.timestamp) if s.timestamp else "",
                cells={
                    g.name: (g.score or 0.0, g.max_score)
                    for notebook in s.notebooks
                    for g in notebook.grades
                    if g.cell_type == "code"
                },
                seconds_late=s.total_seconds_late,
                extension_hours=s.extension / dt.timedelta(hours=1) if s.extension else 0.0,
                penalty=s.late_submission_penalty or 0.0,
            )
            for s in found.submissions
        ]
        max_score = found.max_score
    if not submissions:
        raise ValueError(f"assignment {assignment!r} has no submissions in the gradebook")
    return max_score, sorted(submissions, key=lambda s: s.student)


def graded_cell_ids(notebook: nbformat.NotebookNode) -> list[str]:
    """grade_ids of the notebook's graded cells, in notebook order."""
    ids = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id"):
            ids.append(meta["grade_id"])
    return ids


def autograded_notebooks(course: Course, assignment: str) -> dict[str, Path]:
    """student -> their autograded notebook of the assignment (one notebook per assignment)."""
    found = {}
    for path in sorted(course.autograded.glob(f"*/{assignment}/*.ipynb")):
        found.setdefault(path.parent.parent.name, path)
    return found


def cell_order(course: Course, assignment: str, known: set[str]) -> list[str]:
    """The graded cells in notebook order, from the source notebook (else an autograded one).

    The gradebook keeps cells unordered; cells it knows that no notebook shows go last.
    """
    notebooks = sorted((course.source / assignment).glob("*.ipynb"))
    notebooks += list(autograded_notebooks(course, assignment).values())
    order = graded_cell_ids(nbformat.read(notebooks[0], as_version=4)) if notebooks else []
    return order + sorted(known - set(order))


def exercise_stats(submissions: list[Submission], order: list[str]) -> list[ExerciseStats]:
    """Per graded cell: mean fraction of points, and counts of full, partial and zero."""
    stats = []
    for cell in order:
        grades = [s.cells[cell] for s in submissions if cell in s.cells]
        if not grades:
            continue
        fractions = [score / top if top else 1.0 for score, top in grades]
        stats.append(
            ExerciseStats(
                cell=cell,
                max_score=max(top for _, top in grades),
                mean_fraction=statistics.fmean(fractions),
                full=sum(f >= 1.0 for f in fractions),
                partial=sum(0.0 < f < 1.0 for f in fractions),
                zero=sum(f <= 0.0 for f in fractions),
            )
        )
    return stats


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def error_message(output: nbformat.NotebookNode) -> str:
    """``ename: evalue`` of an error output, uncoloured; the traceback is never used."""
    name = strip_ansi(str(output.get("ename", "")))
    value = strip_ansi(str(output.get("evalue", "")))
    return f"{name}: {value}" if value else name


def example_of(message: str) -> str:
    """The first lines of a message, short enough to quote in a table."""
    lines = message.splitlines()
    text = "\n".join(lines[:EXAMPLE_LINES])
    if len(lines) > EXAMPLE_LINES or len(text) > EXAMPLE_CHARS:
        text = text[:EXAMPLE_CHARS] + "\n..."
    return text


def cell_errors(path: Path) -> list[tuple[str, str]]:
    """(grade_id, message) for each error output of a graded cell in one notebook."""
    notebook = nbformat.read(path, as_version=4)
    errors = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                errors.append((meta.get("grade_id", "?"), error_message(output)))
    return errors


def failing_checks(
    course: Course, assignment: str, students: set[str], order: list[str]
) -> list[FailureGroup]:
    """Errors of ``students``' graded cells grouped by cell and headline, most frequent first.

    Grouping on the first line keeps students with the same mistake together even when
    the figures in the rest of their message differ.
    """
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for student, path in autograded_notebooks(course, assignment).items():
        if student not in students:  # a leftover folder the gradebook no longer knows
            continue
        for cell, message in cell_errors(path):
            headline = message.splitlines()[0] if message else ""
            groups[(cell, headline)].append((student, message))
    position = {cell: index for index, cell in enumerate(order)}
    ranked = sorted(
        groups.items(),
        key=lambda item: (-len(item[1]), position.get(item[0][0], len(order)), item[0]),
    )
    return [
        FailureGroup(
            cell=cell,
            headline=headline,
            example=example_of(hits[0][1]),
            students=tuple(sorted({student for student, _ in hits})),
        )
        for (cell, headline), hits in ranked
    ]


def gather_report(course: Course, assignment: str) -> AssignmentReport:
    """Read everything the report shows for one assignment of a graded course."""
    max_score, submissions = read_submissions(course, assignment)
    known = {cell for s in submissions for cell in s.cells}
    order = cell_order(course, assignment, known)
    log = read_log_rows(course.root, assignment)
    return AssignmentReport(
        assignment=assignment,
        max_score=max_score,
        submissions=submissions,
        exercises=exercise_stats(submissions, order),
        failures=failing_checks(course, assignment, {s.student for s in submissions}, order),
        flags=read_flag_rows(course.root, assignment),
        log=None if log is None else latest_per_student(log),
        attempts=latest_per_student([r for r in log or [] if r.status != Status.SKIPPED]),
        similarity=read_similarity(course.root, assignment),
    )


def read_similarity(root: Path, assignment: str) -> SimilaritySummary | None:
    """The similarity run's flagged students, each with their highest match, from
    ``ROOT/similarity/ASSIGNMENT/pairs.json`` (None when there is none, or it is unreadable:
    the report never fails for it)."""
    from autograder.grading.pipeline.similarity.report import PAGE_NAME, PAIRS_NAME
    from autograder.grading.pipeline.similarity.run import OUT_NAME

    folder = root / OUT_NAME / assignment
    try:
        pairs = json.loads((folder / PAIRS_NAME).read_text(encoding="utf-8"))["pairs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    best: dict[str, SimilarityMatch] = {}
    for pair in pairs:
        if not isinstance(pair, dict) or not pair.get("flagged"):
            continue
        kind, score = str(pair.get("kind", "")), float(pair.get("score", 0))
        sides = [(pair.get("a"), pair.get("b"))]
        if kind == "cohort":  # both are this cohort's students
            sides.append((pair.get("b"), pair.get("a")))
        for student, partner in sides:
            match = SimilarityMatch(str(student), str(partner), kind, score)
            if student not in best or score > best[str(student)].score:
                best[str(student)] = match
    matches = sorted(best.values(), key=lambda m: (-m.score, m.student))
    return SimilaritySummary(folder / PAGE_NAME, matches)


def write_report(course: Course | Path, assignments: list[str], out_dir: Path) -> list[Path]:
    """Write ``out_dir/<assignment>/report.html`` and its PNG figures; return the pages.

    ``course`` is a Course or the folder of its nbgrader_config.py. Every assignment is
    read before anything is written, so a bad name writes nothing.
    """
    course = as_course(course)
    reports = [gather_report(course, assignment) for assignment in assignments]
    pages = []
    for report in reports:
        folder = Path(out_dir) / report.assignment
        folder.mkdir(parents=True, exist_ok=True)
        figures = report_figures(report)
        for name, png in figures.items():
            (folder / name).write_bytes(png)
        page = folder / "report.html"
        similarity = report.similarity
        # A relative link: the report and the course root travel together.
        link = None if similarity is None else os.path.relpath(similarity.page, folder)
        page.write_text(render_report(report, figures, link), encoding="utf-8")
        pages.append(page)
    return pages
