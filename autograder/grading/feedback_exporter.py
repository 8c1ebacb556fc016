"""Old import path of the feedback exporter: existing courses' nbgrader_config.py import
``FeedbackExporter`` from here (it lives in ``autograder.grading.pipeline``)."""

from autograder.grading.pipeline.feedback_exporter import FeedbackExporter

__all__ = ["FeedbackExporter"]
