"""The files put in a job folder, and those it holds after the student's kernel wrote in
it: only regular files are kept, read and given nbgrader's permissions, never through a link.

The grader runs outside the sandbox. nbgrader's last step chmods every file in the graded
folder, following links, so a link the kernel left there would let a student change the
mode of any file of the grading machine (the grader's Python made unrunnable, a private
file made readable). Links and special files are removed first, each named in the job's
log, and the rest is changed through descriptors that refuse links.
"""

import os
import stat
from pathlib import Path

# A file the notebook wrote that is larger than this is left out of the job's files.
MAX_FILE_BYTES = 64 * 2**20


def _entries(folder: Path):
    """Every entry under ``folder`` (links to folders included, never followed): its path
    relative to ``folder`` and its own lstat."""
    for top, folders, names in os.walk(folder):
        for name in sorted(names) + sorted(folders):
            path = os.path.join(top, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode):
                yield path, os.path.relpath(path, folder), info


def _kind(info: os.stat_result) -> str:
    return "a link" if stat.S_ISLNK(info.st_mode) else "not a regular file"


def remove_odd_entries(folder: Path) -> list[str]:
    """Remove every link and special file under ``folder``; what was removed, in words."""
    removed = []
    for path, relative, info in _entries(folder):
        if not stat.S_ISREG(info.st_mode):
            try:
                os.unlink(path)
                removed.append(f"{relative!r} ({_kind(info)}, removed)")
            except OSError as error:
                removed.append(f"{relative!r} ({_kind(info)}, not removed: {error.strerror})")
    return removed


def _open_regular(path: str) -> int | None:
    """A descriptor of ``path`` if it is a regular file and not a link, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def set_file_modes(folder: Path, mode: int) -> None:
    """nbgrader's ``set_permissions`` for the files under ``folder``, through descriptors:
    a link or special file (one made meanwhile) is skipped, never followed."""
    for path, _, _ in _entries(folder):
        fd = _open_regular(path)
        if fd is not None:
            try:
                os.fchmod(fd, mode)
            finally:
                os.close(fd)


def read_files(folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """Every regular file under ``folder`` as relative path -> bytes ({} when it is
    missing), and what was left out, in words: links are never followed (one could name
    any file of this machine), special files never read (a FIFO would block), and files
    over MAX_FILE_BYTES are not read."""
    files: dict[str, bytes] = {}
    left_out: list[str] = []
    for path, relative, info in _entries(folder):
        if not stat.S_ISREG(info.st_mode):
            left_out.append(f"{relative!r} ({_kind(info)})")
        elif info.st_size > MAX_FILE_BYTES:
            left_out.append(f"{relative!r} ({info.st_size} bytes)")
        else:
            fd = _open_regular(path)
            if fd is None:
                left_out.append(f"{relative!r} (could not be opened as a regular file)")
                continue
            with os.fdopen(fd, "rb") as opened:
                files[relative] = opened.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    return files, left_out


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative path -> bytes) under ``folder``, none outside it."""
    for relative, data in files.items():
        path = folder / relative
        if folder.resolve() not in path.resolve().parents:
            raise ValueError(f"job file outside its folder: {relative!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
