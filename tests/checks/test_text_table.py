"""The one plain-text table layout, read back row by row; the demo and red-team tables by row.

The demo and red-team tables end with a footer that names every student, so "the student's
name is in the table" holds even with no rows: the checks here (and in test_pipeline.py and
test_redteam.py) read the rows themselves.
"""

from pathlib import Path

import pytest

from autograder.checks.text_table import format_columns, read_columns
from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE
from autograder.grading.assurance.demo import DemoResult, format_demo_table
from autograder.grading.assurance.redteam import (
    CHEATS,
    HONEST,
    HONEST_BUG,
    RedTeamResult,
    RedTeamRow,
    format_red_team,
)
from autograder.grading.course.scores import Score
from autograder.grading.pipeline.autograde.log import GradingRecord, GradingRun

HEADER = ["student", "score", "verdict"]
ROWS = [["ann", "3/4", "NO: lost  two points"], ["bo", "10/10", ""], ["", "0/4", "yes"]]


def test_rows_read_back_as_written_cells_with_spaces_and_blanks_included():
    for right, indent in [((), ""), ({1}, "  ")]:
        text = "\n".join(format_columns(HEADER, ROWS, right=right, indent=indent))
        assert read_columns(text) == [dict(zip(HEADER, row, strict=True)) for row in ROWS]


def test_numbers_right_aligned_and_a_rule_per_column():
    lines = format_columns(["name", "n"], [["a", "5"], ["b", "120"]], right={1})
    assert lines == ["name    n", "----  ---", "a       5", "b     120"]


def test_a_footer_after_a_blank_line_is_not_read_as_rows():
    text = "\n".join([*format_columns(HEADER, ROWS), "", "  ann: a footer line", "bo  x  y"])
    assert [row["student"] for row in read_columns(text)] == ["ann", "bo", ""]


def test_text_without_a_table_is_an_error():
    with pytest.raises(ValueError, match="no table"):
        read_columns("ann  3/4\nbo  1/4\n")


def demo_result() -> DemoResult:
    """A demo run's result as grading would leave it: every student as expected."""
    students = [REFERENCE, BLANK, *(bug.student for bug in BUGS)]
    assignments = sorted({bug.assignment for bug in BUGS})
    handed_in = {
        (student, a)
        for student in students
        for a in assignments
        if student in (REFERENCE, BLANK) or any(b.student == student for b in BUGS)
    }
    return DemoResult(
        workspace=Path("demo"),
        assignments=assignments,
        students=students,
        notebook_scores={key: Score(1, 2) for key in handed_in},
        cell_scores={key: {"test_x": Score(1, 2)} for key in handed_in},
        verdicts=dict.fromkeys(students, ""),
        flags=[],
        reports=[],
    )


def demo_rows(table: str) -> list[dict[str, str]]:
    """The demo table's student rows (the points-possible row is not a student)."""
    return [row for row in read_columns(table) if row["student"] != "(points possible)"]


def test_the_demo_table_has_one_row_per_student_in_order():
    result = demo_result()
    rows = demo_rows(format_demo_table(result))
    assert [row["student"] for row in rows] == result.students
    assert {row["ok"] for row in rows} == {"yes"}


def test_a_wrong_grade_shows_in_its_row():
    result = demo_result()
    result.verdicts[BLANK] = "00-recipe: blank release earned points"
    table = format_demo_table(result)
    rows = {row["student"]: row for row in demo_rows(table)}
    assert rows[BLANK]["ok"] == "NO"
    assert rows[REFERENCE]["ok"] == "yes"
    assert "blank: 00-recipe: blank release earned points" in table


def red_team_result() -> RedTeamResult:
    """A red-team run's result in which every cheat was contained."""
    bug = next(b for b in BUGS if b.student == HONEST_BUG)
    honest = {
        REFERENCE: {"test_a": Score(1, 1)},
        BLANK: {"test_a": Score(0, 1)},
        HONEST_BUG: {name: Score(0, 1) for name in bug.loses},
    }
    rows = [
        RedTeamRow(
            student=cheat.student,
            story=cheat.story,
            status=cheat.status.split(" or ")[0],  # the first of the statuses allowed
            score=Score(cheat.honest_points, 10),
            zeroed=Score(cheat.honest_points, 10),
            flags=[],
            honest_points=cheat.honest_points,
            expected_flags=frozenset(),
            expected_status=cheat.status,
        )
        for cheat in CHEATS
    ]
    records = [
        GradingRecord(student, "00-recipe", status, 1.0, 0, "", "2026-01-01T00:00:00Z")
        for student, status in [(s, "graded") for s in HONEST]
        + [(r.student, r.status) for r in rows]
    ]
    return RedTeamResult(Path("red"), GradingRun("00-recipe", records), rows, honest, [])


def test_the_red_team_table_has_one_row_per_student():
    rows = read_columns(format_red_team(red_team_result()))
    assert [row["student"] for row in rows] == [*(c.student for c in CHEATS), *HONEST]
    assert {row["contained"] for row in rows} == {"yes", "unchanged"}


def test_an_uncontained_cheat_shows_in_its_row():
    result = red_team_result()
    result.cheats[0].status = "crashed"
    rows = {row["student"]: row for row in read_columns(format_red_team(result))}
    assert rows[CHEATS[0].student]["contained"].startswith("NO: status crashed")
