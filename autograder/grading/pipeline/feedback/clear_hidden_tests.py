"""Clear hidden tests from test cells only, whatever a student typed into other cells."""

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograder test cell: graded, not an answer, so nbgrader restores its source."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


class ClearHiddenTestsInTestCells(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, applied to test cells and to no other cell.

    Hidden tests only ever live in test cells, whose source autograde restores from the
    gradebook. nbgrader's version also parses the student's own cells, so a student who
    writes the hidden-test marker there (a lone begin, a nested one, or any pair in an
    answer cell) makes ``generate_feedback`` fail for the whole notebook. Here the
    student's cells are left exactly as written.
    """

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, cell_index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Clear the hidden-test region of a test cell; return any other cell unchanged."""
        if not is_test_cell(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)
