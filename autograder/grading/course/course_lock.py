"""One grading command at a time per course root.

Two runs on one root would both grade every submission and race on the gradebook (sqlite
refuses the second writer's rows with UNIQUE errors). ``autograde``, ``feedback`` and
``export`` hold an exclusive ``flock`` on ``ROOT/.autograd-course.lock`` while they run. The
kernel drops the lock when its holder dies, however it dies, so a killed run never blocks
the next one; the file keeps the holder's pid and command, which name the running process
to a second command and show, when a new run finds them left behind, that the last one was
killed before it could clear them.
"""

import contextlib
import datetime as dt
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.course.course_root import AutogradeError

LOCK_NAME = ".autograd-course.lock"


class CourseBusy(AutogradeError):
    """Another grading command holds the course root's lock."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a course root's lock, as its lock file says."""

    pid: int
    command: str
    started: str

    def describe(self) -> str:
        """The holder in words, for a message."""
        return f"pid {self.pid} ({self.command}, started {self.started})"


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_holder(fd: int) -> Holder | None:
    """The holder written in the lock file open at ``fd`` (None when empty or unreadable)."""
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode(errors="replace")
    try:
        fields = json.loads(text)
        return Holder(int(fields["pid"]), str(fields["command"]), str(fields["started"]))
    except (ValueError, KeyError, TypeError):
        return None


def write_holder(fd: int, holder: Holder | None) -> None:
    """Replace the lock file's content with ``holder`` (empty for None: released cleanly)."""
    os.ftruncate(fd, 0)
    if holder is not None:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(holder.__dict__).encode())


def busy_message(root: Path, fd: int) -> str:
    """Why ``root`` cannot be used now, naming the process that holds it."""
    holder = read_holder(fd)
    if holder is None:  # it took the lock a moment ago and is writing its name
        time.sleep(0.2)
        holder = read_holder(fd)
    who = holder.describe() if holder else "another process"
    if holder and not pid_alive(holder.pid):  # a process it started still has the file open
        who = f"a process left behind by {who}, which is no longer running"
    return f"{root} is in use by {who}; wait for it to finish or stop it, then run this again"


@contextlib.contextmanager
def course_lock(root: Path, command: str) -> Iterator[Holder | None]:
    """Hold ``root``'s lock meanwhile, or raise CourseBusy naming its holder.

    Yields the holder a killed run left in the file (its lock taken over), else None.
    """
    path = Path(root) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CourseBusy(busy_message(Path(root), fd)) from None
        left_behind = read_holder(fd)
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        write_holder(fd, Holder(os.getpid(), command, started))
        try:
            yield left_behind
        finally:
            write_holder(fd, None)  # a clean end: nothing left for the next run to report
    finally:
        os.close(fd)  # closing drops the lock
