"""The processes of a job: nbgrader started under a memory limit, found again by a marker
in their environment, and killed together, kernels that outlived nbgrader included."""

import os
import signal
import subprocess
import threading

import psutil

JOB_TOKEN_ENV = "AUTOGRADER_JOB"

# Sets the address-space limit, then becomes nbgrader: a limit set this way is inherited by
# the kernel nbgrader starts, and needs no preexec_fn (unsafe with the threads used here).
LIMITED_NBGRADER = """\
import os, resource, sys
limit = int(sys.argv[1])
if limit > 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execv(sys.executable, [sys.executable, "-m", "nbgrader", *sys.argv[2:]])
"""


def job_processes(token: str) -> list[psutil.Process]:
    """Processes started for one job, found by the token in their environment.

    The kernel runs in a session of its own and outlives an nbgrader that failed or was
    killed (it is then no longer nbgrader's child), so the tree alone does not find it.
    """
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TOKEN_ENV) == token:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def kill_job_processes(token: str, process: subprocess.Popen | None = None) -> None:
    """Kill nbgrader (its whole process group) and every process left over from the job."""
    if process is not None and process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    for leftover in job_processes(token):
        try:
            leftover.kill()
        except psutil.NoSuchProcess:
            pass


class RunningJobs:
    """The nbgrader processes running now, so an interrupted run can kill them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: dict[subprocess.Popen, str] = {}
        self.cancelled = threading.Event()

    def add(self, process: subprocess.Popen, token: str) -> None:
        with self._lock:
            self._processes[process] = token

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._processes.pop(process, None)

    def kill_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            processes = list(self._processes.items())
        for process, token in processes:
            kill_job_processes(token, process)
