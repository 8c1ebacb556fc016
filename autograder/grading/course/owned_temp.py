"""Temporary folders named after the process that made them: one left behind by a process
that was killed (so no cleanup of its own ran) is removed by the next process that makes a
folder of the same kind, instead of piling up in the temp folder run after run."""

import os
import shutil
import tempfile
from pathlib import Path

import psutil


def owned_temp_folder(prefix: str, parent: str | Path | None = None) -> Path:
    """A new folder ``PREFIX<pid>-<random>`` in ``parent`` (the temp folder by default),
    after removing the ones of this kind whose process has ended."""
    base = Path(parent or tempfile.gettempdir())
    remove_abandoned(base, prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def remove_abandoned(base: Path, prefix: str) -> int:
    """Remove this user's ``PREFIX<pid>-*`` folders in ``base`` whose process is gone; how
    many were removed. A pid in use again keeps its folder (left, never wrongly removed)."""
    removed = 0
    for entry in base.glob(f"{prefix}*-*"):
        owner = entry.name[len(prefix) :].split("-", 1)[0]
        if not owner.isdigit() or psutil.pid_exists(int(owner)):
            continue
        try:
            if entry.is_symlink() or entry.lstat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    return removed
