"""One submission graded as a job on a Dask worker: the job described as plain data (its
files as bytes, its settings), and its outcome or failure (time limit, dead worker) as a
JobResult."""

from dataclasses import dataclass
from pathlib import Path

from autograder.grading.autograde.job_gradebook import job_gradebook_bytes
from autograder.grading.autograde.job_spec import GradeRows, JobSpec
from autograder.grading.course_root import Course


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


@dataclass(frozen=True)
class JobResult:
    """How a job ended: status, the grades and autograded files if any, and its output."""

    job: Job
    status: str
    message: str
    seconds: float
    grades: GradeRows | None  # None: nbgrader saved no grades
    autograded: dict[str, bytes]
    output: str

    @property
    def grades_saved(self) -> bool:
        return self.grades is not None


def config_as_dict(course: Course) -> dict:
    """The course's nbgrader config as nested dicts, to send with every job."""
    from traitlets.config.loader import PyFileConfigLoader

    loaded = PyFileConfigLoader(course.config.name, path=str(course.config.parent)).load_config()

    def plain(value):
        return {k: plain(v) for k, v in value.items()} if isinstance(value, dict) else value

    return plain(loaded)


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` as relative path -> bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def build_spec(
    course: Course, job: Job, config: dict, snapshot: Path, threads: int | None
) -> JobSpec:
    """The job as plain data: the source and submission files, a private gradebook, limits."""
    return JobSpec(
        student=job.student,
        assignment=job.assignment,
        seed=job.seed,
        token=job.token,
        config=config,
        source=folder_files(course.source / job.assignment),
        submission=folder_files(course.submitted / job.student / job.assignment),
        gradebook=job_gradebook_bytes(course, snapshot, job.assignment, job.student),
        cell_timeout=job.cell_timeout,
        memory_limit_mb=job.memory_limit_mb,
        threads=threads,
    )


def failed(job: Job, status: str, message: str, seconds: float, output: str = "") -> JobResult:
    """A job that saved no grades."""
    return JobResult(job, status, message, seconds, None, {}, output)
