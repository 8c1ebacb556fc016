"""A temp folder of a process that ended (killed: no cleanup of its own ran) is removed by the
next that makes one of its kind; a live process's, another kind's, and links are left."""

import os
import subprocess
import sys

from autograder.grading.course.owned_temp import owned_temp_folder


def ended_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_the_folders_of_ended_processes_are_removed(tmp_path):
    dead = tmp_path / f"kind-{ended_pid()}-abc"
    (dead / "inside").mkdir(parents=True)
    alive = tmp_path / f"kind-{os.getppid()}-abc"
    alive.mkdir()
    other_kind = tmp_path / f"other-{ended_pid()}-abc"
    other_kind.mkdir()
    unnamed = tmp_path / "kind-nopid-abc"
    unnamed.mkdir()
    link = tmp_path / f"kind-{ended_pid()}-link"
    link.symlink_to(alive)
    made = owned_temp_folder("kind-", tmp_path)
    assert made.name.startswith(f"kind-{os.getpid()}-") and made.is_dir()
    assert not dead.exists(), "the ended process's folder was left"
    assert alive.is_dir() and other_kind.is_dir() and unnamed.is_dir() and link.is_symlink()
