"""The feedback page a student reads: nbgrader's preprocessors of this course (one class per
module, nbgrader's own layout), the HTML exporter, and the sanitiser both use on student
markup."""

from autograder.grading.pipeline.feedback.clear_hidden_tests import ClearHiddenTestsInTestCells
from autograder.grading.pipeline.feedback.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["ClearHiddenTestsInTestCells", "HideHiddenTestTracebacks"]
