"""The grading report's figures, drawn with matplotlib's Agg canvas into PNG bytes.

Figures are built on ``matplotlib.figure.Figure`` directly, not pyplot, so drawing them
touches no global state and needs no display. The PNGs carry no software or date
metadata, so the same grades give the same bytes.
"""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.grading.pipeline.report.model import AssignmentReport

GRADES_PNG = "grades.png"
EXERCISES_PNG = "exercises.png"
GRADING_TIME_PNG = "grading-time.png"

FULL_COLOUR = "#2da44e"
PARTIAL_COLOUR = "#d4a72c"
ZERO_COLOUR = "#cf222e"
BAR_COLOUR = "#0969da"


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, without metadata that would change from run to run."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def score_bins(max_score: float) -> list[float]:
    """Bin edges for totals: one bin centred on each point up to 25 points, else 20 bins."""
    if max_score <= 25:
        return [point - 0.5 for point in range(int(max_score) + 2)]
    return [max_score * i / 20 for i in range(21)]


def grade_histogram(scores: list[float], max_score: float, assignment: str) -> bytes:
    """How many students got each total."""
    figure = Figure(figsize=(6, 3.2))
    axes = figure.add_subplot()
    axes.hist(scores, bins=score_bins(max_score), color=BAR_COLOUR, edgecolor="white")
    axes.set_xlabel(f"total score (out of {max_score:g})")
    axes.set_ylabel("students")
    axes.set_title(f"{assignment}: grade distribution")
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    return png_bytes(figure)


def exercise_chart(report: AssignmentReport) -> bytes:
    """Per graded cell, students with full, partial and zero points, labelled with the mean."""
    stats = report.exercises
    figure = Figure(figsize=(7, 0.45 * len(stats) + 1.4))
    axes = figure.add_subplot()
    names = [s.cell for s in stats]
    rows = list(range(len(stats)))
    left = [0] * len(stats)
    for label, colour, counts in (
        ("full", FULL_COLOUR, [s.full for s in stats]),
        ("partial", PARTIAL_COLOUR, [s.partial for s in stats]),
        ("zero", ZERO_COLOUR, [s.zero for s in stats]),
    ):
        axes.barh(rows, counts, left=left, color=colour, label=label, height=0.6)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    for row, stat, end in zip(rows, stats, left, strict=True):
        axes.text(end, row, f"  mean {stat.mean_fraction:.0%}", va="center", fontsize=8)
    axes.set_yticks(rows, names)
    axes.invert_yaxis()  # notebook order, top to bottom
    axes.set_xlim(0, max(left, default=1) * 1.3)
    axes.set_xlabel("students")
    axes.set_title(f"{report.assignment}: score per exercise")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    figure.tight_layout()
    return png_bytes(figure)


def time_histogram(seconds: list[float], assignment: str) -> bytes:
    """How long grading took per student, from the grading log."""
    figure = Figure(figsize=(6, 3.2))
    axes = figure.add_subplot()
    axes.hist(seconds, bins=min(20, max(len(seconds), 1)), color=BAR_COLOUR, edgecolor="white")
    axes.set_xlabel("seconds per submission")
    axes.set_ylabel("students")
    axes.set_title(f"{assignment}: grading time")
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    return png_bytes(figure)


def report_figures(report: AssignmentReport) -> dict[str, bytes]:
    """File name -> PNG of every figure the report has data for."""
    figures = {GRADES_PNG: grade_histogram(report.scores, report.max_score, report.assignment)}
    if report.exercises:
        figures[EXERCISES_PNG] = exercise_chart(report)
    if report.grading_seconds:
        figures[GRADING_TIME_PNG] = time_histogram(report.grading_seconds, report.assignment)
    return figures
