"""``export`` writes CSV that the csv module reads back row for row and that a spreadsheet
cannot run: ids with commas stay in their column, formula-like text is neutralised."""

import csv
import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.grading.cli import main
from autograder.grading.pipeline.safe_csv_export import COLUMNS, neutralised

ASSIGNMENT = "00-recipe"
# Student ids as an LMS might hand them over: a comma, a quote, and each start that
# spreadsheets take for a formula (OWASP's list).
HOSTILE_IDS = [
    "lovelace, ada",
    'say "hi"',
    '=HYPERLINK("http://x","y")',
    "+1+1",
    "-rf",
    "@SUM(A1:A2)",
    "\tcmd",
    "\rcmd",
]


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course whose gradebook has every hostile id scored 1 of 2, and "plain" unsubmitted."""
    # A new gradebook runs nbgrader's `alembic` by name: this environment's.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as book:
        book.add_assignment(ASSIGNMENT)
        book.add_notebook(ASSIGNMENT, ASSIGNMENT)
        book.add_grade_cell("test_it", ASSIGNMENT, ASSIGNMENT, max_score=2, cell_type="code")
        book.add_student("plain", first_name="=cmd|' /C calc'!A0", email="@evil")
        for student in HOSTILE_IDS:
            book.add_student(student)
            book.add_submission(ASSIGNMENT, student)
            book.find_grade("test_it", ASSIGNMENT, ASSIGNMENT, student).auto_score = 1.0
        book.db.commit()
    return root


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission
def test_export_reads_back_with_the_header_width_and_no_formula(course, capsys):
    target = course / "out.csv"
    assert main(["export", "--root", str(course), "--to", str(target)]) == 0
    with target.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == list(COLUMNS)
    assert all(len(row) == len(COLUMNS) for row in rows), rows
    by_id = {
        row[COLUMNS.index("student_id")]: dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]
    }
    expected_ids = {neutralised(student) for student in HOSTILE_IDS} | {"plain"}
    assert set(by_id) == expected_ids
    for student in HOSTILE_IDS:
        row = by_id[neutralised(student)]
        assert float(row["score"]) == 1.0 and float(row["max_score"]) == 2.0, student
    assert by_id["plain"]["score"] == "0.0" and by_id["plain"]["timestamp"] == ""
    assert by_id["plain"]["first_name"] == "'=cmd|' /C calc'!A0"
    assert by_id["plain"]["email"] == "'@evil"
    for row in rows[1:]:  # no text cell a spreadsheet would run
        assert not any(value.startswith(("=", "+", "-", "@", "\t", "\r")) for value in row), row


def test_neutralised_prefixes_only_formula_starts():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert neutralised(start + "x") == "'" + start + "x"
    assert neutralised("ada") == "ada" and neutralised("a=b") == "a=b" and neutralised("") == ""
