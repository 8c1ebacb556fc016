"""Old import path of the course's nbgrader preprocessors, for existing courses'
nbgrader_config.py (they live in ``autograder.grading.pipeline.preprocessors``)."""

from autograder.grading.pipeline.preprocessors import (
    ClearHiddenTestsInTestCells,
    HideHiddenTestTracebacks,
)

__all__ = ["ClearHiddenTestsInTestCells", "HideHiddenTestTracebacks"]
