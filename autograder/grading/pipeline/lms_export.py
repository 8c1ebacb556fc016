"""Grades for the university's LMS: Canvas's and Moodle's gradebook-import CSV.

Each is an nbgrader export plugin (``nbgrader export --exporter=...``, as ``autograd-course
export --format canvas|moodle`` runs it), one row per student and one column per
assignment, the score after nbgrader's late penalty. Students are mapped through a roster
(``roster.csv``: ``student`` (the nbgrader id), ``name``, ``lms_id``, ``sis_user_id``,
``sis_login_id``, ``section``, ``email``), checked first: a duplicate or unknown id, or a
graded student missing from it, is refused with nothing written. Cells are written as the
safe CSV export writes them: text quoted, formula-like text neutralised.

Canvas takes the columns Student, ID, SIS User ID, SIS Login ID, Section, then one per
assignment. Moodle's grade import takes an identifier column (here the email address, which
it matches to its users) and one column per grade item.
"""

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from autograder.grading.pipeline.safe_csv_export import cell, score_rows

ROSTER_COLUMNS = ("student", "name", "lms_id", "sis_user_id", "sis_login_id", "section", "email")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_ID_COLUMN = "Email address"


class RosterError(ValueError):
    """A roster that cannot map the gradebook's students: one line naming the problem."""


@dataclass(frozen=True)
class Person:
    """One roster row: the LMS's view of an nbgrader student."""

    student: str
    name: str
    lms_id: str
    sis_user_id: str
    sis_login_id: str
    section: str
    email: str


def read_roster(path: Path) -> dict[str, Person]:
    """{nbgrader id: person} of the roster CSV ``path``, refusing duplicate ids."""
    if not path.is_file():
        raise RosterError(f"no roster at {path}")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    header = set(rows[0]) if rows else set()
    missing = [name for name in ("student", "lms_id", "email") if name not in header]
    if missing:
        raise RosterError(f"{path}: no column(s) {missing}; the columns are {ROSTER_COLUMNS}")
    people = [Person(**{k: (row.get(k) or "").strip() for k in ROSTER_COLUMNS}) for row in rows]
    for field in ("student", "lms_id", "email"):
        twice = sorted(v for v, n in Counter(getattr(p, field) for p in people).items() if n > 1)
        if twice:
            raise RosterError(f"{path}: {field} given twice: {twice[:5]}")
    blank = [p.student or f"row {i + 2}" for i, p in enumerate(people) if not p.student]
    if blank:
        raise RosterError(f"{path}: rows without a student id: {blank[:5]}")
    return {person.student: person for person in people}


def check_roster(roster: dict[str, Person], students: set[str], path: Path) -> None:
    """Refuse a roster that misses a graded student or names one the gradebook lacks."""
    missing = sorted(students - set(roster))
    if missing:
        raise RosterError(f"students missing from the roster {path}: {missing[:5]}")
    unknown = sorted(set(roster) - students)
    if unknown:
        raise RosterError(f"students in the roster {path} unknown to the gradebook: {unknown[:5]}")


def scores_by_student(gradebook: Gradebook) -> tuple[list[str], dict[str, dict[str, object]]]:
    """(assignment names, {student: {assignment: score after the late penalty}})."""
    names = [assignment.name for assignment in gradebook.assignments]
    table: dict[str, dict[str, object]] = {}
    for row in score_rows(gradebook, [], []):
        table.setdefault(str(row["student_id"]), {})[str(row["assignment"])] = row["score"]
    return names, table


class RosterExport(ExportPlugin):
    """An export through the roster; subclasses give the columns of one LMS."""

    roster = Unicode("roster.csv", help="the roster CSV (nbgrader id -> LMS ids)").tag(config=True)

    def identity(self, person: Person) -> list[str]:
        """The identifying cells of ``person``'s row."""
        raise NotImplementedError

    header: tuple[str, ...] = ()

    def export(self, gradebook: Gradebook) -> None:
        """Check the roster, then write one row per student to ``self.to``."""
        path = Path(self.roster)
        roster = read_roster(path)
        names, table = scores_by_student(gradebook)
        check_roster(roster, {student.id for student in gradebook.students}, path)
        target = self.to or "grades.csv"
        self.log.info("Exporting grades for the LMS to %s", target)
        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_NONNUMERIC)
            writer.writerow([*self.header, *names])
            for student in sorted(table):
                identity = [cell(value) for value in self.identity(roster[student])]
                writer.writerow([*identity, *(cell(table[student][name]) for name in names)])


class CanvasExport(RosterExport):
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, scores."""

    header = CANVAS_COLUMNS

    def identity(self, person: Person) -> list[str]:
        return [
            person.name or person.student,
            person.lms_id,
            person.sis_user_id,
            person.sis_login_id,
            person.section,
        ]


class MoodleExport(RosterExport):
    """Moodle's grade import: the email address, then one column per grade item."""

    header = (MOODLE_ID_COLUMN,)

    def identity(self, person: Person) -> list[str]:
        return [person.email]


EXPORTERS = {
    "csv": "autograder.grading.pipeline.safe_csv_export.SafeCsvExport",
    "canvas": "autograder.grading.pipeline.lms_export.CanvasExport",
    "moodle": "autograder.grading.pipeline.lms_export.MoodleExport",
}
