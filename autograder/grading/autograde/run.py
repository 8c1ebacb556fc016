"""``autograde``: every submission of an assignment graded as a job on one of ``workers``
long-lived worker processes, each result brought into the course as it finishes."""

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
from autograder.grading.autograde import in_flight
from autograder.grading.autograde.job_gradebook import snapshot_gradebook
from autograder.grading.autograde.job_spec import JobSpec
from autograder.grading.autograde.jobs import (
    Job,
    JobResult,
    RunFiles,
    build_spec,
    config_as_dict,
    failed,
    run_job,
)
from autograder.grading.autograde.log import GradingRun, append_log
from autograder.grading.autograde.merge import finish_job
from autograder.grading.autograde.plan import plan, skipped_record
from autograder.grading.autograde.sandbox import choose_sandbox
from autograder.grading.autograde.status_line import Progress
from autograder.grading.autograde.worker_pool import OrphanSweeper, Workers
from autograder.grading.course_root import check_gradable, load_course

DEFAULT_MEMORY_LIMIT_MB = 4096
# A submission still running after half an hour is killed (and graded 0, flagged): with
# nbgrader's per-cell timeout alone, a kernel that ignores interrupts would hold a worker
# for a cell timeout per cell.
DEFAULT_SUBMISSION_TIMEOUT = 1800.0
# Where graded test cells run: the student's kernel (nbgrader's way) or a trusted one.
VERDICTS = ("kernel", "trusted")
GAVE_UP = (
    "the grading process died twice while grading this submission, alone the second time "
    "(killed or stopped from its kernel?): not graded again, 0 on every cell; "
    "--student regrades it"
)


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
    verdicts: str = "kernel",
    sandbox: bool = True,
    hide_packages: tuple[str, ...] = (),
) -> GradingRun:
    """Grade every submission of ``assignment`` under ``root`` with nbgrader, N at a time.

    Faulty submissions are recorded and graded 0 where nothing was saved; the others are
    unaffected. Records go to ``root/autograde_log.json`` (skips are returned, not logged).
    ``verdicts="trusted"`` runs every graded test cell in a second, trusted kernel that
    reaches the student's objects only through a narrow channel (``grading.verdicts``).
    Kernels run in bubblewrap (``sandbox``) with ``hide_packages`` unimportable; where it
    cannot run, unsandboxed with one warning, and each record says so.
    """
    if verdicts not in VERDICTS:
        raise ValueError(f"verdicts must be one of {', '.join(VERDICTS)}; got {verdicts!r}")
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
    # Outside the course root: nothing of a job is where a kernel could look for it.
    jobs_root = Path(tempfile.mkdtemp(prefix="autograde-run-"))
    sandbox_options, sandbox_label = choose_sandbox(sandbox, hide_packages)
    workers = max(1, workers)
    try:
        snapshot = snapshot_gradebook(course, jobs_root / "snapshot.db")
        config = config_as_dict(course)
        files = RunFiles.read(course, assignment, to_grade)
        threads = threads_per_job(workers)
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
                verdicts=verdicts,
                sandbox=sandbox_options,
            )
            for student in to_grade
        ]

        died_on = {s: in_flight.deaths(course, assignment, s) for s in to_grade}

        def record(result: JobResult) -> None:
            graded = replace(finish_job(course, result), sandbox=sandbox_label)
            append_log(course.root, [graded])
            in_flight.clear(course, assignment, result.job.student)
            run.records.append(graded)
            bar.update(graded)

        bar.show()

        def describe(job: Job) -> JobSpec:
            spec = build_spec(course, job, config, snapshot, threads, files)
            in_flight.mark(course, assignment, job.student)
            return spec

        # Jobs in flight when an earlier run died: alone first, and not a third time.
        given_up = [
            job
            for job in jobs
            if students is None and died_on[job.student] >= in_flight.DEATHS_BEFORE_GIVING_UP
        ]
        for job in given_up:
            record(failed(job, "error", GAVE_UP, 0.0))
        suspects = [j for j in jobs if j not in given_up and died_on[j.student]]
        others = [j for j in jobs if j not in given_up and not died_on[j.student]]
        try:
            if suspects:
                run_pool(suspects, 1, describe, record, scratch=jobs_root)
            run_pool(others, workers, describe, record, scratch=jobs_root)
        except KeyboardInterrupt:  # the user's, not a kernel's doing: not a death
            recorded = {r.student for r in run.records}
            for student, count in died_on.items():
                if student not in recorded:
                    in_flight.restore(course, assignment, student, count)
            raise
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
    describe: Callable[[Job], JobSpec],
    record: Callable[[JobResult], None],
    scratch: Path | None = None,
) -> None:
    """Run ``jobs`` on ``workers`` worker processes; ``record`` each result here, once.

    Only this thread touches the course gradebook, so there is one writer. On an
    interrupt every worker and kernel is killed before the exception goes on; after the
    run the workers are stopped.
    """
    pool_workers = Workers(workers, scratch)
    sweeper = OrphanSweeper(pool_workers)
    pending = list(reversed(jobs))
    active: dict[Future, Job] = {}
    first_deaths: dict[str, JobResult] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            while pending or active:
                while pending and len(active) < workers:
                    job = pending.pop()
                    try:
                        spec = describe(job)
                    except Exception as error:  # unreadable files: this student only
                        record(JobResult(job, "error", repr(error), 0.0, None, {}, ""))
                        continue
                    active[pool.submit(run_job, job, spec, pool_workers)] = job
                if not active:
                    continue
                done, _ = wait(active, return_when=FIRST_COMPLETED)
                for future in done:
                    job = active.pop(future)
                    try:
                        result = future.result()
                    except Exception as error:  # a bug here, not in the student's code
                        result = JobResult(job, "error", repr(error), 0.0, None, {}, "")
                    if result.status == "kernel-died" and job.token not in first_deaths:
                        # A kernel can die of something passing (the machine, not the
                        # student's code): grade once more before giving every cell 0.
                        first_deaths[job.token] = result
                        pending.append(job)
                        continue
                    record(after_retry(result, first_deaths.get(job.token)))
                sweeper.sweep()
        except BaseException:
            pool_workers.kill_all()
            raise
        finally:
            pool_workers.stop_all()
            sweeper.close()


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
