"""The local cluster is kept from one run to the next in a grading process: reused when a run
asks for as many workers in the same environment, replaced otherwise, closed after a run that
failed, never shared by two runs at once; the orphan sweep leaves its processes alone."""

import os
import threading
import time

import psutil
import pytest

from autograder.grading.pipeline.autograde.cluster.dask_cluster import grading_client
from autograder.grading.pipeline.autograde.cluster.local_cluster import (
    KEPT,
    KeptCluster,
    close_kept_cluster,
)
from autograder.grading.pipeline.autograde.cluster.orphans import CLUSTER_MARKER_ENV


def worker_pids(grading) -> set[int]:
    return set(grading.client.run(os.getpid).values())


def worker_pids_now(grading) -> set[int]:
    """The workers' pids, or none while one is gone (the scheduler not yet told)."""
    try:
        return worker_pids(grading)
    except Exception:
        return set()


def marker_of(pid: int) -> str | None:
    """The marker in the environment ``pid`` was started with."""
    return psutil.Process(pid).environ().get(CLUSTER_MARKER_ENV)


@pytest.fixture
def no_kept_cluster():
    close_kept_cluster()
    yield
    close_kept_cluster()
    assert CLUSTER_MARKER_ENV not in os.environ, "the cluster's marker stayed in the environment"


def tick_seconds(dask_scheduler=None, dask_worker=None) -> float:
    """How often a Dask server checks its event loop's health."""
    return (dask_scheduler or dask_worker)._tick_interval


def test_the_next_run_of_as_many_workers_reuses_the_cluster(no_kept_cluster):
    with grading_client(workers=1) as first:
        pids = worker_pids(first)
        assert all(marker_of(pid) == first.local_tag for pid in pids)
        # Started with the local cluster's settings: a tick a second, not 50.
        ticks = [
            first.client.run_on_scheduler(tick_seconds),
            *first.client.run(tick_seconds).values(),
        ]
        assert ticks == [1.0, 1.0]
    with grading_client(workers=1) as second:
        assert second.local_tag == first.local_tag and worker_pids(second) == pids
    with grading_client(workers=2) as other:
        assert other.local_tag != first.local_tag and len(worker_pids(other)) == 2
        assert all(marker_of(pid) == other.local_tag for pid in worker_pids(other))
    assert not any(psutil.pid_exists(pid) for pid in pids), "the replaced cluster's worker lives"


def test_a_changed_environment_starts_a_fresh_cluster(no_kept_cluster, monkeypatch):
    with grading_client(workers=1) as first:
        pass
    monkeypatch.setenv("AUTOGRADER_TEST_SETTING", "changed")  # a worker reads it once only
    with grading_client(workers=1) as second:
        assert second.local_tag != first.local_tag
        (pid,) = worker_pids(second)
        assert psutil.Process(pid).environ().get("AUTOGRADER_TEST_SETTING") == "changed"


def test_a_worker_started_again_between_runs_is_kept_by_the_next_runs_sweep(no_kept_cluster):
    with grading_client(workers=1) as first:
        (pid,) = worker_pids(first)
    psutil.Process(pid).kill()  # its nanny starts another one, without the marker
    deadline = time.monotonic() + 60
    while worker_pids_now(first) in ({pid}, set()) and time.monotonic() < deadline:
        time.sleep(0.2)
    with grading_client(workers=1) as second:
        assert second.local_tag == first.local_tag
        (again,) = worker_pids(second)
        assert again != pid and marker_of(again) is None
        assert second.sweep() == 0 and psutil.pid_exists(again)
        assert worker_pids(second) == {again}


def test_a_run_started_just_after_a_worker_was_killed_gets_answering_workers(no_kept_cluster):
    with grading_client(workers=1) as first:
        (pid,) = worker_pids(first)
        nanny = psutil.Process(pid).parent()
    assert nanny is not None and nanny.pid == os.getpid()  # a local cluster: this process's
    psutil.Process(pid).kill()
    with grading_client(workers=1) as second:  # at once: not waiting for its nanny
        (answering,) = worker_pids(second)
        assert answering != pid


def test_a_run_that_fails_closes_the_cluster(no_kept_cluster):
    with pytest.raises(RuntimeError, match="the run failed"):
        with grading_client(workers=1) as grading:
            pids = worker_pids(grading)
            raise RuntimeError("the run failed")
    assert KEPT._kept is None
    assert not any(psutil.pid_exists(pid) for pid in pids)
    with grading_client(workers=1) as fresh:
        assert fresh.local_tag != grading.local_tag


def test_a_run_beside_another_grades_on_a_private_cluster(no_kept_cluster):
    seen = {}
    with grading_client(workers=1) as held:

        def beside() -> None:
            with grading_client(workers=1) as private:
                seen["tag"], seen["pids"] = private.local_tag, worker_pids(private)

        thread = threading.Thread(target=beside)
        thread.start()
        thread.join()
        assert seen["tag"] != held.local_tag
        assert not worker_pids(held) & seen["pids"]
    assert not any(psutil.pid_exists(pid) for pid in seen["pids"]), "the private one lives on"
    with grading_client(workers=1) as again:
        assert again.local_tag == held.local_tag, "the private cluster replaced the kept one"


def test_a_cluster_left_without_a_run_stops():
    keeper = KeptCluster(idle_stop=1.0)
    with keeper.lend(1) as local:
        pids = worker_pids(local)
    deadline = time.monotonic() + 60
    while keeper._kept is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert keeper._kept is None, "the idle cluster was kept"
    while any(psutil.pid_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)  # stopped: its worker is being reaped
    assert not any(psutil.pid_exists(pid) for pid in pids), "its worker lives on"
