"""The grading process's side of Dask: a cluster to grade on (this process's local one, kept
between runs, or an existing one reached at ``tcp://HOST:PORT``), and the jobs sent to it as bytes,
their results recorded here, each (student, assignment) once.

Dask runs a task at least once: a worker killed in the middle of a job has the job run again
elsewhere, and a task whose workers all died ends as ``KilledWorker``. So each job's result
is recorded once, by this process alone (the course gradebook has one writer), and a
``KilledWorker`` is that student's dead kernel, not the end of the run.
"""

import contextlib
import os
import pickle
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.grading.course.course_root import AutogradeError
from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.autograde.cluster.dask_worker import (
    PLUGIN_NAME,
    GradingWorkerSetup,
    grade_payload,
)
from autograder.grading.pipeline.autograde.cluster.local_cluster import KEPT
from autograder.grading.pipeline.autograde.cluster.orphans import sweeping
from autograder.grading.pipeline.autograde.cluster.overruns import Overruns
from autograder.grading.pipeline.autograde.cluster.processes import kill_run_processes
from autograder.grading.pipeline.autograde.job.folder import salvaged_record
from autograder.grading.pipeline.autograde.job.spec import Job, JobResult, JobSpec, failed

CONNECT_TIMEOUT = 10.0  # seconds to reach an existing scheduler before giving up
# Tasks in flight per worker thread: enough to keep every worker busy while results come
# back, few enough that a large cohort's files are not all in memory at once.
IN_FLIGHT_PER_THREAD = 2


class SchedulerUnreachable(AutogradeError):
    """No Dask scheduler answered at the address given."""


@dataclass(frozen=True)
class GradingCluster:
    """A Dask client to grade with, the marker its processes carry when the cluster is
    local (its processes are then this one's children; None for an existing cluster), and
    the sweep of this process's orphans to call after each job (nothing to sweep for an
    existing cluster)."""

    client: object
    local_tag: str | None
    sweep: Callable[[], object] = lambda: 0


@contextlib.contextmanager
def grading_client(workers: int, scheduler: str | None = None) -> Iterator[GradingCluster]:
    """This process's local cluster of ``workers`` processes (kept for the next run:
    ``local_cluster``; this process sweeps its orphans meanwhile: ``orphans``), or the
    existing cluster at ``scheduler``; its workers prepared."""
    if not scheduler:
        with KEPT.lend(workers) as local, sweeping(local.tag) as sweeper:
            yield GradingCluster(local.client, local.tag, sweeper.sweep)
        return
    client = connect(scheduler)
    try:
        client.register_plugin(GradingWorkerSetup(), name=PLUGIN_NAME)
        yield GradingCluster(client, None)
    finally:
        client.close()


def connect(scheduler: str) -> object:
    """A client of the scheduler at ``scheduler``; SchedulerUnreachable after a few seconds."""
    from distributed import Client

    address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SchedulerUnreachable(
            f"cannot reach the Dask scheduler at {address}: {reason}"
        ) from error


def run_on_cluster(
    client: object,
    jobs: list[Job],
    describe: Callable[[Job], JobSpec],
    record: Callable[[JobResult], None],
    run_tag: str,
    scratch: str | None = None,
    one_at_a_time: bool = False,
    after_each: Callable[[], object] = lambda: None,
) -> None:
    """Grade ``jobs`` on the cluster; ``record`` each result here, once per job, then call
    ``after_each``.

    A job whose kernel died is graded once more. ``one_at_a_time``: a job is handed to the
    cluster only when the one before was recorded. With a local ``scratch`` folder, a job
    still running well after its time limit (its worker stopped from its kernel) has its
    worker killed and is recorded as a timeout (``overruns``). On an interrupt the jobs are
    cancelled and their kernels killed (the running tasks then end at once) before the
    exception goes on.
    """
    from distributed import as_completed

    pending = list(reversed(jobs))
    active: dict[object, Job] = {}
    first_deaths: dict[str, JobResult] = {}
    recorded: set[tuple[str, str]] = set()
    finished = as_completed(loop=client.loop)
    overruns = Overruns(client, Path(scratch), active) if scratch else None

    def fill() -> None:
        threads = max(1, sum(client.nthreads().values()))
        limit = 1 if one_at_a_time else IN_FLIGHT_PER_THREAD * threads
        while pending and len(active) < limit:
            job = pending.pop()
            try:
                payload = pickle.dumps(describe(job), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as error:  # unreadable files: this student only
                record(failed(job, Status.ERROR, repr(error), 0.0))
                recorded.add((job.student, job.assignment))
                continue
            future = client.submit(
                grade_payload,
                payload,
                job.submission_timeout,
                scratch,
                key=f"autograde-{uuid.uuid4().hex}",
                pure=False,
            )
            active[future] = job
            finished.add(future)

    try:
        if overruns is not None:
            overruns.start()
        fill()
        for future in finished:
            job = active.pop(future, None)
            if job is None or (job.student, job.assignment) in recorded:
                continue  # a result seen before (at-least-once execution)
            overrun = overruns.result(job) if overruns is not None else None
            result = overrun or result_of(future, job, Path(scratch) if scratch else None)
            future.release()
            if result.status == Status.KERNEL_DIED and job.token not in first_deaths:
                if not result.message.startswith(KILLED_WORKER):
                    # A kernel can die of something passing (the machine, not the
                    # student's code): grade once more before giving every cell 0.
                    first_deaths[job.token] = result
                    pending.append(job)
                    fill()
                    continue
            recorded.add((job.student, job.assignment))
            record(after_retry(result, first_deaths.get(job.token)))
            after_each()
            fill()
    except BaseException:
        client.cancel(list(active), force=True)
        with contextlib.suppress(Exception):
            client.run(kill_run_processes, run_tag, on_error="ignore")
        kill_run_processes(run_tag)
        raise
    finally:
        if overruns is not None:
            overruns.stop()


KILLED_WORKER = "the grading worker process died on each attempt"
RETRIED = "the kernel died on the first attempt, graded again"


def result_of(future: object, job: Job, scratch: Path | None = None) -> JobResult:
    """The job's result from its finished task: its outcome, or why the task failed (with
    the runtime record a killed local worker left in ``scratch``)."""
    from distributed import KilledWorker

    if future.status == "error":
        error = future.exception()
        if isinstance(error, KilledWorker):
            message = f"{KILLED_WORKER} ({error.allowed_failures + 1}); no cell was graded"
            record = salvaged_record(scratch, job.student)
            return failed(job, Status.KERNEL_DIED, message, 0.0, str(error), record)
        return failed(job, Status.ERROR, f"the grading task failed: {error!r}", 0.0)
    outcome = pickle.loads(future.result())
    return JobResult(
        job,
        outcome.status,
        outcome.message,
        outcome.seconds,
        outcome.grades,
        outcome.autograded,
        outcome.output,
        outcome.runtime,
    )


def after_retry(result: JobResult, first: JobResult | None) -> JobResult:
    """A job's result, saying so when it is a second attempt after the kernel died."""
    if first is None:
        return result
    if result.status == Status.KERNEL_DIED:
        message = result.message + " (twice: it was graded a second time and died again)"
    else:
        message = "; ".join(m for m in (RETRIED, result.message) if m)
    output = first.output + "\n=== second attempt ===\n" + result.output
    return replace(result, message=message, output=output, seconds=first.seconds + result.seconds)


def threads_per_job(workers: int, local: bool) -> int | None:
    """BLAS/OpenMP threads for each kernel: the cores shared by the local workers, or one
    on a cluster (one worker process per core), None (left as is) for a single worker."""
    if not local:
        return 1
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)
