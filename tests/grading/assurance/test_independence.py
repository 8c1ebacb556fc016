"""Is every exercise graded on its own? A submission with one exercise solved and every other
one left as released must earn exactly that exercise's points, graded by the real nbgrader
through the project's own autograde (one run for every notebook, two workers)."""

import nbformat
import pytest
from nbgrader.utils import is_grade, is_solution

from autograder.checks.exercises import exercises_of
from autograder.grading.assurance.cohort import solved_sources
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde

pytestmark = pytest.mark.slow


def exercise_tests(assignment: str) -> dict[str, set[str]]:
    """Each solution cell's grade_id -> the grade_ids of the test cells that check it."""
    return {exercise.cell: set(exercise.tests) for exercise in exercises_of(assignment)}


def student_name(exercise: str) -> str:
    """The submission's student id: which exercise alone is solved."""
    return "only-" + exercise.replace("_", "-")


CASES = [
    pytest.param(assignment, exercise, id=f"{assignment}:{exercise}")
    for assignment in assignments()
    for exercise in solved_sources(notebook_path(SOLUTIONS_DIR, assignment))
]


def test_every_solution_cell_has_a_mapping():
    for assignment in assignments():
        solved = set(solved_sources(notebook_path(SOLUTIONS_DIR, assignment)))
        assert set(exercise_tests(assignment)) == solved, assignment


def test_every_test_cell_checks_exactly_one_exercise():
    # An exercise with no test cell would pass here while earning nothing; a test cell of
    # two exercises would need both solved.
    for assignment in assignments():
        notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
        graded = [
            cell.metadata["nbgrader"]["grade_id"]
            for cell in notebook.cells
            if is_grade(cell) and not is_solution(cell)
        ]
        owned = exercise_tests(assignment)
        assert all(owned.values()), f"{assignment}: an exercise without a test cell: {owned}"
        mapped = [test for tests in owned.values() for test in tests]
        assert sorted(mapped) == sorted(graded), assignment


@pytest.fixture(scope="module")
def graded(tmp_path_factory, request):
    """Release the notebooks of the selected cases (``-k 02`` grades 02 alone), hand in one
    submission per exercise, autograde each notebook."""
    selected = sorted(
        {
            item.callspec.params["assignment"]
            for item in request.session.items
            if "assignment" in getattr(getattr(item, "callspec", None), "params", {})
        }
    )
    root = tmp_path_factory.mktemp("independence")
    release = generate_release(root, selected).release
    for assignment in selected:
        solved = solved_sources(notebook_path(SOLUTIONS_DIR, assignment))
        for exercise, source in solved.items():
            notebook = nbformat.read(notebook_path(release, assignment), as_version=4)
            for cell in notebook.cells:
                if is_solution(cell) and cell.metadata["nbgrader"]["grade_id"] == exercise:
                    cell.source = source
            target = notebook_path(root / "submitted" / student_name(exercise), assignment)
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, target)
    runs = autograde(root, selected, GradingSettings(workers=2, progress=False))
    for assignment, run in zip(selected, runs, strict=True):
        assert {record.status for record in run.records} == {"graded"}, assignment
    return root


@pytest.mark.parametrize(("assignment", "exercise"), CASES)
def test_one_exercise_solved_earns_exactly_its_points(graded, assignment, exercise):
    scores = cell_scores(f"sqlite:///{graded / 'gradebook.db'}", student_name(exercise), assignment)
    own = exercise_tests(assignment)[exercise]
    wrong = {
        name: f"{score.score:g}/{score.max_score:g}"
        for name, score in scores.items()
        if score.score != (score.max_score if name in own else 0)
    }
    assert wrong == {}, f"only {exercise} solved; expected full marks on {sorted(own)} alone"
