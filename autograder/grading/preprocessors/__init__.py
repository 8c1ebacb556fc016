"""nbgrader preprocessors of this course, one class per module (nbgrader's own layout)."""

from autograder.grading.preprocessors.clear_hidden_tests import ClearHiddenTestsInTestCells
from autograder.grading.preprocessors.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["ClearHiddenTestsInTestCells", "HideHiddenTestTracebacks"]
