"""Feedback that keeps hidden tests hidden, tracebacks included."""

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder.grading.pipeline.feedback.clear_hidden_tests import is_test_cell


class HideHiddenTestTracebacks(NbGraderPreprocessor):
    """In test cells with hidden tests, reduce each error to its one-line message.

    nbgrader's ClearHiddenTests removes hidden tests from a cell's source, but the
    traceback of a failing hidden test still quotes its lines. Run this before it: the
    student keeps the assertion message, which our checks write to be actionable. Only
    test cells can hold hidden tests: the marker typed into a student's own cell changes
    nothing there.
    """

    begin_test_delimeter = Unicode(
        "BEGIN HIDDEN TESTS", help="The delimiter marking the beginning of hidden tests"
    ).tag(config=True)

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, cell_index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Shorten the tracebacks of a test cell that holds hidden tests."""
        if is_test_cell(cell) and self.begin_test_delimeter in cell.source:
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    message = f"{output.ename}: {output.evalue}" if output.evalue else output.ename
                    output.traceback = [message]
        return cell, resources
