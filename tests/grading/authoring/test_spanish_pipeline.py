"""The Spanish edition through the real nbgrader: its release is the committed course-es/, and
it grades like the English one (reference full marks, blank 0, a planted bug per notebook
losing exactly the cells it loses in English), with Spanish feedback pages.

Lean on purpose: one release serves the staleness check and the grading, and the cohort is
the reference, the blank release and the first planted bug of each notebook (27
submissions; the English demo grades every bug).
"""

import filecmp
import html
import re

import nbformat
import pytest
from hidden_lines import distinctive_hidden_lines

from autograder.grading.assurance.cohort import BLANK, BUGS, REFERENCE, build_submission
from autograder.grading.authoring.i18n.edition import edition
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import assignments, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde
from autograder.grading.pipeline.integrity import scan_assignment

pytestmark = pytest.mark.slow

SPANISH = edition("es")
# One planted bug per notebook: the first that loses points there.
FIRST_BUGS = {bug.assignment: bug for bug in reversed(BUGS) if bug.loses}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A Spanish workspace: released, the lean cohort submitted and autograded."""
    workspace = tmp_path_factory.mktemp("es-workspace")
    ids = assignments()
    course = generate_release(workspace, ids, language="es")
    release = course.release
    handed_in = [(REFERENCE, a) for a in ids] + [(BLANK, a) for a in ids]
    handed_in += [(bug.student, bug.assignment) for bug in FIRST_BUGS.values()]
    for student, assignment in handed_in:
        target = notebook_path(course.submitted / student, assignment)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(build_submission(student, assignment, SPANISH.solutions, release), target)
    runs = autograde(course.workdir, ids, GradingSettings(workers=2, progress=False))
    assert {record.status for run in runs for record in run.records} == {"graded"}
    scores = {(s, a): cell_scores(course.db_url, s, a) for s, a in handed_in}
    return course, release, scores


@pytest.mark.parametrize("assignment", assignments())
def test_committed_spanish_release_is_what_nbgrader_generates_now(graded, assignment):
    _, release, _ = graded
    committed = notebook_path(SPANISH.course, assignment)
    assert committed.is_file(), f"{committed} missing: run `autograd-course release`"
    assert filecmp.cmp(committed, notebook_path(release, assignment), shallow=False), (
        f"{committed} is stale: run `autograd-course release` and commit course-es/"
    )


@pytest.mark.parametrize("assignment", assignments())
def test_spanish_release_has_spanish_stubs_and_no_answers(assignment):
    text = notebook_path(SPANISH.course, assignment).read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text, f"{assignment} Spanish release contains {marker!r}"
    assert "# TU CÓDIGO AQUÍ" in text and "YOUR CODE HERE" not in text


def test_reference_gets_full_marks_and_blank_zero(graded):
    _, _, scores = graded
    for assignment in assignments():
        reference = scores[(REFERENCE, assignment)]
        assert reference and all(s.score == s.max_score for s in reference.values()), assignment
        assert sum(s.score for s in scores[(BLANK, assignment)].values()) == 0, assignment


def test_every_notebook_has_a_planted_bug_here():
    assert sorted(FIRST_BUGS) == assignments()


@pytest.mark.parametrize("assignment", assignments())
def test_a_planted_bug_loses_the_same_cells_as_in_english(graded, assignment):
    _, _, scores = graded
    bug = FIRST_BUGS[assignment]
    cells = scores[(bug.student, assignment)]
    lost = {name for name, s in cells.items() if s.score < s.max_score}
    assert lost == set(bug.loses), f"{bug.student} in Spanish: {bug.story}"


def test_the_honest_spanish_cohort_raises_no_integrity_flag(graded):
    course, _, _ = graded
    assert [flag for a in assignments() for flag in scan_assignment(course, a)[0]] == []


def test_spanish_feedback_page_speaks_spanish_and_hides_hidden_tests(graded):
    course, _, _ = graded
    bug = FIRST_BUGS["01-worked-example"]
    run_nbgrader(
        course.workdir, "generate_feedback", bug.assignment, "--student", bug.student, "--force"
    )
    page = (course.feedback / bug.student / bug.assignment / f"{bug.assignment}.html").read_text()
    shown = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert '<html lang="es">' in page
    assert "Puntuación:" in shown and "Celda de prueba" in shown and "Tu respuesta" in shown
    assert "Score:" not in shown and "Student's answer" not in shown
    assert "no coincide con torch" in shown  # the failing check's message, in Spanish
    solution = nbformat.read(notebook_path(SPANISH.solutions, bug.assignment), as_version=4)
    hidden = set().union(*(distinctive_hidden_lines(c.source) for c in solution.cells))
    assert [line for line in hidden if line in shown] == []
