"""``autograde``: every submission of an assignment graded as a job on a Dask cluster (a
local one of ``workers`` processes, or an existing one), each result brought into the course
as it finishes."""

import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder.checks.seed import student_seed
from autograder.grading.autograde.dask_cluster import (
    grading_client,
    run_on_cluster,
    threads_per_job,
)
from autograder.grading.autograde.job_gradebook import snapshot_gradebook
from autograder.grading.autograde.job_spec import JobSpec
from autograder.grading.autograde.jobs import Job, JobResult, build_spec, config_as_dict
from autograder.grading.autograde.log import GradingRun, append_log
from autograder.grading.autograde.merge import finish_job
from autograder.grading.autograde.plan import plan, skipped_record
from autograder.grading.autograde.status_line import Progress
from autograder.grading.course_root import check_gradable, load_course

DEFAULT_MEMORY_LIMIT_MB = 4096
# A submission still running after half an hour is killed (and graded 0, flagged): with
# nbgrader's per-cell timeout alone, a kernel that ignores interrupts would hold a worker
# for a cell timeout per cell.
DEFAULT_SUBMISSION_TIMEOUT = 1800.0


def autograde(
    root: Path,
    assignment: str,
    workers: int = 1,
    students: list[str] | None = None,
    force: bool = False,
    cell_timeout: int | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    submission_timeout: float | None = DEFAULT_SUBMISSION_TIMEOUT,
    progress: bool = True,
    seed_salt: str = "",
    scheduler: str | None = None,
) -> GradingRun:
    """Grade every submission of ``assignment`` under ``root`` with nbgrader, N at a time.

    On a local Dask cluster of ``workers`` processes, or on the existing cluster whose
    scheduler is at ``scheduler`` (``tcp://HOST:PORT``; SchedulerUnreachable, before
    anything is written, when it does not answer). Faulty submissions are recorded and
    graded 0 where nothing was saved; the others are unaffected. Records go to
    ``root/autograde_log.json`` (skips are returned, not logged).
    """
    started = time.perf_counter()
    course = load_course(Path(root))
    check_gradable(course, assignment)
    to_grade, skipped = plan(course, assignment, students, force)
    run = GradingRun(assignment, [skipped_record(s, assignment, seed_salt) for s in skipped])
    bar = Progress(len(to_grade), f"autograde {assignment}", enabled=progress)
    if progress and skipped:
        print(f"{len(skipped)} already graded, skipped (force regrades)", file=sys.stderr)
    if not to_grade:
        run.wall_seconds = time.perf_counter() - started
        return run
    workers = max(1, workers)
    local = scheduler is None
    # Connected first: an unreachable scheduler stops the run before anything is made.
    with grading_client(workers, scheduler) as client:
        # Outside the course root: nothing of a job is where a kernel could look for it.
        jobs_root = Path(tempfile.mkdtemp(prefix="autograde-run-"))
        try:
            snapshot = snapshot_gradebook(course, jobs_root / "snapshot.db")
            config = config_as_dict(course)
            threads = threads_per_job(workers, local)
            jobs = [
                Job(
                    student=student,
                    assignment=assignment,
                    seed=student_seed(student, assignment, seed_salt),
                    # Unique to this run, and naming the course, so a job's processes are found.
                    token=f"{course.root}:{assignment}:{student}:{jobs_root.name}",
                    cell_timeout=cell_timeout,
                    memory_limit_mb=memory_limit_mb,
                    submission_timeout=submission_timeout or None,
                )
                for student in to_grade
            ]

            def record(result: JobResult) -> None:
                graded = finish_job(course, result)
                append_log(course.root, [graded])
                run.records.append(graded)
                bar.update(graded)

            bar.show()

            def describe(job: Job) -> JobSpec:
                return build_spec(course, job, config, snapshot, threads)

            # A local cluster's job folders go under jobs_root, removed below even when a
            # worker was killed in the middle of a job; a remote worker uses its temp folder.
            scratch = str(jobs_root) if local else None
            run_on_cluster(client, jobs, describe, record, jobs_root.name, scratch)
        finally:
            shutil.rmtree(jobs_root, ignore_errors=True)
    run.wall_seconds = time.perf_counter() - started
    return run
