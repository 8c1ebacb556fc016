"""Old import path of the feedback preprocessor: existing nbgrader_config.py files import
``HideHiddenTestTracebacks`` from here, and its class name is their config section."""

from autograder.grading.pipeline.preprocessors.hide_tracebacks import HideHiddenTestTracebacks

__all__ = ["HideHiddenTestTracebacks"]
