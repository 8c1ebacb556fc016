"""One submission graded by its own ``nbgrader autograde A --student S`` process in a
private job folder, under a memory limit and an optional wall-clock limit."""

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.checks.seed import SEED_ENV
from autograder.grading.autograde.classify import classify_failure, classify_graded
from autograder.grading.autograde.job_gradebook import add_own_rows
from autograder.grading.autograde.processes import (
    JOB_TOKEN_ENV,
    LIMITED_NBGRADER,
    RunningJobs,
    kill_job_processes,
)
from autograder.grading.course_root import Course
from autograder.grading.nbgrader_workspace import course_config, kernel_environment


@dataclass(frozen=True)
class Job:
    """One submission to grade in its own folder, and the limits it runs under."""

    student: str
    assignment: str
    folder: Path
    seed: int
    cell_timeout: int | None
    memory_limit_mb: int | None
    submission_timeout: float | None

    @property
    def token(self) -> str:
        """Marks the job's processes (in their environment): its folder is unique."""
        return str(self.folder)

    @property
    def gradebook(self) -> Path:
        return self.folder / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"

    @property
    def autograded(self) -> Path:
        """Where nbgrader writes the graded notebooks."""
        return self.folder / "autograded" / self.student / self.assignment


@dataclass(frozen=True)
class JobResult:
    """How a job's nbgrader process ended and what the notebooks say about it."""

    job: Job
    status: str
    message: str
    seconds: float
    grades_saved: bool  # nbgrader finished and its gradebook holds this submission's grades
    output: str  # nbgrader's whole output


def prepare_job(course: Course, job: Job, gradebook_snapshot: Path) -> None:
    """Make the job's folder: config, a private gradebook, and the one submission."""
    job.folder.mkdir(parents=True)
    # The course's config, pointed at the job folder; the source stays the course's.
    (job.folder / "nbgrader_config.py").write_text(
        course_config(
            course.config,
            job.folder,
            job.db_url,
            source_directory=str(course.source),
            submitted_directory="submitted",
            autograded_directory="autograded",
        )
    )
    shutil.copyfile(gradebook_snapshot, job.gradebook)
    add_own_rows(course, job.gradebook, job.assignment, job.student)
    shutil.copytree(
        course.submitted / job.student / job.assignment,
        job.folder / "submitted" / job.student / job.assignment,
    )


def job_command(job: Job) -> list[str]:
    """``nbgrader autograde`` for the job's one student, under its memory limit."""
    limit = (job.memory_limit_mb or 0) * 2**20
    command = [sys.executable, "-c", LIMITED_NBGRADER, str(limit)]
    command += ["autograde", job.assignment, "--student", job.student]
    if job.cell_timeout is not None:
        # Execute, not ExecutePreprocessor: a course config's c.Execute.timeout would
        # otherwise win, being set on the more specific class.
        command.append(f"--Execute.timeout={job.cell_timeout}")
    return command


def job_environment(job: Job, threads: int | None) -> dict[str, str]:
    """The kernel's environment: this Python's kernel, the student's seed, thread counts."""
    env = kernel_environment()
    env[SEED_ENV] = str(job.seed)
    env[JOB_TOKEN_ENV] = job.token
    # Fewer malloc arenas: each reserves 64 MiB of address space against the memory limit.
    env.setdefault("MALLOC_ARENA_MAX", "2")
    if threads:
        # N kernels at once each starting a BLAS thread per core would fight for the cores.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(name, str(threads))
    return env


def run_job(job: Job, threads: int | None, running: RunningJobs) -> JobResult:
    """Run nbgrader for one submission and classify how it ended."""
    started = time.perf_counter()
    output_path = job.folder / "nbgrader-output.txt"
    with output_path.open("w") as output:
        if running.cancelled.is_set():
            return JobResult(job, "error", "cancelled", 0.0, False, "")
        process = subprocess.Popen(
            job_command(job),
            cwd=job.folder,
            env=job_environment(job, threads),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as one
        )
        running.add(process, job.token)
        killed = False
        try:
            process.wait(timeout=job.submission_timeout)
        except subprocess.TimeoutExpired:
            killed = True
        finally:
            # Also after a normal exit: a kernel that ignored its shutdown lingers on.
            kill_job_processes(job.token, process)
            running.discard(process)
    seconds = time.perf_counter() - started
    text = output_path.read_text(errors="replace")
    if killed:
        message = f"killed after the submission time limit of {job.submission_timeout:g} s"
        return JobResult(job, "timeout", message, seconds, False, text)
    if process.returncode != 0:
        status, message = classify_failure(process.returncode, text)
        return JobResult(job, status, message, seconds, False, text)
    status, message = classify_graded(job.autograded)
    return JobResult(job, status, message, seconds, True, text)
