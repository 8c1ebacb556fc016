"""A one-exercise nbgrader course for tests that need real grading but not the course's
notebooks: a given setup cell, one solution cell (``answer``), one test cell after it."""

from pathlib import Path

import nbformat

from autograder.grading.authoring.release import generate_assignment
from autograder.grading.course.nbgrader_workspace import create_workspace
from autograder.grading.course.repo_paths import notebook_path

ASSIGNMENT = "tiny"
SOLUTION = {"grade": False, "grade_id": "answer", "locked": False, "schema_version": 3}
SOLUTION |= {"solution": True, "task": False}
TEST = {"grade": True, "grade_id": "test_answer", "locked": True, "points": 1}
TEST |= {"schema_version": 3, "solution": False, "task": False}


def tiny_course(base: Path, names: tuple[str, ...] = (ASSIGNMENT,), points: int = 1) -> Path:
    """The course's workspace under ``base``, its assignments (each the same one exercise,
    its test worth ``points``) generated and released."""
    setup = nbformat.v4.new_code_cell("import numpy as np")
    solution = nbformat.v4.new_code_cell("answer = None")
    solution.metadata["nbgrader"] = SOLUTION
    test = nbformat.v4.new_code_cell("assert answer == 42")
    test.metadata["nbgrader"] = TEST | {"points": points}
    notebook = nbformat.v4.new_notebook(cells=[setup, solution, test])
    for name in names:
        path = notebook_path(base / "solutions", name)
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, path)
    course = create_workspace(base / "course", base / "solutions")
    for name in names:
        generate_assignment(course.loaded_config, name)
    return course.root


def hand_in(root: Path, student: str, answer_cell: str, assignment: str = ASSIGNMENT) -> Path:
    """Submit the release with ``answer_cell`` as the solution cell's code; return the
    hand-in's folder."""
    release = nbformat.read(notebook_path(root / "release", assignment), 4)
    release.cells[1].source = answer_cell
    target = notebook_path(root / "submitted" / student, assignment)
    target.parent.mkdir(parents=True)
    nbformat.write(release, target)
    return target.parent


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


def extensions_gradebook(folder, assignment: str, granted: dict[str, float]) -> None:
    """nbgrader's gradebook beside the term file, with these extensions (hours)."""
    from nbgrader.api import Gradebook

    from autograder.grading.course.course_root import tools_on_path
    from autograder.grading.course.schema_head import read_schema_head_in_process

    tools_on_path()
    read_schema_head_in_process()
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as book:
        book.add_assignment(assignment)
        for student, hours in granted.items():
            book.add_student(student)
            book.update_or_create_submission(assignment, student)
            book.grant_extension(assignment, student, hours=hours)
