"""The processes of a job, found by a marker in their environment and killed together: the
kernel runs in a session of its own, and so does anything the student's code started."""

import psutil

JOB_TOKEN_ENV = "AUTOGRADER_JOB"


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


def kill_run_processes(run_tag: str) -> None:
    """Kill every process of any job of one run (tokens end with the run's tag)."""
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TOKEN_ENV, "").endswith(run_tag):
                process.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
