"""A course graded before the package moved into three wings still grades after it.

``fixtures/gradebook-before-layout/gradebook.db`` is the gradebook ``nbgrader
generate_assignment 00-recipe`` wrote with the flat layout (commit f356d41): its stored test
cells import ``autograder.grading_seed`` and ``autograder.progress``, and the course config
of that time imported ``autograder.feedback``. nbgrader restores test cells from this
database at autograde, so those old paths run again in today's kernels.
"""

import shutil

import nbformat
import pytest

from autograder.grading.assurance.cohort import REFERENCE, build_submission
from autograder.grading.course.nbgrader_workspace import course_config, run_nbgrader
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    NBGRADER_CONFIG,
    REPO_ROOT,
    SOLUTIONS_DIR,
    notebook_path,
)
from autograder.grading.course.scores import cell_scores

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-recipe"
OLD_GRADEBOOK = REPO_ROOT / "tests" / "fixtures" / "gradebook-before-layout" / "gradebook.db"
# The config of a course set up before the move: the feedback preprocessor's old path.
OLD_FEEDBACK_IMPORT = "from autograder.feedback import HideHiddenTestTracebacks\n\n"
OLD_FEEDBACK_SETTING = """\
c.GenerateFeedback.preprocessors = [HideHiddenTestTracebacks] + [
    p for p in c.GenerateFeedback.preprocessors if p is not HideHiddenTestTracebacks
]
"""


@pytest.fixture(scope="module")
def old_course(tmp_path_factory):
    """A course root holding the old gradebook and the reference student's submission,
    with the ``test_recipe`` cell deleted so that nbgrader must restore it from the db."""
    root = tmp_path_factory.mktemp("old-course")
    shutil.copytree(SOLUTIONS_DIR / ASSIGNMENT, root / "source" / ASSIGNMENT)
    shutil.copy(OLD_GRADEBOOK, root / "gradebook.db")
    config = course_config(
        NBGRADER_CONFIG, root, f"sqlite:///{root / 'gradebook.db'}", source_directory="source"
    )
    (root / "nbgrader_config.py").write_text(OLD_FEEDBACK_IMPORT + config + OLD_FEEDBACK_SETTING)
    notebook = build_submission(REFERENCE, ASSIGNMENT, SOLUTIONS_DIR, COURSE_DIR)
    notebook.cells = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_recipe"
    ]
    target = notebook_path(root / "submitted" / "alice", ASSIGNMENT)
    target.parent.mkdir(parents=True)
    nbformat.write(notebook, target)
    run_nbgrader(root, "autograde", ASSIGNMENT)
    return root


def test_old_gradebook_grades_the_reference_with_full_marks(old_course):
    """Do the test cells stored before the move still pass a correct notebook?"""
    scores = cell_scores(f"sqlite:///{old_course / 'gradebook.db'}", "alice", ASSIGNMENT)
    assert scores, "no grades recorded"
    lost = {cell: s for cell, s in scores.items() if s.score != s.max_score}
    assert not lost, f"cells restored from the old gradebook lost points: {lost}"


def test_the_restored_cell_is_the_old_one_with_its_old_import(old_course):
    """Was the deleted test cell restored from the old database, old import path and all?"""
    graded = nbformat.read(notebook_path(old_course / "autograded" / "alice", ASSIGNMENT), 4)
    restored = [
        c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_recipe"
    ]
    assert len(restored) == 1
    assert "from autograder.grading_seed import hidden_rng" in restored[0].source
    assert not any(o.get("output_type") == "error" for o in restored[0].outputs)


def test_feedback_runs_with_the_old_preprocessor_path(old_course):
    """Does ``generate_feedback`` load ``autograder.feedback`` from an old course config?"""
    run_nbgrader(old_course, "generate_feedback", ASSIGNMENT)
    feedback = old_course / "feedback" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert feedback.is_file()
