"""What the grading report shows, as plain data: gathered by ``gather``, drawn by
``figures``, laid out by ``html``. It imports none of them, so they need not import each
other."""

from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.report.logs import FlagRow, LogRecord

# Log statuses that are not failures: graded fine, or deliberately not graded.
NOT_FAILURES = frozenset({Status.GRADED, Status.SKIPPED})


@dataclass(frozen=True)
class Submission:
    """One student's total for the assignment, as the gradebook has it."""

    student: str
    score: float
    max_score: float
    timestamp: str  # when submitted, "" when nbgrader recorded none
    cells: dict[str, tuple[float, float]]  # grade_id -> (score, max score)
    seconds_late: float = 0.0  # past the due date and the student's extension
    extension_hours: float = 0.0
    penalty: float = 0.0  # nbgrader's late penalty, already taken from ``score``


@dataclass(frozen=True)
class ExerciseStats:
    """How the cohort did on one graded test cell."""

    cell: str
    max_score: float
    mean_fraction: float  # mean of score / max over the submissions
    full: int
    partial: int
    zero: int


@dataclass(frozen=True)
class FailureGroup:
    """Students whose graded cell failed with the same headline (first line of the error)."""

    cell: str
    headline: str
    example: str  # one student's message, a few lines long
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class SimilarityMatch:
    """A flagged student's highest similarity match (``autograd-course similarity``)."""

    student: str
    partner: str  # another student, "reference", or an archive's "DIR/student"
    kind: str  # cohort, reference or archive
    score: float


@dataclass(frozen=True)
class SimilaritySummary:
    """The similarity run of an assignment: its page, and each flagged student's top match."""

    page: Path
    matches: list[SimilarityMatch]


@dataclass
class AssignmentReport:
    """Everything the report page shows for one assignment."""

    assignment: str
    max_score: float
    submissions: list[Submission]
    exercises: list[ExerciseStats]
    failures: list[FailureGroup]
    flags: list[FlagRow] | None  # None: no integrity scan was run
    log: list[LogRecord] | None  # latest record per student; None: no grading log
    # Latest record per student that is not "skipped": a skip ("unchanged since graded")
    # takes no time and happens after the grading, so times come from these.
    attempts: list[LogRecord] = field(default_factory=list)
    similarity: SimilaritySummary | None = None  # None: no similarity run for it

    @property
    def scores(self) -> list[float]:
        return [s.score for s in self.submissions]

    @property
    def grading_failures(self) -> list[LogRecord]:
        return [r for r in self.log or [] if r.status not in NOT_FAILURES]

    @property
    def grading_seconds(self) -> list[float]:
        return [r.seconds for r in self.attempts if r.seconds is not None]

    def graded_when(self) -> str:
        """When grading happened, from the log or the gradebook; never the clock's time now."""
        finished = sorted(r.finished_at for r in self.attempts if r.finished_at)
        if finished:
            return _span(finished) + " (grading log)"
        submitted = sorted(s.timestamp for s in self.submissions if s.timestamp)
        if submitted:
            return "submitted " + _span(submitted) + " (gradebook)"
        return "not recorded (no grading log, no submission times in the gradebook)"


def sandbox_text(attempts: list[LogRecord]) -> str:
    """Whether the students' kernels ran sandboxed, from the latest grading of each."""
    labels = [r.sandbox for r in attempts]
    unsandboxed = sorted({label for label in labels if label.startswith("not sandboxed")})
    if unsandboxed:
        count = sum(label.startswith("not sandboxed") for label in labels)
        return f"{count} of {len(labels)} submissions {'; '.join(unsandboxed)}"
    if labels and all(labels):
        return "sandboxed (" + ", ".join(sorted(set(labels))) + ")"
    return "not recorded in the grading log"


def _span(times: list[str]) -> str:
    return times[0] if times[0] == times[-1] else f"{times[0]} to {times[-1]}"
