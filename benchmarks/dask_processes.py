"""A Dask cluster started the way an instructor starts one by hand: a ``dask scheduler``
process and ``dask worker`` processes, here all on 127.0.0.1 (so nothing outside the machine
can reach them), stopped together afterwards."""

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from autograder.grading.course.nbgrader_workspace import kernel_environment

START_TIMEOUT = 300.0  # seconds for the scheduler and every worker to come up, when loaded


def dask_command() -> str:
    """The ``dask`` program of this environment."""
    return str(Path(sys.executable).parent / "dask")


@contextlib.contextmanager
def dask_processes(workers: int) -> Iterator[str]:
    """Start ``dask scheduler`` and ``workers`` ``dask worker`` processes (one thread each);
    yield the scheduler's address once every worker has joined."""
    from distributed import Client

    folder = Path(tempfile.mkdtemp(prefix="dask-bench-"))
    scheduler_file = folder / "scheduler.json"
    env = kernel_environment()
    # One job per worker, none queued behind it (see docs/scaling.md).
    env["DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION"] = "1.0"
    local = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
    processes = [
        subprocess.Popen(
            [dask_command(), "scheduler", *local, "--port", "0"]
            + ["--scheduler-file", str(scheduler_file)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not scheduler_file.exists():
            if time.monotonic() > deadline or processes[0].poll() is not None:
                raise RuntimeError("dask scheduler did not start")
            time.sleep(0.2)
        for _ in range(workers):
            processes.append(
                subprocess.Popen(
                    [dask_command(), "worker", "--scheduler-file", str(scheduler_file), *local]
                    + ["--nthreads", "1", "--memory-limit", "0"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        with Client(scheduler_file=str(scheduler_file), set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=START_TIMEOUT)
            address = client.scheduler.address
        yield address
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT)
        for process in reversed(processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
