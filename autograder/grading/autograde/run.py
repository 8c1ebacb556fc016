"""``autograde``: every submission of an assignment graded by its own nbgrader job, up to
``workers`` at once, each result brought into the course as it finishes."""

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

from autograder.checks.seed import student_seed
from autograder.grading.autograde.job_gradebook import snapshot_gradebook
from autograder.grading.autograde.jobs import Job, JobResult, prepare_job, run_job
from autograder.grading.autograde.log import GradingRun, append_log
from autograder.grading.autograde.merge import finish_job
from autograder.grading.autograde.plan import plan, skipped_record
from autograder.grading.autograde.processes import RunningJobs
from autograder.grading.autograde.status_line import Progress
from autograder.grading.course_root import check_gradable, load_course

DEFAULT_MEMORY_LIMIT_MB = 4096


def autograde(
    root: Path,
    assignment: str,
    workers: int = 1,
    students: list[str] | None = None,
    force: bool = False,
    cell_timeout: int | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    submission_timeout: float | None = None,
    progress: bool = True,
    seed_salt: str = "",
) -> GradingRun:
    """Grade every submission of ``assignment`` under ``root`` with nbgrader, N at a time.

    Faulty submissions are recorded and graded 0 where nothing was saved; the others are
    unaffected. Records go to ``root/autograde_log.json`` (skips are returned, not logged).
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
    jobs_root = Path(tempfile.mkdtemp(prefix=".autograde-jobs-", dir=course.root))
    try:
        snapshot = snapshot_gradebook(course, jobs_root / "snapshot.db")
        jobs = [
            Job(
                student=student,
                assignment=assignment,
                folder=jobs_root / f"{index:05d}",
                seed=student_seed(student, assignment, seed_salt),
                cell_timeout=cell_timeout,
                memory_limit_mb=memory_limit_mb,
                submission_timeout=submission_timeout,
            )
            for index, student in enumerate(to_grade)
        ]

        def record(result: JobResult) -> None:
            graded = finish_job(course, result)
            append_log(course.root, [graded])
            run.records.append(graded)
            bar.update(graded)

        bar.show()
        run_pool(jobs, max(1, workers), lambda job: prepare_job(course, job, snapshot), record)
    finally:
        shutil.rmtree(jobs_root, ignore_errors=True)
    run.wall_seconds = time.perf_counter() - started
    return run


def threads_per_job(workers: int) -> int | None:
    """BLAS/OpenMP threads for each of ``workers`` parallel kernels (None: leave as is)."""
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)


def run_pool(
    jobs: list[Job],
    workers: int,
    prepare: Callable[[Job], None],
    record: Callable[[JobResult], None],
) -> None:
    """Run ``jobs`` ``workers`` at a time; ``record`` each result here, in this thread.

    Only this thread touches the course gradebook, so there is one writer. On an
    interrupt every running nbgrader and kernel is killed before the exception goes on.
    """
    running = RunningJobs()
    threads = threads_per_job(workers)
    pending = list(reversed(jobs))
    active: dict[Future, Job] = {}
    first_deaths: dict[Path, JobResult] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            while pending or active:
                while pending and len(active) < workers:
                    job = pending.pop()
                    prepare(job)
                    active[pool.submit(run_job, job, threads, running)] = job
                done, _ = wait(active, return_when=FIRST_COMPLETED)
                for future in done:
                    job = active.pop(future)
                    try:
                        result = future.result()
                    except Exception as error:  # a bug here, not in the student's code
                        result = JobResult(job, "error", repr(error), 0.0, False, "")
                    if result.status == "kernel-died" and job.folder not in first_deaths:
                        # A kernel can die of something passing (the machine, not the
                        # student's code): grade once more before giving every cell 0.
                        first_deaths[job.folder] = result
                        shutil.rmtree(job.folder, ignore_errors=True)
                        pending.append(job)
                        continue
                    record(after_retry(result, first_deaths.get(job.folder)))
        except BaseException:
            running.kill_all()
            raise


def after_retry(result: JobResult, first: JobResult | None) -> JobResult:
    """A job's result, saying so when it is a second attempt after the kernel died."""
    if first is None:
        return result
    if result.status == "kernel-died":
        message = result.message + " (twice: it was graded a second time and died again)"
    else:
        message = "; ".join(
            m for m in ("the kernel died on the first attempt, graded again", result.message) if m
        )
    output = first.output + "\n=== second attempt ===\n" + result.output
    return replace(result, message=message, output=output, seconds=first.seconds + result.seconds)
