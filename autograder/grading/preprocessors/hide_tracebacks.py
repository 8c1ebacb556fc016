"""Old import path (existing courses' nbgrader_config.py): see ``pipeline.preprocessors``."""

from autograder.grading.pipeline.preprocessors.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["HideHiddenTestTracebacks"]
