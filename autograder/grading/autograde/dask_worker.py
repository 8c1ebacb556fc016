"""The Dask worker's side of grading: a plugin that prepares each worker process once
(nbgrader imported, the kernels' environment), and the task that grades one job sent as
bytes and answers with bytes.

``grade_job`` changes the whole process while it runs (fds 1 and 2, ``os.environ``), so a
worker process grades one job at a time: workers are started with one thread, and a lock
keeps it so on a worker started with more.
"""

import os
import pickle
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from distributed import WorkerPlugin

from autograder.grading.autograde.job_spec import JobOutcome, JobSpec

PLUGIN_NAME = "autograder-grading-worker"
_ONE_JOB_AT_A_TIME = threading.Lock()


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
    # jsonschema imports rfc3987_syntax (if installed) only for the "iri" format, which no
    # notebook schema uses; building its grammar costs about a second of every start-up.
    sys.modules.setdefault("rfc3987_syntax", None)
    import nbgrader.converters  # noqa: F401

    from autograder.grading.nbgrader_workspace import kernel_environment

    os.environ.update(kernel_environment())


def grade_payload(payload: bytes, time_limit: float | None, scratch: str | None) -> bytes:
    """Grade the pickled JobSpec ``payload``; the pickled JobOutcome.

    Pickle because a job's config holds classes (preprocessors) by reference; both ends run
    the same code, on a cluster the instructor started (Dask itself pickles tasks too).
    """
    spec: JobSpec = pickle.loads(payload)
    with _ONE_JOB_AT_A_TIME:
        prepare_process()
        outcome = grade_with_time_limit(spec, time_limit, Path(scratch) if scratch else None)
    return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)


def grade_with_time_limit(
    spec: JobSpec, time_limit: float | None, scratch: Path | None
) -> JobOutcome:
    """``grade_job``, with the job's processes killed once ``time_limit`` seconds have passed.

    Killing the kernel ends the job within a second (nbclient watches the kernel), so the
    worker itself survives and takes the next job. Whatever the job left running (a process
    the student's code started) is killed at the end too.
    """
    from autograder.grading.autograde.grade_job import grade_job
    from autograder.grading.autograde.processes import kill_job_processes

    expired = threading.Event()

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
        outcome = JobOutcome("error", message, time.perf_counter() - started, None, {}, text)
    finally:
        if timer is not None:
            timer.cancel()
        kill_job_processes(spec.token)
    if expired.is_set():
        message = f"killed after the submission time limit of {time_limit:g} s"
        return JobOutcome(
            "timeout", message, time.perf_counter() - started, None, {}, outcome.output
        )
    return outcome
