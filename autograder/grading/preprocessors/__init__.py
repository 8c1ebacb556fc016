"""nbgrader preprocessors of this course, one class per module (nbgrader's own layout)."""

from autograder.grading.preprocessors.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["HideHiddenTestTracebacks"]
