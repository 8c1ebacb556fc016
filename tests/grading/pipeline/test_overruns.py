"""The grading process's watch on local workers that stopped answering (``overruns``): a
stopped worker past its job's limit is killed and the job recorded as a timeout; the file of
a worker its kernel killed is no reason to time out the job's retry."""

import signal
import subprocess
import time
from pathlib import Path

import psutil

from autograder.grading.pipeline.autograde.cluster.dask_worker import running_file
from autograder.grading.pipeline.autograde.cluster.overruns import GRACE, Overruns
from autograder.grading.pipeline.autograde.job.spec import Job

LIMIT = 10.0


class CancelledFutures:
    """The one call the watcher makes on a Dask client: cancel(futures, force=True)."""

    def __init__(self) -> None:
        self.cancelled: list[object] = []

    def cancel(self, futures: list[object], force: bool = False) -> None:
        self.cancelled += futures


def job(student: str) -> Job:
    return Job(student, "tiny", 1, f"token-{student}", None, None, LIMIT)


def started_long_ago(scratch: Path, token: str, pid: int) -> None:
    """The running file of ``pid``, started past the limit and its grace."""
    path = running_file(scratch, token)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{pid} {time.time() - LIMIT - GRACE - 1}\n")


def test_a_stopped_worker_past_the_limit_is_killed_and_its_job_timed_out(tmp_path):
    worker = subprocess.Popen(["sleep", "600"])
    try:
        worker.send_signal(signal.SIGSTOP)
        stopped = job("stopper")
        started_long_ago(tmp_path, stopped.token, worker.pid)
        client = CancelledFutures()
        overruns = Overruns(client, tmp_path, {})
        overruns.check("future", stopped)
        assert client.cancelled == ["future"]
        assert worker.wait(timeout=10) == -signal.SIGKILL
        result = overruns.result(stopped)
        assert result is not None and result.status == "timeout", result
        assert "submission time limit of 10 s" in result.message
        assert not running_file(tmp_path, stopped.token).exists()
    finally:
        worker.kill()
        worker.wait()


def test_the_file_of_a_worker_its_kernel_killed_does_not_time_out_the_retry(tmp_path):
    # Dask runs the job again on another worker, which may be busy (here: stopped) for
    # longer than the limit; until it starts, the dead worker's file is all there is.
    worker = subprocess.Popen(["sleep", "600"])
    worker.kill()
    deadline = time.monotonic() + 10
    while psutil.Process(worker.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the killed child never became a zombie"
        time.sleep(0.05)
    killer = job("killer")
    started_long_ago(tmp_path, killer.token, worker.pid)  # died, not reaped yet
    client = CancelledFutures()
    overruns = Overruns(client, tmp_path, {})
    overruns.check("future", killer)
    worker.wait()
    overruns.check("future", killer)  # died and reaped: no such process
    assert client.cancelled == []
    assert overruns.result(killer) is None
