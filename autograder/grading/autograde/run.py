"""``autograde``: every submission of an assignment graded as a job on a Dask cluster (a
local one of ``workers`` processes, or an existing one), each result brought into the course
as it finishes."""

import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from autograder.checks.seed import student_seed
from autograder.grading.autograde import in_flight
from autograder.grading.autograde.dask_cluster import (
    grading_client,
    run_on_cluster,
    threads_per_job,
)
from autograder.grading.autograde.job_gradebook import snapshot_gradebook
from autograder.grading.autograde.job_spec import JobSpec
from autograder.grading.autograde.jobs import (
    Job,
    JobResult,
    RunFiles,
    build_spec,
    config_as_dict,
    failed,
)
from autograder.grading.autograde.log import INVALID_NOTEBOOK, GradingRun, append_log
from autograder.grading.autograde.merge import finish_job
from autograder.grading.autograde.notebook_check import (
    InvalidNotebook,
    KnownNotebook,
    checked_submission,
    known_notebooks,
)
from autograder.grading.autograde.orphans import sweeping
from autograder.grading.autograde.plan import plan, skipped_record
from autograder.grading.autograde.sandbox import (
    AUTOGRAD_PACKAGES,
    choose_sandbox,
    sandbox_description,
)
from autograder.grading.autograde.status_line import Progress
from autograder.grading.course_root import Course, check_gradable, load_course

DEFAULT_MEMORY_LIMIT_MB = 4096
# A submission still running after half an hour is killed (and graded 0, flagged): with
# nbgrader's per-cell timeout alone, a kernel that ignores interrupts would hold a worker
# for a cell timeout per cell.
DEFAULT_SUBMISSION_TIMEOUT = 1800.0
# Where graded test cells run: a trusted kernel (the default) or the student's own kernel
# (nbgrader's way, which the student's code can change).
VERDICTS = ("trusted", "kernel")
DEFAULT_VERDICTS = "trusted"
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
    verdicts: str = DEFAULT_VERDICTS,
    sandbox: bool = True,
    hide_packages: tuple[str, ...] = (),
    scheduler: str | None = None,
) -> GradingRun:
    """Grade every submission of ``assignment`` under ``root`` with nbgrader, N at a time.

    On a local Dask cluster of ``workers`` processes, or on the existing cluster whose
    scheduler is at ``scheduler`` (``tcp://HOST:PORT``; SchedulerUnreachable, before
    anything is written, when it does not answer). Faulty submissions are recorded and
    graded 0 where nothing was saved; the others are unaffected. Records go to
    ``root/autograde_log.json`` (skips are returned, not logged).
    Every graded test cell runs in a second, trusted kernel that reaches the student's
    objects only through a narrow channel (``grading.verdicts``); ``verdicts="kernel"``
    runs them in the student's kernel, as plain nbgrader does.
    Kernels run in bubblewrap (``sandbox``) with ``hide_packages`` unimportable; where it
    cannot run, SandboxUnavailable before anything is graded (``sandbox=False`` or the
    sandbox switched off through the environment: unsandboxed, one warning, each record
    says so).
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
    workers = max(1, workers)
    local = scheduler is None
    trusted = verdicts == "trusted"
    if trusted:  # the checks run in the trusted kernel: no autograd library, no engine
        hide_packages = tuple(dict.fromkeys((*hide_packages, *AUTOGRAD_PACKAGES)))
    sandbox_options, sandbox_label = choose_sandbox(sandbox, hide_packages, hide_engine=trusted)
    if progress and sandbox_options is not None:
        print(f"sandbox: {sandbox_description()}", file=sys.stderr)
    # Outside the course root: nothing of a job is where a kernel could look for it.
    jobs_root = Path(tempfile.mkdtemp(prefix="autograde-run-"))
    try:
        # The orphan sweep (a local cluster's only: its processes are this one's children)
        # is set up before the cluster starts, so that the cluster's processes carry its
        # marker. Connected first: an unreachable scheduler stops the run before any write.
        with (
            sweeping(jobs_root.name) if local else contextlib.nullcontext() as sweeper,
            grading_client(workers, scheduler) as client,
        ):
            snapshot = snapshot_gradebook(course, jobs_root / "snapshot.db")
            config = config_as_dict(course)
            files = RunFiles.read(course, assignment, to_grade)
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
                    verdicts=verdicts,
                    sandbox=sandbox_options,
                )
                for student in to_grade
            ]

            def record(result: JobResult, sandbox: str = sandbox_label) -> None:
                graded = replace(finish_job(course, result), sandbox=sandbox)
                append_log(course.root, [graded])
                in_flight.clear(course, assignment, result.job.student)
                run.records.append(graded)
                bar.update(graded)

            bar.show()

            def describe(job: Job) -> JobSpec:
                spec = build_spec(course, job, config, snapshot, threads, files)
                in_flight.mark(course, assignment, job.student)
                return spec

            def grade(batch: list[Job], one_at_a_time: bool) -> None:
                # A local cluster's job folders go under jobs_root, removed below even when
                # a worker was killed in the middle of a job; a remote one uses its temp.
                run_on_cluster(
                    client,
                    batch,
                    describe,
                    record,
                    jobs_root.name,
                    str(jobs_root) if local else None,
                    one_at_a_time=one_at_a_time,
                    after_each=sweeper.sweep if sweeper is not None else lambda: None,
                )

            invalid = screen_submissions(files, known_notebooks(course, assignment))
            for job in jobs:
                if job.student in invalid:  # nothing runs: no sandbox to name
                    reason = invalid[job.student]
                    record(failed(job, INVALID_NOTEBOOK, reason, 0.0, reason + "\n"), "")
            jobs = [job for job in jobs if job.student not in invalid]
            grade_after_deaths(course, jobs, students is None, record, grade)
    finally:
        shutil.rmtree(jobs_root, ignore_errors=True)
    run.wall_seconds = time.perf_counter() - started
    return run


def screen_submissions(files: RunFiles, known: list[KnownNotebook]) -> dict[str, str]:
    """Student -> why nbgrader cannot grade their submission, for those it cannot; the
    others' files in ``files`` replaced by what is to be graded (metadata restored)."""
    invalid = {}
    for student, submission in files.submissions.items():
        try:
            files.submissions[student] = checked_submission(submission, known)
        except InvalidNotebook as error:
            invalid[student] = str(error)
    return invalid


def grade_after_deaths(
    course: Course,
    jobs: list[Job],
    give_up: bool,
    record: Callable[[JobResult], None],
    grade: Callable[[list[Job], bool], None],
) -> None:
    """Grade ``jobs`` with ``grade(batch, one_at_a_time)``: those in flight when an earlier
    run died first and one at a time, and (``give_up``: a run of every student) those in
    flight at two deaths recorded as given up on instead of graded a third time."""
    if not jobs:
        return
    assignment = jobs[0].assignment
    died_on = {job.student: in_flight.deaths(course, assignment, job.student) for job in jobs}
    given_up = [
        job for job in jobs if give_up and died_on[job.student] >= in_flight.DEATHS_BEFORE_GIVING_UP
    ]
    for job in given_up:
        record(failed(job, "error", GAVE_UP, 0.0))
    suspects = [j for j in jobs if j not in given_up and died_on[j.student]]
    others = [j for j in jobs if j not in given_up and not died_on[j.student]]
    try:
        if suspects:
            grade(suspects, True)
        grade(others, False)
    except KeyboardInterrupt:  # the user's, not a kernel's doing: not a death
        for student, count in died_on.items():
            if in_flight.deaths(course, assignment, student):  # marked still: not recorded
                in_flight.restore(course, assignment, student, count)
        raise
