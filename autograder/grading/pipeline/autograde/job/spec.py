"""A grading job and its outcome as plain data, so they can travel to a worker process (or,
later, another machine): the files as bytes, the settings as values, nothing that points
into the course's folders; and, on the grading process's side, the job as the run names it
(``Job``) and how it ended (``JobResult``)."""

import datetime as dt
from dataclasses import dataclass, field

from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.autograde.job.sandbox import SandboxOptions
from autograder.grading.pipeline.integrity.runtime_record import RuntimeRecord

# The environment variable that carries a job's token to its kernel and everything the
# kernel starts: the job's processes are found again by it.
JOB_TOKEN_ENV = "AUTOGRADER_JOB"


@dataclass(frozen=True)
class GradeRows:
    """What ``nbgrader autograde`` wrote for one submission: its automatic fields only."""

    timestamp: dt.datetime | None
    # notebook -> late submission penalty
    penalties: dict[str, float | None]
    # (notebook, grade cell) -> (auto_score, needs_manual_grade)
    grades: dict[tuple[str, str], tuple[float | None, bool]]
    # (notebook, comment cell) -> auto_comment
    comments: dict[tuple[str, str], str | None]


@dataclass(frozen=True)
class JobSpec:
    """Everything a worker needs to grade one submission, and nothing else."""

    student: str
    assignment: str
    seed: int  # the student's AUTOGRADER_SEED, for the kernel
    token: str  # put in the kernel's environment, to find its processes again
    config: dict  # the course's nbgrader config (a traitlets Config, as nested dicts)
    source: dict[str, bytes]  # source/ASSIGNMENT/..., paths relative to that folder
    submission: dict[str, bytes]  # submitted/STUDENT/ASSIGNMENT/..., relative paths
    gradebook: bytes  # a private sqlite gradebook: assignments and this student's rows
    cell_timeout: int | None
    memory_limit_mb: int | None
    threads: int | None  # BLAS/OpenMP threads for the kernel (None: leave as is)
    extra_env: dict[str, str] = field(default_factory=dict)
    verdicts: str = "trusted"  # test cells in a second, trusted kernel ("kernel": the student's)
    sandbox: SandboxOptions | None = None  # None: the kernel runs unsandboxed


@dataclass(frozen=True)
class JobOutcome:
    """What came of a job: status, grades, the autograded files and nbgrader's output."""

    status: Status
    message: str
    seconds: float
    grades: GradeRows | None  # None: nbgrader saved no grades
    autograded: dict[str, bytes]  # autograded/STUDENT/ASSIGNMENT/..., relative paths
    output: str  # nbgrader's log, its traceback if it failed, and the kernel's stderr
    runtime: RuntimeRecord | None = None  # the kernel's runtime record (None: none read)


@dataclass(frozen=True)
class Job:
    """One submission to grade, and the limits it runs under."""

    student: str
    assignment: str
    seed: int
    token: str  # marks the job's kernel and its children (in their environment)
    cell_timeout: int | None
    memory_limit_mb: int | None
    submission_timeout: float | None
    verdicts: str = "trusted"  # who runs the test cells: see verdicts.executor
    sandbox: SandboxOptions | None = None  # None: the kernel runs unsandboxed


@dataclass(frozen=True)
class JobResult:
    """How a job ended: status, the grades and autograded files if any, and its output."""

    job: Job
    status: Status
    message: str
    seconds: float
    grades: GradeRows | None  # None: nbgrader saved no grades
    autograded: dict[str, bytes]
    output: str
    runtime: RuntimeRecord | None = None  # what the student's code did (audit hook)

    @property
    def grades_saved(self) -> bool:
        return self.grades is not None


def failed(
    job: Job,
    status: Status,
    message: str,
    seconds: float,
    output: str = "",
    runtime: RuntimeRecord | None = None,
) -> JobResult:
    """A job that saved no grades."""
    return JobResult(job, status, message, seconds, None, {}, output, runtime)
