"""Old import path (existing Spanish courses' nbgrader_config.py): see ``authoring.i18n``."""

from autograder.grading.authoring.i18n.feedback import LocalizedFeedbackExporter

__all__ = ["LocalizedFeedbackExporter"]
