"""The report's inputs written by other tools: integrity.json and autograde_log.json.

Both are JSON lists of flat objects. They are read as plain JSON (not through the
modules that write them) and every value is kept as text for display, so a record
with an odd or missing field still shows instead of stopping the report.
"""

from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course.course_root import FLAGS_NAME, LOG_NAME
from autograder.grading.course.json_records import read_records


@dataclass(frozen=True)
class FlagRow:
    """One finding of the integrity scan, as the report shows it (every field as text)."""

    student: str
    cell: str
    line: str
    rule: str
    detail: str


@dataclass(frozen=True)
class LogRecord:
    """One autograde attempt of one student, as logged."""

    student: str
    status: str
    seconds: float | None
    seed: str
    message: str
    finished_at: str
    sandbox: str = ""  # "bubblewrap", "not sandboxed (why)", "" when not recorded


def _text(value: object) -> str:
    return "" if value is None else str(value)


def read_json_list(path: Path) -> list[dict] | None:
    """A JSON file holding a list of objects; None when the file does not exist (the
    complete records of a log whose last append a killed run cut short)."""
    if not path.is_file():
        return None
    try:
        records = read_records(path)
    except ValueError:
        raise ValueError(f"{path} should hold a JSON list of records") from None
    return [r for r in records if isinstance(r, dict)]


def read_flag_rows(root: Path, assignment: str) -> list[FlagRow] | None:
    """The integrity scan's findings for the assignment, sorted; None if no scan was run."""
    records = read_json_list(root / FLAGS_NAME)
    if records is None:
        return None
    flags = [
        FlagRow(*(_text(r.get(key)) for key in ("student", "cell", "line", "rule", "detail")))
        for r in records
        if r.get("assignment") == assignment
    ]
    return sorted(flags, key=lambda f: (f.student, f.cell, _line_key(f.line), f.rule, f.detail))


def _line_key(line: str) -> tuple[int, str]:
    """Sort line numbers as numbers, anything else after them."""
    return (int(line), "") if line.isdigit() else (1 << 30, line)


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def read_log_rows(root: Path, assignment: str) -> list[LogRecord] | None:
    """The assignment's grading records in log order; None when there is no log."""
    records = read_json_list(root / LOG_NAME)
    if records is None:
        return None
    return [
        LogRecord(
            student=_text(r.get("student")),
            status=_text(r.get("status")),
            seconds=_seconds(r.get("seconds")),
            seed=_text(r.get("seed")),
            message=_text(r.get("message")),
            finished_at=_text(r.get("finished_at")),
            sandbox=_text(r.get("sandbox")),
        )
        for r in records
        if r.get("assignment") == assignment
    ]


def latest_per_student(records: list[LogRecord]) -> list[LogRecord]:
    """Each student's last record (a later one in the log wins), sorted by student."""
    latest = {r.student: r for r in records}
    return [latest[student] for student in sorted(latest)]
