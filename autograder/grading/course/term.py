"""The term: each assignment's due date, the late window, extensions and closes by hand.

One file, ``term.toml`` at the course root, is the only place a due date is written. An
assignment is *open* until every hand-in it may still receive is in: its due date, plus the
late window (how long after the due date a late hand-in is still taken), plus the longest
extension granted on it. An instructor may close an assignment before then, giving a reason
(all hand-ins are in, say); with no due date, an assignment is open until closed that way.

    time_zone = "Europe/Madrid"        # for due dates written without an offset
    late_window_hours = 48

    [due]
    "00-recipe" = 2027-02-01T18:00:00
    "01-worked-example" = 2027-02-08T18:00:00+01:00

    [extensions."01-worked-example"]   # hours past the due date, per student
    alice = 72

    [closed]
    "00-recipe" = "every hand-in collected on 2027-02-02"
"""

import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.grading.course.repo_paths import REPO_ROOT, assignments

TERM_FILE = REPO_ROOT / "term.toml"
_KEYS = {"time_zone", "late_window_hours", "due", "extensions", "closed"}


class TermError(ValueError):
    """A term file that cannot be read as a term: one line naming the problem."""


@dataclass(frozen=True)
class Term:
    """Due dates (aware), the late window, extensions in hours and closes with reasons."""

    due: dict[str, datetime] = field(default_factory=dict)
    late_window: timedelta = timedelta(0)
    extensions: dict[str, dict[str, float]] = field(default_factory=dict)
    closed: dict[str, str] = field(default_factory=dict)

    def closes_at(self, assignment: str) -> datetime | None:
        """When the last hand-in of ``assignment`` may arrive; None without a due date."""
        due = self.due.get(assignment)
        if due is None:
            return None
        longest = max(self.extensions.get(assignment, {}).values(), default=0.0)
        return due + self.late_window + timedelta(hours=longest)

    def is_open(self, assignment: str, at: datetime) -> bool:
        """Whether hand-ins of ``assignment`` may still arrive at ``at``."""
        if assignment in self.closed:
            return False
        closes = self.closes_at(assignment)
        return closes is None or at < closes

    def why_open(self, assignment: str) -> str:
        """One phrase saying until when ``assignment`` is open, and why."""
        closes = self.closes_at(assignment)
        if closes is None:
            return "it has no due date in term.toml and is not closed there"
        due = self.due[assignment]
        parts = [f"due {due:%Y-%m-%d %H:%M %Z}".rstrip()]
        if self.late_window:
            parts.append(f"{self.late_window / timedelta(hours=1):g} h late window")
        longest = max(self.extensions.get(assignment, {}).values(), default=0.0)
        if longest:
            parts.append(f"{longest:g} h extension")
        return f"it is open until {closes:%Y-%m-%d %H:%M %Z} ({' + '.join(parts)})"


def read_term(path: Path = TERM_FILE, known: list[str] | None = None) -> Term:
    """The term of ``path`` (an empty term when the file is missing), every value checked."""
    if not path.is_file():
        return Term()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TermError(f"{path}: not TOML ({error})") from None
    known = known if known is not None else assignments()
    unknown_keys = sorted(set(raw) - _KEYS)
    if unknown_keys:
        raise TermError(f"{path}: unknown key(s) {unknown_keys}; known: {sorted(_KEYS)}")
    zone = _zone(path, raw.get("time_zone"))
    hours = raw.get("late_window_hours", 0)
    if not isinstance(hours, int | float) or hours < 0:
        raise TermError(f"{path}: late_window_hours must be a number of hours >= 0, not {hours!r}")
    for table in ("due", "extensions", "closed"):
        names = sorted(set(raw.get(table, {})) - set(known))
        if names:
            raise TermError(f"{path}: [{table}] names unknown assignment(s) {names}")
    due = {name: _aware(path, name, value, zone) for name, value in raw.get("due", {}).items()}
    extensions = {
        name: _extensions(path, name, granted) for name, granted in raw.get("extensions", {}).items()
    }
    closed = {}
    for name, reason in raw.get("closed", {}).items():
        if not isinstance(reason, str) or not reason.strip():
            raise TermError(f"{path}: [closed] {name} needs a reason (a non-empty string)")
        closed[name] = reason.strip()
    return Term(due, timedelta(hours=hours), extensions, closed)


def _zone(path: Path, name: object) -> ZoneInfo | None:
    if name is None:
        return None
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise TermError(f"{path}: unknown time_zone {name!r} (an IANA name: Europe/Madrid)") from None


def _aware(path: Path, name: str, value: object, zone: ZoneInfo | None) -> datetime:
    if not isinstance(value, datetime):
        raise TermError(f"{path}: [due] {name} = {value!r} is not a date and time")
    if value.tzinfo is not None:
        return value
    if zone is None:
        raise TermError(
            f"{path}: [due] {name} = {value.isoformat()} has no time zone: write an offset "
            "(2027-02-01T18:00:00+01:00) or set time_zone"
        )
    return value.replace(tzinfo=zone)


def _extensions(path: Path, name: str, granted: object) -> dict[str, float]:
    if not isinstance(granted, dict):
        raise TermError(f"{path}: [extensions.{name}] must map students to hours")
    for student, hours in granted.items():
        if not isinstance(hours, int | float) or hours <= 0:
            raise TermError(f"{path}: extension of {student} on {name} must be hours > 0")
    return {student: float(hours) for student, hours in granted.items()}


def now() -> datetime:
    """The present, aware."""
    return datetime.now(UTC)
