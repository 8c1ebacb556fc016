"""Shared set-up: kernels started by tests come from this environment."""

import json
import os

from postgres_server import postgres_server  # noqa: F401  (the PostgreSQL test server)
from process_cpu import cpu_seconds, leave_cgroup, own_cgroup
from untested_summary import pytest_unconfigure  # noqa: F401  (the closing lines)

# Same as the Makefile: nbgrader and nbval must start this interpreter's kernel,
# not a python3 kernelspec that may exist in the user's home folder.
os.environ["JUPYTER_PREFER_ENV_PATH"] = "1"
# No forced matplotlib backend, as in the student's lab: kernels started by nbval and
# nbgrader draw figures inline (image/png outputs, no display needed).
os.environ.pop("MPLBACKEND", None)


# The longest files first (from `--durations` and a timeline, `python -m tests.timeline`),
# so that no long file starts last while the other test processes have run out of work.
# pytest-xdist hands files out in collection order only with --no-loadscope-reorder
# (the Makefile's): by default it hands out the files with the most tests first.
SLOWEST_FIRST = (
    "test_pipeline.py",
    "test_autograde.py",
    "test_redteam.py",
    "test_hub.py",
    "test_leftovers.py",
    "test_spanish_pipeline.py",
    "test_independence.py",
    "test_sandbox.py",
    "test_trusted_grading.py",
    "test_term_end_to_end.py",
    "test_dask_engine.py",
    "test_mutation.py",
    "test_kit_alone.py",
    "test_release.py",
    "test_postgres_gradebook.py",
    "test_local_cluster.py",
    "test_benchmarks_smoke.py",
    "test_no_autograd_in_kernel.py",
    "test_hostile_submissions.py",
    "test_lending.py",
    "test_integrity.py",
)


def pytest_collection_modifyitems(items):
    """Run the slowest files' tests first (a stable sort: their order within kept)."""
    rank = {name: position for position, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


TIMELINE_ENV = "AUTOGRADER_TEST_TIMELINE"  # a file: each test phase's worker, start and stop


_cgroup: list = []  # the test process's own cpuacct group, when the timeline is written


def pytest_configure(config):
    """With the timeline asked for, count this test process's CPU in a cgroup of its own
    (left at the end of the run)."""
    if os.environ.get(TIMELINE_ENV) and (group := own_cgroup()) is not None:
        _cgroup.append(group)
        config.add_cleanup(lambda: leave_cgroup(group))


def pytest_runtest_logreport(report):
    """With AUTOGRADER_TEST_TIMELINE set, add each phase of each test to that file (one JSON
    line: worker, pid, test, phase, start, stop, cpu), to see how busy the test processes
    kept the machine and what each file cost (`python -m tests.timeline FILE`)."""
    path = os.environ.get(TIMELINE_ENV)
    # pytest-xdist's controller hears every worker's reports again (they carry ``node``).
    if not path or not hasattr(report, "start") or hasattr(report, "node"):
        return
    line = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "pid": os.getpid(),
        "test": report.nodeid,
        "phase": report.when,
        "start": report.start,
        "stop": report.stop,
        "cpu": cpu_seconds(_cgroup[0] if _cgroup else None),
    }
    with open(path, "a", encoding="utf-8") as timeline:
        timeline.write(json.dumps(line) + "\n")
