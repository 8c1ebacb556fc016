"""What a copy of the student's kernel could leave on the file system for the kernel to
read later: the names, link targets, sizes, times and modes in the folders its sandbox may
write (extended attributes change an entry's ctime, so they are seen too).

A copy opens no file (RLIMIT_NOFILE 0), but calls made by path need no file descriptor
(``mkdir``, ``symlink``, ``rename``, ``utime``, ``truncate``, ``setxattr``): through them
alone a copy could write out the reference parts lent to it. So the trusted side takes a
snapshot of every writable mount of the kernel's sandbox when the copy starts (the kernel
already stopped) and compares once the copy is killed; anything changed means the kernel
must never run again. Unsandboxed grading shares this process's mounts: nothing is
snapshotted there (the whole file system is writable, as the module ``lending`` says).
"""

import os
import re
import stat

# Mounts that are not files a process leaves things in (or cannot be written by path).
NOT_FILES = frozenset({"proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "securityfs"})
MAX_ENTRIES = 50_000  # a sandbox holds a few hundred; past this the walk stops and says so
Entry = tuple[int, int, int, int, int, str]  # mode, inode, size, mtime, ctime, link target


class TooManyEntries(RuntimeError):
    """The writable folders hold too many entries to compare in the time of a test cell."""


def _unescape(path: str) -> str:
    """A mountinfo path with its octal escapes (``\\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


def mounts(pid: int) -> list[tuple[str, bool]] | None:
    """``(mount point, writable)`` for every mount of ``pid``'s mount namespace that holds
    files; None when ``pid`` shares this process's mount namespace (unsandboxed)."""
    if os.stat(f"/proc/{pid}/ns/mnt").st_ino == os.stat("/proc/self/ns/mnt").st_ino:
        return None
    found = []
    with open(f"/proc/{pid}/mountinfo") as mountinfo:
        for line in mountinfo:
            left, _, right = line.partition(" - ")
            fields = left.split()
            if len(fields) < 6 or not right:
                continue
            if right.split()[0] not in NOT_FILES:
                found.append((_unescape(fields[4]), "rw" in fields[5].split(",")))
    return found


def _entry(path: str) -> Entry:
    info = os.lstat(path)
    target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, target)


def snapshot(pid: int) -> dict[str, Entry] | None:
    """Every entry under the writable mounts of ``pid``'s sandbox (path as seen inside ->
    what it is); None unsandboxed. Other mounts below a writable one are not entered."""
    found = mounts(pid)
    if found is None:
        return None
    points = {point for point, _ in found}
    root = f"/proc/{pid}/root"
    state: dict[str, Entry] = {}
    for point, writable in found:
        if not writable:
            continue
        folders = [point]
        state[point] = _entry(root + point)
        while folders:
            folder = folders.pop()
            try:
                names = os.listdir(root + folder)
            except (NotADirectoryError, FileNotFoundError, PermissionError):
                continue
            for name in names:
                inside = f"{folder.rstrip('/')}/{name}"
                try:
                    state[inside] = entry = _entry(root + inside)
                except FileNotFoundError:
                    continue
                if stat.S_ISDIR(entry[0]) and inside not in points:
                    folders.append(inside)
            if len(state) > MAX_ENTRIES:
                raise TooManyEntries(
                    f"the kernel's writable folders hold over {MAX_ENTRIES} entries"
                )
    return state


def changes(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """What differs between two snapshots, in words (at most five, then a count)."""
    said = [f"made {path}" for path in sorted(after.keys() - before.keys())]
    said += [f"removed {path}" for path in sorted(before.keys() - after.keys())]
    said += [
        f"changed {path}"
        for path in sorted(before.keys() & after.keys())
        if before[path] != after[path]
    ]
    if len(said) > 5:
        return [*said[:5], f"and {len(said) - 5} more"]
    return said
