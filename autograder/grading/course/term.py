"""The term: each assignment's due date, the late window and policy, extensions, closes.

One file, ``term.toml`` at the course root, is the only place a due date or the late policy
is written; extensions are nbgrader's, in the course root's gradebook (``autograd-course
extension`` grants them). An assignment is *open* until every hand-in it may still receive
is in: its due date, plus the late window (how long after the due date a late hand-in is
still taken), plus the longest extension granted on it. An instructor may close an
assignment before then, giving a reason (all hand-ins are in, say); with no due date, an
assignment is open until closed that way.

    time_zone = "Europe/Madrid"        # for due dates written without an offset
    late_window_hours = 48

    [due]
    "00-recipe" = 2027-02-01T18:00:00
    "01-worked-example" = 2027-02-08T18:00:00+01:00

    [late_policy]                      # nbgrader's late penalty (late_policy.py)
    kind = "percent"                   # "none" (the default), "zero" or "percent"
    percent = 10                       # of the score, per started hour or day late
    per = "day"
    cap = 50                           # never more than this percent in all
    grace_minutes = 15                 # no penalty for a hand-in this late or less

    [closed]
    "00-recipe" = "every hand-in collected on 2027-02-02"
"""

import contextlib
import json
import sqlite3
import tomllib
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.grading.course.repo_paths import REPO_ROOT, assignments

TERM_FILE = REPO_ROOT / "term.toml"
GRADEBOOK_NAME = "gradebook.db"  # nbgrader's default gradebook, in the course root
_KEYS = {"time_zone", "late_window_hours", "due", "late_policy", "closed"}
POLICY_KINDS = ("none", "zero", "percent")
UNITS = {"hour": 3600, "day": 86400}


@dataclass(frozen=True)
class LatePolicy:
    """How a late hand-in loses points: none, all of them, or ``percent`` of the score per
    started ``per`` (hour, day) late, at most ``cap`` percent; none within the grace."""

    kind: str = "none"
    percent: float = 0.0
    per: str = "day"
    cap: float = 100.0
    grace_minutes: float = 0.0

    def penalty(self, score: float, seconds_late: float) -> float:
        """The points taken from ``score`` for a hand-in ``seconds_late`` after its due date."""
        if seconds_late <= self.grace_minutes * 60 or self.kind == "none":
            return 0.0
        if self.kind == "zero":
            return score
        started = -(-seconds_late // UNITS[self.per])  # a started hour or day counts whole
        return score * min(self.cap, self.percent * started) / 100

    def as_json(self) -> str:
        """The policy as one JSON text: what a job's config carries, what the log compares."""
        return json.dumps(asdict(self), sort_keys=True)

    def describe(self) -> str:
        """The policy in a few words, for pages and logs."""
        grace = f" after {self.grace_minutes:g} min of grace" if self.grace_minutes else ""
        if self.kind == "none":
            return "no late penalty"
        if self.kind == "zero":
            return f"0 when late{grace}"
        return f"{self.percent:g}% per started {self.per} late, at most {self.cap:g}%{grace}"


class TermError(ValueError):
    """A term file that cannot be read as a term: one line naming the problem."""


@dataclass(frozen=True)
class Term:
    """Due dates (aware), the late window and policy, extensions in hours (per assignment,
    per student: the gradebook's) and closes with reasons."""

    due: dict[str, datetime] = field(default_factory=dict)
    late_window: timedelta = timedelta(0)
    extensions: dict[str, dict[str, float]] = field(default_factory=dict)
    closed: dict[str, str] = field(default_factory=dict)
    late_policy: LatePolicy = LatePolicy()

    def longest_extension(self, assignment: str) -> float:
        """The longest extension granted on ``assignment``, in hours (0 without one)."""
        return max(self.extensions.get(assignment, {}).values(), default=0.0)

    def closes_at(self, assignment: str) -> datetime | None:
        """When the last hand-in of ``assignment`` may arrive; None without a due date."""
        due = self.due.get(assignment)
        if due is None:
            return None
        return due + self.late_window + timedelta(hours=self.longest_extension(assignment))

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
        longest = self.longest_extension(assignment)
        if longest:
            parts.append(f"{longest:g} h extension")
        return f"it is open until {closes:%Y-%m-%d %H:%M %Z} ({' + '.join(parts)})"


def read_term(
    path: Path = TERM_FILE, known: list[str] | None = None, gradebook: Path | None = None
) -> Term:
    """The term of ``path`` (an empty term when the file is missing), every value checked,
    with the extensions of ``gradebook`` (by default the course root's, beside ``path``)."""
    gradebook = gradebook or path.parent / GRADEBOOK_NAME
    extensions = gradebook_extensions(gradebook)
    if not path.is_file():
        return Term(extensions=extensions)
    raw = _table(path)
    known = known if known is not None else assignments()
    zone = _zone(path, raw.get("time_zone"))
    hours = raw.get("late_window_hours", 0)
    if not _number(hours) or hours < 0:
        raise TermError(f"{path}: late_window_hours must be a number of hours >= 0, not {hours!r}")
    for table in ("due", "closed"):
        names = sorted(set(raw.get(table, {})) - set(known))
        if names:
            raise TermError(f"{path}: [{table}] names unknown assignment(s) {names}")
    due = {name: _aware(path, name, value, zone) for name, value in raw.get("due", {}).items()}
    closed = {}
    for name, reason in raw.get("closed", {}).items():
        if not isinstance(reason, str) or not reason.strip():
            raise TermError(f"{path}: [closed] {name} needs a reason (a non-empty string)")
        closed[name] = reason.strip()
    policy = _policy(path, raw.get("late_policy", {}))
    return Term(due, timedelta(hours=hours), extensions, closed, policy)


def read_late_policy(path: Path) -> LatePolicy:
    """The late policy of the term file ``path`` (none when the file is missing), checked."""
    return _policy(path, _table(path).get("late_policy", {})) if path.is_file() else LatePolicy()


def _table(path: Path) -> dict:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TermError(f"{path}: not TOML ({error})") from None
    unknown_keys = sorted(set(raw) - _KEYS)
    if unknown_keys:
        hint = " (extensions are nbgrader's: autograd-course extension)" * ("extensions" in raw)
        raise TermError(f"{path}: unknown key(s) {unknown_keys}; known: {sorted(_KEYS)}{hint}")
    return raw


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _policy(path: Path, raw: object) -> LatePolicy:
    if not isinstance(raw, dict):
        raise TermError(f"{path}: [late_policy] must be a table")
    unknown = sorted(set(raw) - {"kind", "percent", "per", "cap", "grace_minutes"})
    if unknown:
        raise TermError(f"{path}: [late_policy] has unknown key(s) {unknown}")
    kind = raw.get("kind", "none")
    if kind not in POLICY_KINDS:
        raise TermError(f"{path}: [late_policy] kind must be one of {POLICY_KINDS}, not {kind!r}")
    per = raw.get("per", "day")
    if per not in UNITS:
        raise TermError(f"{path}: [late_policy] per must be one of {tuple(UNITS)}, not {per!r}")
    numbers = {"percent": 0.0, "cap": 100.0, "grace_minutes": 0.0}
    values = {key: raw.get(key, default) for key, default in numbers.items()}
    for key, value in values.items():
        if not _number(value) or value < 0:
            raise TermError(f"{path}: [late_policy] {key} must be a number >= 0, not {value!r}")
    if values["cap"] > 100:
        raise TermError(f"{path}: [late_policy] cap is a percent of the score: at most 100")
    if kind == "percent" and not values["percent"]:
        raise TermError(f"{path}: [late_policy] kind \"percent\" needs percent > 0")
    return LatePolicy(kind, float(values["percent"]), per, float(values["cap"]),
                      float(values["grace_minutes"]))  # fmt: skip


def gradebook_extensions(gradebook: Path) -> dict[str, dict[str, float]]:
    """{assignment: {student: hours}} of the extensions in nbgrader's sqlite ``gradebook``
    ({} without one). Read with sqlite alone: the kit's command needs no nbgrader session."""
    if not gradebook.is_file():
        return {}
    query = (
        "SELECT assignment.name, submitted_assignment.student_id, "
        "submitted_assignment.extension FROM submitted_assignment JOIN assignment "
        "ON submitted_assignment.assignment_id = assignment.id "
        "WHERE submitted_assignment.extension IS NOT NULL"
    )
    with contextlib.closing(sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True)) as db:
        try:
            rows = db.execute(query).fetchall()
        except sqlite3.DatabaseError as error:
            raise TermError(f"{gradebook}: cannot read its extensions ({error})") from None
    found: dict[str, dict[str, float]] = {}
    for assignment, student, interval in rows:
        # SQLAlchemy stores an Interval in sqlite as the datetime 1970-01-01 + the interval
        hours = (datetime.fromisoformat(interval) - datetime(1970, 1, 1)) / timedelta(hours=1)
        found.setdefault(assignment, {})[student] = hours
    return found


def _zone(path: Path, name: object) -> ZoneInfo | None:
    if name is None:
        return None
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise TermError(f"{path}: unknown time_zone {name!r} (an IANA name: Europe/Rome)") from None


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


def now() -> datetime:
    """The present, aware."""
    return datetime.now(UTC)
