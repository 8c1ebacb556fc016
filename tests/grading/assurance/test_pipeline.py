"""Does the real nbgrader pipeline grade the demo cohort as the planted bugs predict?"""

import html
import re

import nbformat
import pytest
from hidden_lines import distinctive_hidden_lines
from report_page import Page

from autograder.checks.text_table import read_columns
from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE
from autograder.grading.assurance.demo import format_demo_table, run_demo
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.pipeline.report.html import NOT_GRADED

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    # publish=False: the test grades a fresh release without touching course/.
    return run_demo(tmp_path_factory.mktemp("demo-workspace"), publish=False)


def test_reference_gets_full_marks(demo):
    for assignment in demo.assignments:
        score = demo.notebook_scores[(REFERENCE, assignment)]
        assert score.score == score.max_score > 0, f"reference on {assignment}: {score}"


def test_blank_release_gets_zero(demo):
    for assignment in demo.assignments:
        assert demo.notebook_scores[(BLANK, assignment)].score == 0


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.student)
def test_each_planted_bug_loses_points_exactly_where_it_should(demo, bug):
    cells = demo.cell_scores[(bug.student, bug.assignment)]
    lost = {name for name, s in cells.items() if s.score < s.max_score}
    if bug.loses:
        assert lost == set(bug.loses), f"{bug.student}: {bug.story}"
    else:
        assert lost == set(), f"{bug.student} should keep every point: {bug.story}"


def test_export_and_gradebook_agree(demo):
    for (student, assignment), cells in demo.cell_scores.items():
        exported = demo.notebook_scores[(student, assignment)]
        assert sum(s.score for s in cells.values()) == pytest.approx(exported.score)
        assert sum(s.max_score for s in cells.values()) == pytest.approx(exported.max_score)


def test_the_honest_demo_cohort_raises_no_integrity_flag(demo):
    assert demo.flags == []


def test_a_grading_report_per_assignment_lists_every_student(demo):
    # The Students table's rows, not the page's text: a name inside another, or in a
    # failure's message, would pass a search of the text.
    assert [page.parent.name for page in demo.reports] == demo.assignments
    for page in demo.reports:
        rows = Page(page.read_text()).rows["Students"]
        listed = {row[0]: row[1:3] for row in rows}
        assert len(listed) == len(rows), f"a student listed twice in {page}"
        graded = [s for (s, a) in demo.cell_scores if a == page.parent.name]
        scores = {s: demo.notebook_scores[(s, page.parent.name)] for s in graded}
        for student, score in scores.items():
            assert student in listed, f"{student} has no row in {page}"
            shown = [float(value) for value in listed[student]]  # written to 4 digits
            assert shown == pytest.approx([score.score, score.max_score], rel=1e-3), student
        ungraded = {s: row for s, row in listed.items() if s not in scores}
        assert all(row == [NOT_GRADED, NOT_GRADED] for row in ungraded.values()), page


def test_table_has_a_row_per_student_each_as_expected(demo):
    # The rows themselves: the footer below the table names every student too.
    table = format_demo_table(demo)
    rows = [row for row in read_columns(table) if row["student"] != "(points possible)"]
    assert [row["student"] for row in rows] == demo.students, table
    assert all(row["ok"] == "yes" for row in rows), table
    assert demo.as_expected, table


def hidden_test_lines(assignment):
    """Distinctive lines of the hidden tests (long enough not to occur by chance)."""
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    return set().union(*(distinctive_hidden_lines(cell.source) for cell in notebook.cells))


def visible_text(html_text):
    """The text a reader sees: tags removed (highlighting splits lines), entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


@pytest.mark.parametrize("bug", [b for b in BUGS if b.loses][:3], ids=lambda bug: bug.student)
def test_feedback_shows_no_hidden_test_line(demo, bug):
    run_nbgrader(
        demo.workspace, "generate_feedback", bug.assignment, "--student", bug.student, "--force"
    )
    page = demo.workspace / "feedback" / bug.student / bug.assignment / f"{bug.assignment}.html"
    shown = visible_text(page.read_text())
    leaked = [line for line in hidden_test_lines(bug.assignment) if line in shown]
    assert leaked == []
    # The same search does find them in the autograded notebook, so it is not blind.
    autograded = notebook_path(demo.workspace / "autograded" / bug.student, bug.assignment)
    assert any(line in autograded.read_text() for line in hidden_test_lines(bug.assignment))
    assert "Error" in shown  # the failing checks still say why
