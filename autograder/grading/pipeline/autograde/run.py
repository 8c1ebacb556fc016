"""``autograde``: every submission of an assignment graded as a job on a Dask cluster (a
local one of ``workers`` processes, or an existing one), each result brought into the course
as it finishes."""

import datetime as dt
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.checks.seed import student_seed
from autograder.grading.course.autograd_packages import AUTOGRAD_PACKAGES
from autograder.grading.course.course_root import (
    AutogradeError,
    Course,
    as_course,
    check_gradable,
)
from autograder.grading.course.grading_status import Status
from autograder.grading.course.owned_temp import owned_temp_folder
from autograder.grading.course.term import TermError
from autograder.grading.course.term_gradebook import course_term, write_due_dates
from autograder.grading.pipeline.autograde import in_flight
from autograder.grading.pipeline.autograde.cluster.dask_cluster import (
    grading_client,
    run_on_cluster,
    threads_per_job,
)
from autograder.grading.pipeline.autograde.intake.hand_in_time import vetted
from autograder.grading.pipeline.autograde.intake.notebook_check import (
    InvalidNotebook,
    KnownNotebook,
    checked_submission,
    known_notebooks,
)
from autograder.grading.pipeline.autograde.job.gradebook import snapshot_gradebook
from autograder.grading.pipeline.autograde.job.sandbox import (
    SandboxOptions,
    choose_sandbox,
    sandbox_description,
)
from autograder.grading.pipeline.autograde.job.spec import Job, JobResult, JobSpec, failed
from autograder.grading.pipeline.autograde.jobs import RunFiles, build_spec, config_as_dict
from autograder.grading.pipeline.autograde.log import GradingRun, append_log
from autograder.grading.pipeline.autograde.merge import finish_job
from autograder.grading.pipeline.autograde.plan import (
    Lateness,
    late_inputs,
    plan,
    refused_record,
    skipped_record,
)
from autograder.grading.pipeline.autograde.status_line import Progress
from autograder.grading.pipeline.grading_settings import VERDICTS, GradingSettings

GAVE_UP = (
    "the grading process died twice while grading this submission, alone the second time "
    "(killed or stopped from its kernel?): not graded again, 0 on every cell; "
    "--student regrades it"
)


def autograde(
    course: Course | Path, assignments: list[str], settings: GradingSettings
) -> list[GradingRun]:
    """Grade every submission of each of ``assignments`` of ``course`` (a Course, or the
    folder of its nbgrader_config.py) with nbgrader, as ``settings`` say; one run each.

    The assignments are graded one after the other on one Dask cluster: a local one of
    ``settings.workers`` processes, or the existing one at ``settings.scheduler``
    (SchedulerUnreachable, before anything is written, when it does not answer). A local
    cluster takes seconds to start and to stop, so a course that grades its notebooks
    together pays that once. Every assignment is checked before anything is graded; each
    gets its own run, gradebook snapshot and progress line, as if graded alone. Faulty
    submissions are recorded and graded 0 where nothing was saved; the others are
    unaffected. Records go to ``root/autograde_log.json`` (skips are returned, not logged).
    """
    if settings.verdicts not in VERDICTS:
        raise ValueError(
            f"verdicts must be one of {', '.join(VERDICTS)}; got {settings.verdicts!r}"
        )
    started = time.perf_counter()
    course = as_course(course)
    plans = plan_assignments(course, assignments, settings)
    runs = [each.run for each in plans]
    if not any(each.to_grade for each in plans):
        for run in runs:
            run.wall_seconds = time.perf_counter() - started
        return runs
    workers = max(1, settings.workers)
    local = settings.scheduler is None
    sandbox_options, sandbox_label = run_sandbox(settings)
    # Outside the course root: nothing of a job is where a kernel could look for it.
    jobs_root = owned_temp_folder("autograde-run-")
    try:
        # Connected first: an unreachable scheduler stops the run before any write.
        with grading_client(workers, settings.scheduler) as grading:
            # Said once connected: an unreachable scheduler's error stays the only line.
            if settings.progress and sandbox_options is not None:
                print(f"sandbox: {sandbox_description()}", file=sys.stderr)
            cluster = ClusterRun(
                client=grading.client,
                course=course,
                config=config_as_dict(course),
                jobs_root=jobs_root,
                local=local,
                threads=threads_per_job(workers, local),
                sandbox_options=sandbox_options,
                sandbox_label=sandbox_label,
                sweep=grading.sweep,
            )
            for each in plans:
                if each.to_grade:
                    assignment_started = time.perf_counter()
                    grade_assignment(
                        cluster, each.assignment, each.to_grade, each.run, settings, each.lateness
                    )
                    each.run.wall_seconds = time.perf_counter() - assignment_started
    finally:
        shutil.rmtree(jobs_root, ignore_errors=True)
    # The first run also carries the cluster's start and stop, and the checks before it.
    overhead = time.perf_counter() - started - sum(run.wall_seconds for run in runs)
    runs[0].wall_seconds += overhead
    return runs


@dataclass(frozen=True)
class AssignmentPlan:
    """One assignment of a run: who is to be graded, its run so far (skips and refused
    folders), and the lateness inputs its hand-ins are judged by."""

    assignment: str
    to_grade: list[str]
    run: GradingRun
    lateness: Lateness


def plan_assignments(
    course: Course, assignments: list[str], settings: GradingSettings
) -> list[AssignmentPlan]:
    """Check every assignment, write the term's due dates into the gradebook, then plan
    each: skips returned, refused folders logged, a progress line for the skips."""
    for assignment in assignments:
        check_gradable(course, assignment)
    # the term's due dates into the gradebook first: nbgrader judges lateness from there
    try:
        term = course_term(course)
    except TermError as error:
        raise AutogradeError(str(error)) from None
    for line in write_due_dates(course, term):
        if settings.progress:
            print(line, file=sys.stderr)
    policy = term.late_policy.as_json()
    plans = []
    for assignment in assignments:
        lateness = late_inputs(course, assignment, policy)
        to_grade, skipped, odd = plan(
            course, assignment, settings.students, settings.force, lateness
        )
        skips = [skipped_record(s, assignment, settings.seed_salt) for s in skipped]
        refusals = [refused_record(s, assignment, settings.seed_salt, w) for s, w in odd.items()]
        append_log(course.root, refusals)  # each odd folder its own line; the rest graded
        run = GradingRun(assignment, skips + refusals)
        plans.append(AssignmentPlan(assignment, to_grade, run, lateness))
        if settings.progress and skipped:
            print(
                f"{assignment}: {len(skipped)} already graded, skipped (force regrades)",
                file=sys.stderr,
            )
    return plans


def run_sandbox(settings: GradingSettings) -> tuple[SandboxOptions | None, str]:
    """The sandbox the run's kernels get, and its label for the records."""
    trusted = settings.verdicts == "trusted"
    hide_packages = settings.hide_packages
    if trusted:  # the checks run in the trusted kernel: no autograd library, no engine
        hide_packages = tuple(dict.fromkeys((*hide_packages, *AUTOGRAD_PACKAGES)))
    return choose_sandbox(settings.sandbox, hide_packages, hide_engine=trusted)


@dataclass(frozen=True)
class ClusterRun:
    """What every assignment of one run grades with: the cluster and the run's settings."""

    client: object
    course: Course
    config: dict
    jobs_root: Path
    local: bool
    threads: int
    sandbox_options: SandboxOptions | None
    sandbox_label: str
    sweep: Callable[[], object]


def grade_assignment(
    cluster: ClusterRun,
    assignment: str,
    to_grade: list[str],
    run: GradingRun,
    settings: GradingSettings,
    lateness: Lateness,
) -> None:
    """Grade ``to_grade``'s submissions of ``assignment`` on the run's cluster, each record
    logged (with the ``lateness`` inputs it was judged by) and added to ``run`` as it comes."""
    course = cluster.course
    bar = Progress(len(to_grade), f"autograde {assignment}", enabled=settings.progress)
    snapshot = snapshot_gradebook(course, cluster.jobs_root / f"snapshot-{assignment}.db")
    files = RunFiles.read(course, assignment, to_grade)
    jobs = [
        Job(
            student=student,
            assignment=assignment,
            seed=student_seed(student, assignment, settings.seed_salt),
            # Unique to this run, and naming the course, so a job's processes are found.
            token=f"{course.root}:{assignment}:{student}:{cluster.jobs_root.name}",
            cell_timeout=settings.cell_timeout,
            memory_limit_mb=settings.memory_limit_mb,
            submission_timeout=settings.submission_timeout or None,
            verdicts=settings.verdicts,
            sandbox=cluster.sandbox_options,
        )
        for student in to_grade
    ]

    def record(result: JobResult, sandbox: str = cluster.sandbox_label) -> None:
        student = result.job.student
        graded = finish_job(course, result)
        note = notes.get(student, "")
        graded = replace(
            graded,
            sandbox=sandbox,
            late_inputs=lateness.of(student),
            message="; ".join(filter(None, (graded.message, note))),
        )
        append_log(course.root, [graded])
        in_flight.clear(course, assignment, result.job.student)
        run.records.append(graded)
        bar.update(graded)

    bar.show()

    def describe(job: Job) -> JobSpec:
        spec = build_spec(course, job, cluster.config, snapshot, cluster.threads, files)
        in_flight.mark(course, assignment, job.student)
        return spec

    def grade(batch: list[Job], one_at_a_time: bool) -> None:
        # A local cluster's job folders go under jobs_root, removed below even when
        # a worker was killed in the middle of a job; a remote one uses its temp.
        run_on_cluster(
            cluster.client,
            batch,
            describe,
            record,
            cluster.jobs_root.name,
            str(cluster.jobs_root) if cluster.local else None,
            one_at_a_time=one_at_a_time,
            after_each=cluster.sweep,
        )

    notes = {}
    if lateness.due is not None:  # when each hand-in was made matters
        now = dt.datetime.now(dt.UTC)
        for student, submission in files.submissions.items():
            files.submissions[student], notes[student] = vetted(submission, now)
    invalid = screen_submissions(files, known_notebooks(course, assignment))
    for job in jobs:
        if job.student in invalid:  # nothing runs: no sandbox to name
            reason = invalid[job.student]
            record(failed(job, Status.INVALID_NOTEBOOK, reason, 0.0, reason + "\n"), "")
    jobs = [job for job in jobs if job.student not in invalid]
    grade_after_deaths(course, jobs, settings.students is None, record, grade)


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
        record(failed(job, Status.ERROR, GAVE_UP, 0.0))
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
