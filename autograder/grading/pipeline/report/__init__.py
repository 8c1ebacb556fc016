"""The instructor's grading report: one HTML page per assignment with the grade
distribution, each exercise's pass rate, the commonest failures and the integrity flags."""

from autograder.grading.pipeline.report.gather import gather_report, write_report

__all__ = ["gather_report", "write_report"]
