"""The grading process's sweep of a local cluster's orphans: during a run it is a child
subreaper, so what a killed worker's job left running (detached, environment cleared) comes
back to it as its child, and is killed.

Its other children are the local cluster's own processes (the worker processes Dask's
nannies start in this process, and multiprocessing's helpers): they are told apart by a
marker in the environment they were started with, set in this process's environment for the
run (so whatever it starts inherits it) and removed from each worker's before any job, so no
kernel, and nothing a kernel starts, carries it. A child just forked and not yet exec'd
still shows this process's command line: left alone too, for one sweep.
"""

import contextlib
import os
from collections.abc import Iterator

import psutil

from autograder.grading.pipeline.autograde.cluster.processes import (
    is_subreaper,
    kill_descendants,
    set_subreaper,
)

CLUSTER_MARKER_ENV = "AUTOGRADER_CLUSTER_PROCESS"  # set to the run's tag


class OrphanSweeper:
    """Kills this process's children that are neither older than the run nor the cluster's."""

    def __init__(self, run_tag: str) -> None:
        self.run_tag = run_tag
        self.me = psutil.Process()
        self.before = {child.pid for child in self.me.children()}
        self.cmdline = self.me.cmdline()

    def _keep(self, pid: int) -> bool:
        if pid in self.before:
            return True
        try:
            child = psutil.Process(pid)
            if child.environ().get(CLUSTER_MARKER_ENV) == self.run_tag:
                return True
            return child.cmdline() == self.cmdline  # forked here, not yet exec'd
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            return False
        except psutil.AccessDenied:  # not ours to kill anyway
            return True

    def sweep(self) -> int:
        """Kill every orphan now; how many processes were killed."""
        return kill_descendants(self._keep)


@contextlib.contextmanager
def marked(tag: str) -> Iterator[None]:
    """The cluster marker set to ``tag`` in this process's environment meanwhile (what the
    processes started meanwhile inherit), then put back as it was."""
    saved = os.environ.get(CLUSTER_MARKER_ENV)
    os.environ[CLUSTER_MARKER_ENV] = tag
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(CLUSTER_MARKER_ENV, None)
        else:
            os.environ[CLUSTER_MARKER_ENV] = saved


@contextlib.contextmanager
def sweeping(run_tag: str) -> Iterator[OrphanSweeper]:
    """This process a subreaper and the cluster marker set meanwhile; a last sweep at the
    end, and both put back as they were."""
    was_subreaper = is_subreaper()
    sweeper = OrphanSweeper(run_tag)
    with marked(run_tag):
        set_subreaper(True)
        try:
            yield sweeper
        finally:
            try:
                sweeper.sweep()
            finally:
                set_subreaper(was_subreaper)
