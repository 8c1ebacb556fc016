"""Old import path (existing courses' nbgrader_config.py): see ``pipeline.preprocessors``."""

from autograder.grading.pipeline.preprocessors.clear_hidden_tests import (
    ClearHiddenTestsInTestCells,
)

__all__ = ["ClearHiddenTestsInTestCells"]
