"""Feedback survives any text a student writes, nbgrader's own markers included.

nbgrader's ClearHiddenTests parses every cell for hidden-test markers, so one student who
typed ``### BEGIN HIDDEN TESTS`` into an answer cell made ``generate_feedback`` fail for
the notebook. Our preprocessors look for hidden tests in test cells only.
"""

import html
import re

import nbformat
import pytest
from hidden_lines import distinctive_hidden_lines
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.grading.assurance.cohort import REFERENCE, build_submission
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import run_nbgrader
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, notebook_path
from autograder.grading.pipeline.feedback import (
    ClearHiddenTestsInTestCells,
    HideHiddenTestTracebacks,
)

ASSIGNMENT = "00-recipe"
STUDENT = "marker-writer"
# What a student might type into answer cells: an unclosed marker, a nested pair, a pair.
TYPED = [
    "# ### BEGIN HIDDEN TESTS (my notes: no idea what is hidden)",
    "# ### BEGIN HIDDEN TESTS\n# ### BEGIN HIDDEN TESTS\n# ### END HIDDEN TESTS",
    "### BEGIN SOLUTION\n# ### BEGIN HIDDEN TESTS\n# ### END HIDDEN TESTS\n### END SOLUTION",
]


def nbgrader_meta(grade: bool, solution: bool, grade_id: str) -> dict:
    meta = {"grade": grade, "solution": solution, "grade_id": grade_id, "locked": not solution}
    if grade:
        meta["points"] = 1
    return {"nbgrader": meta}


def error_output() -> nbformat.NotebookNode:
    return nbformat.v4.new_output(
        "error", ename="AssertionError", evalue="wrong", traceback=["long", "traceback"]
    )


def feedback_preprocess(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for preprocessor in (HideHiddenTestTracebacks(), ClearHiddenTestsInTestCells()):
        notebook, _ = preprocessor.preprocess(notebook, {})
    return notebook


def test_markers_in_a_students_cells_are_left_alone():
    answers = [
        new_code_cell(text, metadata=nbgrader_meta(False, True, f"answer{i}"), outputs=[])
        for i, text in enumerate(TYPED)
    ]
    answers[0].outputs = [error_output()]
    notes = new_markdown_cell("### BEGIN HIDDEN TESTS\nunclosed, in prose")
    test = new_code_cell(
        "check()\n### BEGIN HIDDEN TESTS\nsecret_check()\n### END HIDDEN TESTS",
        metadata=nbgrader_meta(True, False, "test"),
        outputs=[error_output()],
    )
    notebook = feedback_preprocess(new_notebook(cells=[*answers, notes, test]))
    assert [cell.source for cell in notebook.cells[:3]] == TYPED
    assert notebook.cells[0].outputs[0].traceback == ["long", "traceback"]
    assert notebook.cells[3].source.startswith("### BEGIN HIDDEN TESTS")
    # The real test cell still loses its hidden part and its traceback.
    assert notebook.cells[4].source == "check()"
    assert notebook.cells[4].outputs[0].traceback == ["AssertionError: wrong"]


def test_an_unclosed_marker_in_a_test_cell_is_still_an_instructor_error():
    test = new_code_cell("### BEGIN HIDDEN TESTS\nx = 1", metadata=nbgrader_meta(True, False, "t"))
    with pytest.raises(RuntimeError, match="No end hidden tests"):
        feedback_preprocess(new_notebook(cells=[test]))


@pytest.mark.slow
def test_real_generate_feedback_survives_markers_in_answer_cells(tmp_path):
    root = tmp_path / "course"
    release = generate_release(root, [ASSIGNMENT]).release
    notebook = build_submission(REFERENCE, ASSIGNMENT, SOLUTIONS_DIR, release)
    answers = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")]
    for cell, text in zip(answers, TYPED, strict=False):
        cell.source += "\n" + text + "\n"
    notebook.cells.append(new_markdown_cell("### BEGIN HIDDEN TESTS"))
    target = notebook_path(root / "submitted" / STUDENT, ASSIGNMENT)
    target.parent.mkdir(parents=True)
    nbformat.write(notebook, target)

    run_nbgrader(root, "autograde", ASSIGNMENT)
    run_nbgrader(root, "generate_feedback", ASSIGNMENT, "--force")

    page = (root / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    page = html.unescape(re.sub(r"<[^>]+>", "", page))  # the text a reader sees
    assert "no idea what is hidden" in page  # the student's own text is shown as written
    source = nbformat.read(notebook_path(SOLUTIONS_DIR, ASSIGNMENT), as_version=4)
    hidden = set().union(*(distinctive_hidden_lines(cell.source) for cell in source.cells))
    assert hidden and not [line for line in hidden if line in page]
