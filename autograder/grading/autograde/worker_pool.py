"""The grading process's side of its workers: each worker is a long-lived child process
(``worker``) that grades one job at a time; a worker that dies, or overruns a job's time
limit, is killed with its kernels and replaced by a fresh one for the next job."""

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from autograder.grading.autograde import wire
from autograder.grading.autograde.job_spec import JobOutcome, JobSpec
from autograder.grading.autograde.processes import (
    is_subreaper,
    kill_descendants,
    kill_job_processes,
    set_subreaper,
)
from autograder.grading.autograde.worker import BOOTSTRAP
from autograder.grading.nbgrader_workspace import grading_environment

STARTUP_TIMEOUT = 300.0  # seconds for a worker to import nbgrader, on a loaded machine
# Held while a worker is being started and while orphans are swept, so that a worker just
# forked (not yet known to its WorkerProcess) is never taken for an orphan.
SPAWN_LOCK = threading.Lock()


class WorkerDied(RuntimeError):
    """The worker process ended in the middle of a job."""


class WorkerStartFailed(RuntimeError):
    """A worker could not be started (this program's fault, not a student's)."""


class WorkerProcess:
    """One grading worker, started on first use and again after it was killed."""

    def __init__(self, scratch: Path | None = None) -> None:
        self.scratch = scratch  # where its job folders go (None: the system's temp folder)
        self.process: subprocess.Popen | None = None
        self.token: str | None = None  # the job it is grading now
        self._stderr = None  # the worker's own stderr (start-up errors), a temp file
        self._lock = threading.Lock()
        self.started = 0.0  # when the current job was sent (after any start-up)
        self.launched: subprocess.Popen | None = None  # the worker process, from its start

    def _start(self) -> subprocess.Popen:
        """A fresh worker, once it has imported nbgrader (not counted against a job)."""
        self._stderr = tempfile.TemporaryFile()
        with SPAWN_LOCK:
            process = subprocess.Popen(
                [sys.executable, "-c", BOOTSTRAP, *([str(self.scratch)] if self.scratch else [])],
                env=grading_environment(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,  # its own process group, killed as one
            )
            self.launched = process
        try:
            if wire.receive(process.stdout.fileno(), STARTUP_TIMEOUT) != wire.READY:
                raise wire.WorkerGone
        except (wire.WorkerGone, TimeoutError) as error:
            process.kill()
            raise WorkerStartFailed(self._death(process)) from error
        return process

    def grade(self, spec: JobSpec, timeout: float | None) -> JobOutcome:
        """Grade ``spec``; TimeoutError after ``timeout`` s, WorkerDied if the worker ends,
        WorkerStartFailed if no worker could be started."""
        with self._lock:
            if self.process is None:
                self.started = time.perf_counter()
                self.process = self._start()
            self.token = spec.token
            process = self.process
        self.started = time.perf_counter()
        try:
            wire.send(process.stdin, spec)
            return wire.receive(process.stdout.fileno(), timeout)
        except (wire.WorkerGone, BrokenPipeError) as error:
            raise WorkerDied(self._death(process)) from error

    def _death(self, process: subprocess.Popen) -> str:
        """Why the worker ended: its exit status and the end of its own stderr."""
        code = process.wait()
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace")[-2000:]
        return f"the grading worker process {how}\n{tail}"

    def kill(self) -> None:
        """Kill the worker (its process group) and the current job's kernels; next job starts a
        fresh one."""
        with self._lock:
            process, self.process = self.process, None
            token, self.token = self.token, None
        if process is not None:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            process.wait()
            for stream in (process.stdin, process.stdout, self._stderr):
                stream.close()
        if token is not None:
            kill_job_processes(token)

    def finish_job(self) -> None:
        """Kill what the finished job left behind (a process the student's code started)."""
        if self.token is not None:
            kill_job_processes(self.token)
            self.token = None

    def stop(self) -> None:
        """Ask the worker to end (stdin closed), then make sure it has."""
        if self.process is not None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                pass
        self.kill()


class Workers:
    """N workers handed out to the threads that run jobs, and all killed on an interrupt."""

    def __init__(self, count: int, scratch: Path | None = None) -> None:
        self.all = [WorkerProcess(scratch) for _ in range(count)]
        self.idle: queue.SimpleQueue[WorkerProcess] = queue.SimpleQueue()
        for worker in self.all:
            self.idle.put(worker)
        self.cancelled = threading.Event()

    def kill_all(self) -> None:
        """Stop handing out work and kill every worker and kernel now."""
        self.cancelled.set()
        for worker in self.all:
            worker.kill()

    def stop_all(self) -> None:
        """End every worker after the run."""
        for worker in self.all:
            worker.stop()


class OrphanSweeper:
    """During a run this process is a child subreaper: what a killed worker's jobs left
    running (detached, environment cleared) comes back to it as its child, and ``sweep``
    kills it. Children it had before the run, and the workers, are left alone."""

    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.before = {child.pid for child in psutil.Process().children()}
        self.was_subreaper = is_subreaper()
        set_subreaper(True)

    def _keep(self, pid: int) -> bool:
        if pid in self.before:
            return True
        return any(w.launched is not None and w.launched.pid == pid for w in self.workers.all)

    def sweep(self) -> int:
        """Kill every orphan now; how many processes were killed."""
        with SPAWN_LOCK:
            return kill_descendants(self._keep)

    def close(self) -> None:
        """A last sweep, and this process's subreaper setting put back."""
        self.sweep()
        set_subreaper(self.was_subreaper)
