"""nbgrader preprocessors of this course, one class per module (nbgrader's own layout)."""

from autograder.grading.pipeline.preprocessors.clear_hidden_tests import ClearHiddenTestsInTestCells
from autograder.grading.pipeline.preprocessors.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["ClearHiddenTestsInTestCells", "HideHiddenTestTracebacks"]
