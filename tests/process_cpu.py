"""CPU time of a test process and everything it started, for the test timeline.

A kernel in the sandbox dies with its bubblewrap and a trusted kernel is forked by a warm
process: neither is reaped by this process's children, so ``RUSAGE_CHILDREN`` misses their
CPU. A cgroup of the test process's own counts every process started inside it, so where
this process may make one (root, cgroup v1's cpuacct; CI's and a developer's machines as a
rule) the timeline reads that; elsewhere ``getrusage``, a lower bound.
"""

import os
import resource
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
PREFIX = "autograder-tests-"


def remove_stale_groups() -> None:
    """Remove the groups of earlier runs' test processes that have ended: a group still
    holding a process at the end of its run (a cluster stopping at exit) outlives it."""
    for group in CPUACCT.glob(f"{PREFIX}*"):
        pid = group.name.removeprefix(PREFIX)
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                group.rmdir()  # only an empty group goes
            except OSError:
                pass


def own_cgroup() -> Path | None:
    """A cpuacct cgroup for this process alone, this process moved into it (its children
    follow); None where the machine does not allow it."""
    group = CPUACCT / f"{PREFIX}{os.getpid()}"
    remove_stale_groups()
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def leave_cgroup(group: Path) -> None:
    """Back into the parent group, and the empty group removed (left alone while a process
    of the run is still in it)."""
    try:
        (group.parent / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()
    except OSError:
        pass


def cpu_seconds(group: Path | None) -> float:
    """CPU seconds this process and its descendants used so far: the cgroup's count, or
    this process's and its reaped children's."""
    if group is not None:
        try:
            return int((group / "cpuacct.usage").read_text()) / 1e9
        except OSError:
            pass
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
