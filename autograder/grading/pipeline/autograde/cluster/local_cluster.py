"""The local Dask cluster a grading process grades on, kept from one run to the next.

Starting one costs seconds (nannies spawning workers that import distributed and nbgrader,
then a warm process each importing torch) and stopping one 1-2 s more: a process that grades
several times (the mutation tool's notebook after notebook, a test session, an instructor's
own script) pays that once. A run reuses the kept cluster only when it asks for as many
workers, in the same environment (a worker reads its grading environment once, when it
starts), every worker answers and no other run holds it; otherwise a fresh cluster replaces
it (or, while another run holds it, serves this run alone). A run that ends in an exception
closes it: a cluster in an unknown state is never reused. Left without a run for
``IDLE_STOP`` seconds, it stops.

The orphan sweep (``orphans``) keeps this process's children that carry the cluster's tag
in their environment, and those older than the run: the cluster's processes started with
the tag (it is set here while the cluster starts, and during each run), and a worker its
nanny started again between runs is older than the next run.
"""

import atexit
import contextlib
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from autograder.grading.pipeline.autograde.cluster.dask_worker import (
    PLUGIN_NAME,
    GradingWorkerSetup,
)
from autograder.grading.pipeline.autograde.cluster.orphans import CLUSTER_MARKER_ENV, marked

LOCAL_SCHEDULER_CONFIG = {
    # A local cluster gives up on a job after this many dead workers plus one (Dask's
    # default is 3): a submission that kills its worker is graded twice, as a dead kernel is.
    "distributed.scheduler.allowed-failures": 1,
    # One job per worker at a time, none queued behind it: a job waiting on a worker that
    # dies counts that death against it too (Dask's default of 1.1 queues a second one).
    "distributed.scheduler.worker-saturation": 1.0,
    # No statistical profiler sampling the grading thread's stack every 10 ms, and the
    # machine's counters read every 2 s rather than every 0.5 s: CPU the kernels need, for
    # a dashboard nobody opens (and memory managing, off: the kernels have their limits).
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    # Each Dask process checks its event loop's health once a second, not every 20 ms: an
    # idle two-worker cluster then takes 0.9 CPU-seconds a minute, not 4.9 (measured over
    # 30 s: 0.44 against 2.43), and a grading run keeps its cluster busy for minutes.
    "distributed.admin.tick.interval": "1s",
}
# Seconds a kept cluster's workers may take to answer before it is replaced (a worker
# killed at the end of the last run is being started again by its nanny).
WORKERS_BACK_TIMEOUT = 30.0
# Seconds a kept cluster waits for the next run before it stops: idle, its processes still
# take a few percent of a core (heartbeats, the machine's counters).
IDLE_STOP = 30.0


@dataclass
class LocalGrading:
    """A local cluster, its client, the marker its processes carry, and what it was
    started for (the worker count and this process's environment then)."""

    cluster: object
    client: object
    tag: str
    workers: int
    environment: dict[str, str]

    def fits(self, workers: int) -> bool:
        """Whether a run of ``workers`` workers, started now, may grade on this cluster."""
        if workers != self.workers or self.environment != environment_now():
            return False
        if self.client.status != "running":
            return False
        try:
            self.client.wait_for_workers(workers, timeout=WORKERS_BACK_TIMEOUT)
            # Each worker asked: one just killed may still be on the scheduler's list.
            answered = self.client.run(os.getpid)
        except Exception:  # a scheduler that died, a worker that is gone or never came back
            return False
        return len(answered) == workers

    def close(self) -> None:
        """Stop the cluster."""
        with contextlib.suppress(Exception):
            self.client.close()
        self.cluster.close()


def environment_now() -> dict[str, str]:
    """This process's environment, less the cluster marker."""
    return {k: v for k, v in os.environ.items() if k != CLUSTER_MARKER_ENV}


def start_local(workers: int) -> LocalGrading:
    """A new local cluster of ``workers`` one-thread worker processes on 127.0.0.1."""
    import dask
    from distributed import Client, LocalCluster

    tag = f"autograde-cluster-{uuid.uuid4().hex[:12]}"
    with marked(tag), dask.config.set(LOCAL_SCHEDULER_CONFIG):  # what its processes start with
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,  # grade_job owns its process while it runs
            processes=True,
            host="127.0.0.1",  # nothing outside this machine can send it work
            dashboard_address=None,
            # The scheduler serves /health over HTTP even without a dashboard: on a
            # free loopback port, not on 8787 (taken by the first of two runs).
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            worker_dashboard_address=None,
            memory_limit=0,  # the kernels have their own limit, set at their launch
            silence_logs=logging.CRITICAL,
        )
    client = Client(cluster, set_as_default=False)
    # A local cluster's workers share the terminal with the grading process: Ctrl-C is
    # that process's to handle (it stops the cluster), not theirs to print about.
    client.register_plugin(GradingWorkerSetup(ignore_interrupts=True), name=PLUGIN_NAME)
    # Read after the start: Dask sets a few variables here as it starts its workers
    # (thread counts, the parent's pid), which would otherwise tell every run apart.
    return LocalGrading(cluster, client, tag, workers, environment_now())


class KeptCluster:
    """At most one local cluster, lent to one run at a time and kept between runs."""

    def __init__(self, idle_stop: float = IDLE_STOP) -> None:
        self._lock = threading.Lock()  # held by the run the cluster is lent to
        self._kept: LocalGrading | None = None
        self._idle_stop = idle_stop
        self._idle_timer: threading.Timer | None = None

    @contextlib.contextmanager
    def lend(self, workers: int) -> Iterator[LocalGrading]:
        """The kept cluster if it fits ``workers``, else a fresh one kept in its place; a
        private one (closed at the end) while another run holds the kept one."""
        if not self._lock.acquire(blocking=False):
            private = start_local(workers)
            try:
                yield private
            finally:
                private.close()
            return
        self._cancel_idle_stop()
        try:
            if self._kept is not None and not self._kept.fits(workers):
                self._close_kept()
            if self._kept is None:
                self._kept = start_local(workers)
            try:
                yield self._kept
            except BaseException:
                self._close_kept()
                raise
            self._idle_timer = threading.Timer(self._idle_stop, self._stop_if_idle)
            self._idle_timer.daemon = True
            self._idle_timer.start()
        finally:
            self._lock.release()

    def _stop_if_idle(self) -> None:
        """The idle timer's end: stop the kept cluster unless a run holds it."""
        if self._lock.acquire(blocking=False):
            try:
                self._close_kept()
            finally:
                self._lock.release()

    def _cancel_idle_stop(self) -> None:
        timer, self._idle_timer = self._idle_timer, None
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        """Stop the kept cluster now (waits for a run holding it to end)."""
        with self._lock:
            self._cancel_idle_stop()
            self._close_kept()

    def _close_kept(self) -> None:
        if self._kept is not None:
            try:
                self._kept.close()
            finally:
                self._kept = None  # only once stopped: None means no cluster process left


KEPT = KeptCluster()
atexit.register(KEPT.close)


def close_kept_cluster() -> None:
    """Stop the local cluster this process keeps between runs, if any (it is stopped at
    exit anyway)."""
    KEPT.close()
