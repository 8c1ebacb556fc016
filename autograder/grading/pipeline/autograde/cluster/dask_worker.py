"""The Dask worker's side of grading: a plugin that prepares each worker process once
(nbgrader imported, the kernels' environment), and the task that grades one job sent as
bytes and answers with bytes.

``grade_job`` changes the whole process while it runs (fds 1 and 2, ``os.environ``), so a
worker process grades one job at a time: workers are started with one thread, and a lock
keeps it so on a worker started with more.
"""

import contextlib
import gc
import hashlib
import os
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import psutil
from distributed import WorkerPlugin

from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.autograde.job.spec import JobOutcome, JobSpec

PLUGIN_NAME = "autograder-grading-worker"
_ONE_JOB_AT_A_TIME = threading.Lock()
_PREPARED = threading.Event()  # this process's environment is the grading one


class GradingWorkerSetup(WorkerPlugin):
    """Run once in each worker process, also in one started again after it died."""

    def __init__(self, ignore_interrupts: bool = False) -> None:
        # A local cluster's workers share the terminal with the grading process: Ctrl-C is
        # that process's to handle (it stops the cluster), not theirs to print about.
        self.ignore_interrupts = ignore_interrupts

    def setup(self, worker: object) -> None:
        """Import nbgrader now (not in the first job) and set the kernels' environment."""
        if self.ignore_interrupts and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        prepare_process()


def prepare_process() -> None:
    """What a grading process needs before its first job; cheap to call again."""
    import nbgrader.converters  # noqa: F401

    from autograder.grading.course.nbgrader_workspace import grading_environment
    from autograder.grading.pipeline.autograde.cluster.orphans import CLUSTER_MARKER_ENV
    from autograder.grading.pipeline.autograde.cluster.processes import set_subreaper

    # Exactly the grading environment: no PG* variables (a kernel must not find the course
    # database), and not the local cluster's marker (the grader's sweep keeps what has it).
    # Once per process: kernel_environment puts this Python's bin first on PATH each call.
    if not _PREPARED.is_set():
        environment = grading_environment()
        environment.pop(CLUSTER_MARKER_ENV, None)
        os.environ.clear()
        os.environ.update(environment)
        _PREPARED.set()
    # Whatever a job's kernel starts stays this process's descendant, even detached with a
    # cleared environment, and is killed when the job ends (grade_with_time_limit).
    set_subreaper()


def grade_payload(payload: bytes, time_limit: float | None, scratch: str | None) -> bytes:
    """Grade the pickled JobSpec ``payload``; the pickled JobOutcome.

    Pickle because a job's config holds classes (preprocessors) by reference; both ends run
    the same code, on a cluster the instructor started (Dask itself pickles tasks too).
    """
    spec: JobSpec = pickle.loads(payload)
    with _ONE_JOB_AT_A_TIME:
        prepare_process()
        folder = Path(scratch) if scratch else None
        with running_marker(folder, spec.token):
            outcome = grade_with_time_limit(spec, time_limit, folder)
        settle_heap()
    return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)


def settle_heap() -> None:
    """Collect a job's garbage, then take what outlived it (imports, caches: the process's
    own) out of the collector's reach: otherwise a full collection over the 400,000 objects
    nbgrader, nbconvert and Dask leave here lands in the middle of a job (0.15-0.2 s)."""
    gc.collect()
    gc.freeze()


def running_file(scratch: Path, token: str) -> Path:
    """Where a local worker says which process is grading the job ``token``, since when."""
    return scratch / "running" / hashlib.sha256(token.encode()).hexdigest()


@contextlib.contextmanager
def running_marker(scratch: Path | None, token: str) -> Iterator[None]:
    """Meanwhile, this process's pid and the start (wall clock) in ``running_file``: a
    worker stopped from its kernel cannot enforce the time limit, the grading process can
    (``overruns.Overruns``). Nothing on a remote worker (no shared scratch folder)."""
    if scratch is None:
        yield
        return
    path = running_file(scratch, token)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{os.getpid()} {time.time()}\n")
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def grade_with_time_limit(
    spec: JobSpec, time_limit: float | None, scratch: Path | None
) -> JobOutcome:
    """``grade_job``, with the job's processes killed once ``time_limit`` seconds have passed.

    Killing the kernel ends the job within a second (nbclient watches the kernel), so the
    worker itself survives and takes the next job. Whatever the job left running (a process
    the student's code started, detached or not) is killed at the end too.
    """
    from autograder.grading.pipeline.autograde.cluster.processes import (
        kill_descendants,
        kill_job_processes,
    )
    from autograder.grading.pipeline.autograde.job.grade_job import grade_job
    from autograder.grading.pipeline.verdicts.forked_kernels import warm_pids

    expired = threading.Event()
    # Dask's own children of this process (if any) are older than the job: left alone.
    dask_children = {child.pid for child in psutil.Process().children()}

    def expire() -> None:
        expired.set()
        kill_job_processes(spec.token)

    timer = threading.Timer(time_limit, expire) if time_limit else None
    started = time.perf_counter()
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        outcome = grade_job(spec, scratch)
    except Exception:  # a fault of this program, not the student's: report it, go on
        text = traceback.format_exc()
        message = f"the grading worker failed: {text.strip().splitlines()[-1]}"
        outcome = JobOutcome(Status.ERROR, message, time.perf_counter() - started, None, {}, text)
    finally:
        if timer is not None:
            timer.cancel()
        kill_job_processes(spec.token)
        # Detached ones too (no job token): this process is their subreaper.
        # Kept too: the warm process trusted kernels are forked from (see forked_kernels).
        kill_descendants(keep=lambda pid: pid in dask_children or pid in warm_pids())
    if expired.is_set():
        message = f"killed after the submission time limit of {time_limit:g} s"
        seconds = time.perf_counter() - started
        return JobOutcome(
            Status.TIMEOUT, message, seconds, None, {}, outcome.output, outcome.runtime
        )
    return outcome
