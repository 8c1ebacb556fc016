"""The instructor's grading report: one self-contained HTML page per graded assignment.

It gathers what a graded nbgrader workspace knows about an assignment (scores from the
gradebook, failing checks from the autograded notebooks' outputs, flags from
``integrity.json``, grading failures from ``autograde_log.json``) and writes
``out_dir/<assignment>/report.html`` with its figures embedded, plus the figures as PNG
files next to it. The page can be emailed as is: CSS inline, images as base64.

Failing checks show only ``ename: evalue`` of each error, never the traceback, because
a traceback of a hidden test quotes the hidden test's source.
"""

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from autograder.grading.report.figures import report_figures
from autograder.grading.report.html import render_report
from autograder.grading.report.logs import Flag, LogRecord, latest_per_student, read_flags, read_log

# ANSI colour codes that IPython puts in error names and tracebacks.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# How much of a failure message the report quotes as the example of its group.
EXAMPLE_LINES = 12
EXAMPLE_CHARS = 2000
# Log statuses that are not failures: graded fine, or deliberately not graded.
NOT_FAILURES = frozenset({"graded", "skipped"})


@dataclass(frozen=True)
class Submission:
    """One student's total for the assignment, as the gradebook has it."""

    student: str
    score: float
    max_score: float
    timestamp: str  # when submitted, "" when nbgrader recorded none
    cells: dict[str, tuple[float, float]]  # grade_id -> (score, max score)


@dataclass(frozen=True)
class ExerciseStats:
    """How the cohort did on one graded test cell."""

    cell: str
    max_score: float
    mean_fraction: float  # mean of score / max over the submissions
    full: int
    partial: int
    zero: int


@dataclass(frozen=True)
class FailureGroup:
    """Students whose graded cell failed with the same headline (first line of the error)."""

    cell: str
    headline: str
    example: str  # one student's message, a few lines long
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass
class AssignmentReport:
    """Everything the report page shows for one assignment."""

    assignment: str
    max_score: float
    submissions: list[Submission]
    exercises: list[ExerciseStats]
    failures: list[FailureGroup]
    flags: list[Flag] | None  # None: no integrity scan was run
    log: list[LogRecord] | None  # latest record per student; None: no grading log
    # Latest record per student that is not "skipped": a skip ("unchanged since graded")
    # takes no time and happens after the grading, so times come from these.
    attempts: list[LogRecord] = field(default_factory=list)

    @property
    def scores(self) -> list[float]:
        return [s.score for s in self.submissions]

    @property
    def grading_failures(self) -> list[LogRecord]:
        return [r for r in self.log or [] if r.status not in NOT_FAILURES]

    @property
    def grading_seconds(self) -> list[float]:
        return [r.seconds for r in self.attempts if r.seconds is not None]

    def graded_when(self) -> str:
        """When grading happened, from the log or the gradebook; never the clock's time now."""
        finished = sorted(r.finished_at for r in self.attempts if r.finished_at)
        if finished:
            return _span(finished) + " (grading log)"
        submitted = sorted(s.timestamp for s in self.submissions if s.timestamp)
        if submitted:
            return "submitted " + _span(submitted) + " (gradebook)"
        return "not recorded (no grading log, no submission times in the gradebook)"


def _span(times: list[str]) -> str:
    return times[0] if times[0] == times[-1] else f"{times[0]} to {times[-1]}"


def read_submissions(root: Path, assignment: str) -> tuple[float, list[Submission]]:
    """The assignment's max score and its submissions (sorted by student) from the gradebook."""
    database = root / "gradebook.db"
    if not database.is_file():  # opening a missing one would create an empty gradebook
        raise FileNotFoundError(f"no gradebook at {database}")
    with Gradebook(f"sqlite:///{database.resolve()}") as gradebook:
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


def autograded_notebooks(root: Path, assignment: str) -> dict[str, Path]:
    """student -> their autograded notebook of the assignment (one notebook per assignment)."""
    found = {}
    for path in sorted((root / "autograded").glob(f"*/{assignment}/*.ipynb")):
        found.setdefault(path.parent.parent.name, path)
    return found


def cell_order(root: Path, assignment: str, known: set[str]) -> list[str]:
    """The graded cells in notebook order, from the source notebook (else an autograded one).

    The gradebook keeps cells unordered; cells it knows that no notebook shows go last.
    """
    notebooks = sorted((root / "source" / assignment).glob("*.ipynb"))
    notebooks += list(autograded_notebooks(root, assignment).values())
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
    root: Path, assignment: str, students: set[str], order: list[str]
) -> list[FailureGroup]:
    """Errors of ``students``' graded cells grouped by cell and headline, most frequent first.

    Grouping on the first line keeps students with the same mistake together even when
    the figures in the rest of their message differ.
    """
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for student, path in autograded_notebooks(root, assignment).items():
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


def gather_report(root: Path, assignment: str) -> AssignmentReport:
    """Read everything the report shows for one assignment of a graded workspace."""
    max_score, submissions = read_submissions(root, assignment)
    known = {cell for s in submissions for cell in s.cells}
    order = cell_order(root, assignment, known)
    log = read_log(root, assignment)
    return AssignmentReport(
        assignment=assignment,
        max_score=max_score,
        submissions=submissions,
        exercises=exercise_stats(submissions, order),
        failures=failing_checks(root, assignment, {s.student for s in submissions}, order),
        flags=read_flags(root, assignment),
        log=None if log is None else latest_per_student(log),
        attempts=latest_per_student([r for r in log or [] if r.status != "skipped"]),
    )


def write_report(root: Path, assignments: list[str], out_dir: Path) -> list[Path]:
    """Write ``out_dir/<assignment>/report.html`` and its PNG figures; return the pages.

    Every assignment is read before anything is written, so a bad name writes nothing.
    """
    reports = [gather_report(Path(root), assignment) for assignment in assignments]
    pages = []
    for report in reports:
        folder = Path(out_dir) / report.assignment
        folder.mkdir(parents=True, exist_ok=True)
        figures = report_figures(report)
        for name, png in figures.items():
            (folder / name).write_bytes(png)
        page = folder / "report.html"
        page.write_text(render_report(report, figures), encoding="utf-8")
        pages.append(page)
    return pages
