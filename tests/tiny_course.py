"""A one-exercise nbgrader course for tests that need real grading but not the course's
notebooks: a given setup cell, one solution cell (``answer``), one test cell after it."""

from pathlib import Path

import nbformat

from autograder.grading.course.nbgrader_workspace import create_workspace, run_nbgrader
from autograder.grading.course.repo_paths import notebook_path

ASSIGNMENT = "tiny"
SOLUTION = {"grade": False, "grade_id": "answer", "locked": False, "schema_version": 3}
SOLUTION |= {"solution": True, "task": False}
TEST = {"grade": True, "grade_id": "test_answer", "locked": True, "points": 1}
TEST |= {"schema_version": 3, "solution": False, "task": False}


def tiny_course(base: Path) -> Path:
    """The course's workspace under ``base``, its assignment generated and released."""
    setup = nbformat.v4.new_code_cell("import numpy as np")
    solution = nbformat.v4.new_code_cell("answer = None")
    solution.metadata["nbgrader"] = SOLUTION
    test = nbformat.v4.new_code_cell("assert answer == 42")
    test.metadata["nbgrader"] = TEST
    notebook = nbformat.v4.new_notebook(cells=[setup, solution, test])
    path = notebook_path(base / "solutions", ASSIGNMENT)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    root = create_workspace(base / "course", base / "solutions")
    run_nbgrader(root, "generate_assignment", ASSIGNMENT)
    return root


def hand_in(root: Path, student: str, answer_cell: str) -> None:
    """Submit the release with ``answer_cell`` as the solution cell's code."""
    release = nbformat.read(notebook_path(root / "release", ASSIGNMENT), 4)
    release.cells[1].source = answer_cell
    target = notebook_path(root / "submitted" / student, ASSIGNMENT)
    target.parent.mkdir(parents=True)
    nbformat.write(release, target)


def graded_cell(grade_id: str, source: str) -> nbformat.NotebookNode:
    """A locked test cell worth one point."""
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": grade_id,
        "locked": True,
        "points": 1,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    return cell
