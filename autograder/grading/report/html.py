"""The grading report as one self-contained HTML page: inline CSS, figures as base64 PNG.

Everything that comes from students or from files a student can influence (ids, error
messages, flag details, log messages) is escaped: only this module's own markup is raw.
"""

import base64
import html
import statistics
from collections import Counter
from typing import TYPE_CHECKING

from autograder.grading.report.figures import EXERCISES_PNG, GRADES_PNG, GRADING_TIME_PNG

if TYPE_CHECKING:
    from autograder.grading.report.gather import AssignmentReport

NO_SCAN = "No integrity scan was run for this workspace (there is no integrity.json)."
NO_LOG = "No grading log: autograde_log.json does not exist in this workspace."

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:24px auto;
max-width:1100px;padding:0 16px;font-size:14px;line-height:1.45}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:32px;
border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right}
table.sortable th{cursor:pointer}pre{margin:0;white-space:pre-wrap;font-size:12px;
font-family:ui-monospace,Menlo,Consolas,monospace}.muted{color:#59636e}
img{max-width:100%;display:block;margin:8px 0}dl.summary{display:grid;
grid-template-columns:max-content auto;gap:2px 16px}dl.summary dt{font-weight:600}
dl.summary dd{margin:0}
"""

# Click a column head of a sortable table to sort by it; again to reverse.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var order = th.dataset.order === "up" ? -1 : 1;
      th.dataset.order = order === 1 ? "up" : "down";
      function key(row) {
        var cell = row.cells[column], text = cell.dataset.sort || cell.textContent;
        var number = parseFloat(text);
        return isNaN(number) ? text : number;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        return (x > y ? 1 : x < y ? -1 : 0) * order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


class Raw(str):
    """Markup this module wrote itself, to be put in a table cell without escaping."""


def escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def cell_html(value: object) -> str:
    """A table cell: numbers right-aligned with a sort key, text escaped, Raw as is."""
    if isinstance(value, Raw):
        return f"<td>{value}</td>"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td class="num" data-sort="{value!r}">{escape(number(value))}</td>'
    return f"<td>{escape(value)}</td>"


def table(columns: list[str], rows: list[list[object]], sortable: bool = False) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell_html(v) for v in row) + "</tr>" for row in rows)
    css = ' class="sortable"' if sortable else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def image(png: bytes | None, alt: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def paragraph(text: str, css: str = "muted") -> str:
    return f'<p class="{css}">{escape(text)}</p>'


def header_section(report: "AssignmentReport") -> str:
    scores = report.scores
    facts = [
        ("submissions", str(len(scores))),
        ("mean score", f"{statistics.fmean(scores):.2f}"),
        ("median score", f"{statistics.median(scores):.4g}"),
        ("max score", f"{report.max_score:g}"),
        ("graded", report.graded_when()),
    ]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
    return f"<h1>Grading report: {escape(report.assignment)}</h1><dl class='summary'>{items}</dl>"


def distribution_section(figures: dict[str, bytes]) -> str:
    return "<h2>Grade distribution</h2>" + image(figures.get(GRADES_PNG), "grade histogram")


def exercise_section(report: "AssignmentReport", figures: dict[str, bytes]) -> str:
    rows = [
        [s.cell, s.max_score, Raw(f"{s.mean_fraction:.0%}"), s.full, s.partial, s.zero]
        for s in report.exercises
    ]
    return (
        "<h2>Score per exercise across the cohort</h2>"
        + image(figures.get(EXERCISES_PNG), "students with full, partial and zero points")
        + table(["test cell", "points", "mean earned", "full", "partial", "zero"], rows)
    )


def failures_section(report: "AssignmentReport") -> str:
    title = "<h2>Checks that failed most</h2>"
    note = paragraph(
        "Grouped by test cell and the first line of the error; the example is one student's "
        "message. Tracebacks are left out: they would quote hidden tests."
    )
    if not report.failures:
        return title + paragraph("No graded cell failed with an error.")
    rows = [
        [g.cell, g.count, Raw(f"<pre>{escape(g.example)}</pre>"), ", ".join(g.students)]
        for g in report.failures
    ]
    return title + note + table(["test cell", "students", "message", "who"], rows)


def flags_section(report: "AssignmentReport") -> str:
    title = "<h2>Flagged submissions</h2>"
    if report.flags is None:
        return title + paragraph(NO_SCAN)
    if not report.flags:
        return title + paragraph("The integrity scan flagged nothing in this assignment.")
    # the integrity scan writes line 0 for a flag about the cell as a whole
    rows = [
        [f.student, f.cell, "whole cell" if f.line == "0" else f.line, f.rule, f.detail]
        for f in report.flags
    ]
    return title + table(["student", "cell", "line", "rule", "detail"], rows)


def grading_section(report: "AssignmentReport", figures: dict[str, bytes]) -> str:
    title = "<h2>Grading failures</h2>"
    if report.log is None:
        return title + paragraph(NO_LOG)
    failed = report.grading_failures
    if failed:
        rows = [
            [r.student, r.status, r.seconds, r.seed, Raw(f"<pre>{escape(r.message)}</pre>")]
            for r in failed
        ]
        body = table(["student", "status", "seconds", "seed", "message"], rows)
    else:
        body = paragraph("Every logged submission was graded (or deliberately skipped).")
    return title + body + image(figures.get(GRADING_TIME_PNG), "grading time histogram")


def students_section(report: "AssignmentReport") -> str:
    """One row per student in the gradebook, the log or the flags; click a head to sort."""
    scores = {s.student: s for s in report.submissions}
    statuses = {r.student: r.status for r in report.log or []}
    flags = Counter(f.student for f in report.flags or [])
    everyone = sorted(set(scores) | set(statuses) | set(flags))
    rows = []
    for student in everyone:
        graded = scores.get(student)
        status = statuses.get(student, "no log entry" if report.log is not None else "—")
        rows.append(
            [
                student,
                graded.score if graded else Raw("—"),
                graded.max_score if graded else Raw("—"),
                flags.get(student, 0),
                status,
            ]
        )
    columns = ["student", "score", "max", "flags", "status"]
    return "<h2>Students</h2>" + table(columns, rows, sortable=True)


def render_report(report: "AssignmentReport", figures: dict[str, bytes]) -> str:
    """The whole page for one assignment."""
    sections = [
        header_section(report),
        distribution_section(figures),
        exercise_section(report, figures),
        failures_section(report),
        flags_section(report),
        grading_section(report, figures),
        students_section(report),
    ]
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>Grading report: {escape(report.assignment)}</title>"
        f"<style>{STYLE}</style></head><body>\n"
        + "\n".join(sections)
        + f"\n<script>{SORT_SCRIPT}</script></body></html>\n"
    )
