"""Are the demo cohort's submissions built as described, and do broken bug specs fail loudly?"""

import nbformat
import pytest

from autograder.grading.assurance.cohort import (
    BLANK,
    BUGS,
    REFERENCE,
    PlantedBug,
    apply_bug,
    build_submission,
    plant_edit,
    solved_sources,
    submitted_assignments,
)
from autograder.grading.assurance.redteam import in_cell
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)


def solution_cells(notebook):
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }


def test_blank_submission_is_the_release_unchanged():
    submission = build_submission(BLANK, "01-worked-example", SOLUTIONS_DIR, COURSE_DIR)
    release = nbformat.read(notebook_path(COURSE_DIR, "01-worked-example"), as_version=4)
    assert submission == release


def test_reference_submission_has_every_solution_typed_in_without_markers():
    submission = build_submission(REFERENCE, "01-worked-example", SOLUTIONS_DIR, COURSE_DIR)
    cells = solution_cells(submission)
    assert cells == solved_sources(notebook_path(SOLUTIONS_DIR, "01-worked-example"))
    assert all("NotImplementedError()" not in s and "### BEGIN" not in s for s in cells.values())


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.student)
def test_each_bug_changes_only_its_cell(bug):
    reference = solution_cells(
        build_submission(REFERENCE, bug.assignment, SOLUTIONS_DIR, COURSE_DIR)
    )
    buggy = solution_cells(build_submission(bug.student, bug.assignment, SOLUTIONS_DIR, COURSE_DIR))
    changed = {cell for cell in reference if reference[cell] != buggy[cell]}
    assert changed == {bug.cell}


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.student)
def test_a_bug_leaves_every_other_notebook_as_the_reference_wrote_it(bug):
    # So a bug in one notebook cannot cost points in another: each notebook carries its
    # own engine, and the other notebooks are graded exactly as the reference's.
    for assignment in assignments():
        if assignment != bug.assignment:
            theirs = build_submission(bug.student, assignment, SOLUTIONS_DIR, COURSE_DIR)
            assert theirs == build_submission(REFERENCE, assignment, SOLUTIONS_DIR, COURSE_DIR)
    assert submitted_assignments(bug.student, assignments()) == [bug.assignment]


def test_a_bug_whose_text_is_gone_is_an_error_not_a_correct_student():
    stale = PlantedBug(
        "stale", "01-worked-example", "matmul", "text no longer there", (("no such code", "x"),)
    )
    place = "bug 'stale' in cell 'matmul' of 01-worked-example"
    with pytest.raises(ValueError, match=f"{place}: expected 'no such code' once"):
        apply_bug("some source", stale)


def test_an_edit_is_planted_once_or_appended_and_text_found_twice_is_an_error():
    assert plant_edit("a = 1\nb = 2\n", "b = 2", "b = 3", "here") == "a = 1\nb = 3\n"
    assert plant_edit("a = 1\n\n", "", "b = 2", "here") == "a = 1\n\nb = 2"
    with pytest.raises(ValueError, match="here: expected 'a' once, found it 2 times"):
        plant_edit("a a", "a", "b", "here")


def test_the_red_team_plants_its_edits_the_same_way():
    notebook = build_submission(REFERENCE, "00-recipe", SOLUTIONS_DIR, COURSE_DIR)
    in_cell("scalar", "", "cheat = True")(notebook)
    (scalar,) = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "scalar"
    ]
    assert scalar.source.endswith("\n\ncheat = True")
    with pytest.raises(ValueError, match="red team, cell 'scalar': expected 'no such code' once"):
        in_cell("scalar", "no such code", "x")(notebook)


def test_student_names_are_unique():
    names = [bug.student for bug in BUGS]
    assert len(names) == len(set(names))
    assert {REFERENCE, BLANK}.isdisjoint(names)
