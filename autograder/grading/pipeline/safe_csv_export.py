"""The gradebook as CSV that a spreadsheet can open safely: ``nbgrader export``'s columns,
written by the ``csv`` module, every text cell quoted and formula-like text neutralised.

nbgrader's own CSV exporter joins fields with commas as they are: a student id holding a
comma shifts that row's score columns, and an id such as ``=HYPERLINK(...)`` reaches a
spreadsheet as a formula. Here each text cell is quoted (so commas, quotes and line breaks
stay inside it) and one that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return gets a leading single quote, as OWASP's CSV-injection guidance says, so spreadsheets
show it as text. Scores stay bare numbers: this module computes them, nobody types them.
Used as nbgrader's exporter (``nbgrader export --exporter=...``), so the course's export
settings (students, assignments) apply as usual.
"""

import csv
from collections.abc import Iterator

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

COLUMNS = (
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
)
# What spreadsheets take for the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralised(text: str) -> str:
    """``text`` as a spreadsheet shows it and never runs it: a leading ' before a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def cell(value: object) -> str | float:
    """A CSV cell: numbers as they are, None as empty text, anything else as safe text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return neutralised("" if value is None else str(value))


def score_rows(
    gradebook: Gradebook, assignments: list[str], students: list[str]
) -> Iterator[dict[str, object]]:
    """A row per (assignment, student), as nbgrader's export has them: a student who handed
    nothing in scores 0 with no timestamp. Empty filters mean everyone, every assignment."""
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        for student in gradebook.students:
            if students and student.id not in students:
                continue
            row: dict[str, object] = {
                "assignment": assignment.name,
                "duedate": assignment.duedate,
                "student_id": student.id,
                "last_name": student.last_name,
                "first_name": student.first_name,
                "email": student.email,
                "max_score": assignment.max_score,
            }
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                row |= {"timestamp": None, "raw_score": 0.0, "late_submission_penalty": 0.0}
                row["score"] = 0.0
            else:
                penalty = submission.late_submission_penalty or 0.0
                row |= {"timestamp": submission.timestamp, "raw_score": submission.score}
                row["late_submission_penalty"] = submission.late_submission_penalty
                row["score"] = max(0.0, submission.score - penalty)
            yield row


def write_scores(path: str, rows: Iterator[dict[str, object]]) -> None:
    """Write the header and ``rows`` to ``path``: text quoted, numbers bare."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_NONNUMERIC)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([cell(row.get(column)) for column in COLUMNS])


class SafeCsvExport(ExportPlugin):
    """nbgrader's CSV export, written safely (see the module's docstring)."""

    def export(self, gradebook: Gradebook) -> None:
        """Write every (assignment, student) score to ``self.to`` (default grades.csv)."""
        path = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", path)
        write_scores(path, score_rows(gradebook, list(self.assignment), list(self.student)))
