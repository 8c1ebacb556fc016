"""The submission time limit enforced from the grading process too, for a local cluster.

A worker enforces the limit itself (``dask_worker.grade_with_time_limit``), but a kernel can
stop its worker (SIGSTOP): then nothing in that worker runs, and Dask would only notice
minutes later. Each local worker says in a file under the run's scratch folder which
process grades which job since when (``dask_worker.running_file``); a job still running
``GRACE`` seconds after its limit has its task cancelled (so it is not run again), its
worker process and its kernels killed, and is recorded as a timeout. A file whose worker is
gone (a kernel that killed it) says nothing about the job any more: Dask runs it again, and
its next worker writes the file anew.
"""

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import psutil

from autograder.grading.course.grading_status import Status
from autograder.grading.pipeline.autograde.cluster.dask_worker import running_file
from autograder.grading.pipeline.autograde.cluster.processes import kill_job_processes
from autograder.grading.pipeline.autograde.job.folder import salvaged_record
from autograder.grading.pipeline.autograde.job.spec import Job, JobResult, failed

GRACE = 30.0  # seconds past the limit: the worker's own timer has had its chance by then
POLL = 1.0


class Overruns:
    """A thread watching the jobs in flight (``active``: future -> job, read only)."""

    def __init__(self, client: object, scratch: Path, active: dict) -> None:
        self.client = client
        self.scratch = scratch
        self.active = active
        self.killed: dict[str, float] = {}  # job token -> seconds it had run when killed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="overruns")

    def start(self) -> None:
        """Start watching."""
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (at the end of the run)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(POLL):
            for future, job in list(self.active.items()):
                if job.submission_timeout and job.token not in self.killed:
                    self.check(future, job)

    def check(self, future: object, job: Job) -> None:
        """Kill the job's worker if the job has run GRACE seconds past its limit."""
        path = running_file(self.scratch, job.token)
        try:
            pid_text, started_text = path.read_text().split()
            pid, started = int(pid_text), float(started_text)
        except (OSError, ValueError):
            return  # not started yet, or finished
        seconds = time.time() - started
        if seconds < job.submission_timeout + GRACE:
            return
        if not is_live_child(pid):
            # The worker died with the job (its kernel killed it): the job waits for its
            # retry, which is not late for having queued behind a stopped worker.
            return
        self.killed[job.token] = seconds
        self.client.cancel([future], force=True)
        with contextlib.suppress(ProcessLookupError):  # it may have died since
            os.kill(pid, signal.SIGKILL)
        kill_job_processes(job.token)
        path.unlink(missing_ok=True)

    def result(self, job: Job) -> JobResult | None:
        """The job's result if it was killed here, else None."""
        if job.token not in self.killed:
            return None
        message = (
            f"killed after the submission time limit of {job.submission_timeout:g} s "
            "(its worker had stopped answering; the worker was killed)"
        )
        record = salvaged_record(self.scratch, job.student)
        return failed(job, Status.TIMEOUT, message, self.killed[job.token], runtime=record)


def is_live_child(pid: int) -> bool:
    """Whether ``pid`` is a child of this process (the local worker, not a process that took
    its pid since) that has not died: a stopped one is alive, a zombie is not."""
    try:
        process = psutil.Process(pid)
        return process.ppid() == os.getpid() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
