"""The grading report as one self-contained HTML page: inline CSS, figures as base64 PNG.

The page is ``templates/report.html``, rendered by jinja2 with autoescaping, so everything
that comes from students or from files a student can influence (ids, error messages, flag
details, log messages) is escaped; only the template's own markup is not. This module
turns the report into the rows the template's one table macro lays out.
"""

import base64
import statistics
from collections import Counter
from dataclasses import dataclass
from functools import cache

import jinja2

from autograder.checks.templating import page_environment
from autograder.grading.pipeline.report.figures import EXERCISES_PNG, GRADES_PNG, GRADING_TIME_PNG
from autograder.grading.pipeline.report.model import AssignmentReport, Submission, sandbox_text

TEMPLATE = "report.html"
NOT_GRADED = "—"  # a student the log or the scan knows but the gradebook does not


@dataclass(frozen=True)
class Preformatted:
    """A table cell shown as preformatted text (a message with its line breaks)."""

    text: str


def is_numeric(value: object) -> bool:
    """Shown right-aligned and sorted as a number (a bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def format_number(value: float | None) -> str:
    return NOT_GRADED if value is None else f"{value:.4g}"


@cache
def environment() -> jinja2.Environment:
    """The template environment, autoescaping everything, with the tests the macro uses."""
    env = page_environment("autograder.grading.pipeline.report")
    env.tests["numeric"] = is_numeric
    env.tests["preformatted"] = lambda value: isinstance(value, Preformatted)
    env.filters["number"] = format_number
    return env


def summary(report: AssignmentReport) -> list[tuple[str, str]]:
    """The facts at the head of the page."""
    scores = report.scores
    return [
        ("submissions", str(len(scores))),
        ("mean score", f"{statistics.fmean(scores):.2f}"),
        ("median score", f"{statistics.median(scores):.4g}"),
        ("max score", f"{report.max_score:g}"),
        ("graded", report.graded_when()),
        ("kernels", sandbox_text(report.attempts)),
        ("lateness", lateness_text(report.submissions)),
    ]


def lateness_text(submissions: list[Submission]) -> str:
    """On time, late, extended, and the points the late policy took, over the submissions."""
    late = [s for s in submissions if s.seconds_late > 0]
    extended = sum(1 for s in submissions if s.extension_hours)
    taken = sum(s.penalty for s in submissions)
    return (
        f"{len(submissions) - len(late)} on time, {len(late)} late, {extended} with an "
        f"extension; late penalties {taken:g} points in all"
    )


def late_cell(submission: Submission | None) -> str:
    """How late one submission was, with its extension and penalty ("" when on time)."""
    if submission is None or not (submission.seconds_late or submission.extension_hours):
        return ""
    parts = []
    if submission.seconds_late:
        parts.append(f"{submission.seconds_late / 3600:.1f} h late")
    if submission.extension_hours:
        parts.append(f"extension {submission.extension_hours:g} h")
    if submission.penalty:
        parts.append(f"-{submission.penalty:g}")
    return ", ".join(parts)


def exercise_rows(report: AssignmentReport) -> list[list[object]]:
    return [
        [s.cell, s.max_score, f"{s.mean_fraction:.0%}", s.full, s.partial, s.zero]
        for s in report.exercises
    ]


def failure_rows(report: AssignmentReport) -> list[list[object]]:
    return [
        [g.cell, g.count, Preformatted(g.example), ", ".join(g.students)] for g in report.failures
    ]


def flag_rows(report: AssignmentReport) -> list[list[object]]:
    # the integrity scan writes line 0 for a flag about the cell as a whole
    return [
        [f.student, f.cell, "whole cell" if f.line == "0" else f.line, f.rule, f.detail]
        for f in report.flags or []
    ]


def grading_rows(report: AssignmentReport) -> list[list[object]]:
    return [
        [r.student, r.status, r.seconds, r.seed, Preformatted(r.message)]
        for r in report.grading_failures
    ]


def is_runtime(rule: str) -> bool:
    """A flag of the runtime record (what the code did while graded), not of the scan."""
    return rule.startswith("runtime-")


def student_rows(report: AssignmentReport) -> list[list[object]]:
    """One row per student in the gradebook, the log or the flags."""
    scores = {s.student: s for s in report.submissions}
    statuses = {r.student: r.status for r in report.log or []}
    flags = Counter(f.student for f in report.flags or [] if not is_runtime(f.rule))
    runtime = Counter(f.student for f in report.flags or [] if is_runtime(f.rule))
    rows = []
    for student in sorted(set(scores) | set(statuses) | set(flags) | set(runtime)):
        graded = scores.get(student)
        status = statuses.get(student, "no log entry" if report.log is not None else "—")
        rows.append(
            [
                student,
                graded.score if graded else NOT_GRADED,
                graded.max_score if graded else NOT_GRADED,
                late_cell(graded),
                flags.get(student, 0),
                runtime.get(student, 0),
                status,
            ]
        )
    return rows


def similarity_rows(report: AssignmentReport) -> list[list[object]]:
    matches = report.similarity.matches if report.similarity else []
    return [[m.student, m.partner, m.kind, f"{m.score:.2f}"] for m in matches]


def render_report(
    report: AssignmentReport, figures: dict[str, bytes], similarity_link: str | None = None
) -> str:
    """The whole page for one assignment (``similarity_link``: the similarity page, relative
    to this one, when there was a similarity run)."""
    return (
        environment()
        .get_template(TEMPLATE)
        .render(
            report=report,
            summary=summary(report),
            images={name: base64.b64encode(png).decode("ascii") for name, png in figures.items()},
            GRADES_PNG=GRADES_PNG,
            EXERCISES_PNG=EXERCISES_PNG,
            GRADING_TIME_PNG=GRADING_TIME_PNG,
            exercise_rows=exercise_rows(report),
            failure_rows=failure_rows(report),
            flag_rows=flag_rows(report),
            similarity_rows=similarity_rows(report),
            similarity_link=similarity_link,
            grading_rows=grading_rows(report),
            student_rows=student_rows(report),
        )
        + "\n"
    )
