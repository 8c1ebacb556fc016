"""The processes of a job, found by a marker in their environment and killed together: the
kernel runs in a session of its own, and so does anything the student's code started. A
process that cleared its environment and detached is found instead as a descendant of the
worker, which is a child subreaper, and of the grading process during a run."""

import contextlib
import ctypes
import os
import time
from collections.abc import Callable

import psutil

from autograder.grading.pipeline.autograde.job.spec import JOB_TOKEN_ENV


def job_processes(token: str) -> list[psutil.Process]:
    """Processes started for one job (its kernel and their children), by their environment.

    A kernel outlives a worker that was killed (it is then no longer the worker's child),
    so the process tree alone does not find it.
    """
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TOKEN_ENV) == token:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def kill_job_processes(token: str) -> None:
    """Kill every process left over from the job."""
    for leftover in job_processes(token):
        try:
            leftover.kill()
        except psutil.NoSuchProcess:
            pass


# prctl options (linux/prctl.h): orphaned descendants are re-parented to a subreaper
# instead of to init, so a process that detached itself (setsid, double fork, cleared
# environment: no job token) can still be found among the subreaper's descendants.
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
KILL_ROUNDS = 50  # a process forking as fast as it is killed is still gone after these


def _prctl(option: int, value: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, value, 0, 0, 0)


def set_subreaper(on: bool = True) -> bool:
    """Make this process its descendants' subreaper (or stop); False where unsupported."""
    try:
        return _prctl(PR_SET_CHILD_SUBREAPER, int(on)) == 0
    except (AttributeError, OSError):
        return False


def is_subreaper() -> bool:
    """Whether this process is a child subreaper now."""
    flag = ctypes.c_int(0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    except (AttributeError, OSError):
        return False
    return bool(flag.value)


def kill_descendants(keep: Callable[[int], bool] = lambda pid: False) -> int:
    """SIGKILL every descendant of this process (but the children ``keep`` names and their
    own descendants) and reap them; returns how many processes were killed (each once,
    however many rounds a slow death took).

    Run by a subreaper, this finds the detached ones too: when a parent is killed, its
    children come back to this process as children, so each round finds the next layer.
    """
    me = psutil.Process()
    killed: set[int] = set()
    for _ in range(KILL_ROUNDS):
        found = []
        for child in me.children():
            if keep(child.pid):
                continue
            try:
                found += [child, *child.children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
        alive = [p for p in found if _alive(p)]
        for process in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        killed.update(process.pid for process in alive)
        if alive:
            time.sleep(0.02)  # let the kills land before reaping
        _reap(me, keep)
        if not alive:
            break
    return len(killed)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _reap(me: psutil.Process, keep: Callable[[int], bool]) -> None:
    """Collect the exit status of this process's dead children (never a kept one's: its
    Popen object collects that)."""
    for child in me.children():
        if keep(child.pid):
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(child.pid, os.WNOHANG if _alive(child) else 0)


def kill_run_processes(run_tag: str) -> None:
    """Kill every process of any job of one run (tokens end with the run's tag)."""
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TOKEN_ENV, "").endswith(run_tag):
                process.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
