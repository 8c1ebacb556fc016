"""What each grading did: the records of autograde_log.json, which a later run reads to
skip submissions graded cleanly before, and the summary one ``autograde`` call returns."""

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.grading.course.course_root import LOG_NAME, AutogradeError
from autograder.grading.course.grading_status import Status
from autograder.grading.course.json_records import append_records, read_records

STATUSES = tuple(Status)


@dataclass(frozen=True)
class GradingRecord:
    """One submission's grading, as written to autograde_log.json (these keys exactly)."""

    student: str
    assignment: str
    status: Status
    seconds: float
    seed: int
    message: str
    finished_at: str  # ISO 8601, UTC
    sandbox: str = ""  # "bubblewrap", or "not sandboxed (why)"; "" for a skip
    # What lateness was judged by (due date, extension, late policy): a change regrades.
    late_inputs: str = ""

    def as_dict(self) -> dict:
        """The record as a JSON object."""
        return asdict(self)

    @property
    def failed(self) -> bool:
        """The submission did not grade cleanly (neither graded nor skipped)."""
        return self.status not in (Status.GRADED, Status.SKIPPED)


@dataclass
class GradingRun:
    """What one ``autograde`` call did: a record per submission and the wall time."""

    assignment: str
    records: list[GradingRecord] = field(default_factory=list)
    wall_seconds: float = 0.0

    def with_status(self, *statuses: str) -> list[GradingRecord]:
        """The records whose status is one of ``statuses``."""
        return [r for r in self.records if r.status in statuses]

    @property
    def failures(self) -> list[GradingRecord]:
        """Submissions that did not grade cleanly (neither graded nor skipped)."""
        return [r for r in self.records if r.failed]


def read_log_json(root: Path) -> list[dict]:
    """Every record of ``root/autograde_log.json`` as its JSON object, oldest first ([] if none;
    the complete ones when a killed run left its last append cut short)."""
    try:
        return read_records(Path(root) / LOG_NAME)
    except ValueError as error:
        raise AutogradeError(str(error)) from None


def latest_records(records: Iterable[dict]) -> dict[tuple[str, str], dict]:
    """(student, assignment) -> its latest record: later records replace earlier ones."""
    return {(r["student"], r["assignment"]): r for r in records}


def append_log(root: Path, new: list[GradingRecord]) -> None:
    """Add records at the end of the log, writing only them (a record per job of a course of
    thousands); a run killed mid-write loses only the record being written."""
    try:
        append_records(Path(root) / LOG_NAME, [r.as_dict() for r in new])
    except ValueError as error:
        raise AutogradeError(str(error)) from None
