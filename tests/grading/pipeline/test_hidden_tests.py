"""Hidden-test blocks are split out of a cell exactly as nbgrader's ClearHiddenTests does."""

import nbformat
import pytest
from nbgrader.preprocessors import ClearHiddenTests

from autograder.checks.hidden_tests import split_hidden_tests
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path
from autograder.grading.pipeline.integrity.locked import without_hidden_tests

CELL = """\
assert f(1) == 2
    ### BEGIN HIDDEN TESTS
    assert f(2) == 4
### END HIDDEN TESTS
assert f(0) == 0
### BEGIN HIDDEN TESTS
assert f(3) == 6
### END HIDDEN TESTS"""


def test_blocks_and_their_delimiter_lines_are_cut():
    visible, blocks = split_hidden_tests(CELL)
    assert visible == "assert f(1) == 2\nassert f(0) == 0"
    assert blocks == ["    assert f(2) == 4", "assert f(3) == 6"]


def test_a_cell_without_hidden_tests_is_all_visible():
    assert split_hidden_tests("x = 1\n") == ("x = 1\n", [])


@pytest.mark.parametrize(
    "source",
    ["### BEGIN HIDDEN TESTS\nx", "### BEGIN HIDDEN TESTS\n### BEGIN HIDDEN TESTS\n"],
    ids=["never closed", "opened twice"],
)
def test_a_broken_block_is_an_error(source):
    with pytest.raises(ValueError, match="hidden tests"):
        split_hidden_tests(source)


def test_the_locked_cell_comparison_reads_a_broken_block_as_written():
    assert without_hidden_tests("x = 1\n### BEGIN HIDDEN TESTS\ny = 2") == (
        "x = 1\n### BEGIN HIDDEN TESTS\ny = 2"
    )


def nbgrader_visible(source: str) -> str:
    """What nbgrader's own preprocessor leaves of a graded cell's source."""
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t", "points": 1}
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


@pytest.mark.parametrize("assignment", assignments())
def test_every_solution_cell_splits_as_nbgrader_releases_it(assignment):
    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    sources = [c.source for c in notebook.cells if c.cell_type == "code"] + [CELL]
    for source in sources:
        assert split_hidden_tests(source)[0] == nbgrader_visible(source)
