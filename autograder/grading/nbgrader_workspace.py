"""A throwaway nbgrader course folder where the real nbgrader commands run.

nbgrader wants one root with source/, release/, submitted/, autograded/ and a gradebook.
The repository keeps only source (solutions/) and release (course/), so grading happens in
a workspace: a config that loads the repository's nbgrader_config.py and names the
workspace's own folders, and a copy of solutions/ as its source. Everything nbgrader writes
stays inside, and nothing in the config names the workspace's place: a copy still works.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.grading.repo_paths import NBGRADER_CONFIG, SOLUTIONS_DIR

WORKSPACE_CONFIG = """\
c = get_config()  # noqa: F821
load_subconfig({repo_config!r})  # noqa: F821
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"  # from the folder nbgrader runs in
"""


class NbgraderError(RuntimeError):
    """An nbgrader command failed; the message carries its output."""


def create_workspace(root: Path, solutions_dir: Path = SOLUTIONS_DIR) -> Path:
    """Make a fresh workspace at ``root`` (wiping an old one) and return it."""
    from autograder.grading.course_root import CONFIG_NAME, load_course

    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / CONFIG_NAME).write_text(WORKSPACE_CONFIG.format(repo_config=str(NBGRADER_CONFIG)))
    source = load_course(root).source
    shutil.copytree(solutions_dir, source, ignore=shutil.ignore_patterns(".*"))
    return root


def kernel_environment() -> dict[str, str]:
    """Environment for nbgrader and its kernels: this Python's kernel, never a user's one."""
    env = dict(os.environ)
    # nbgrader runs helper programs (alembic) by name: find this environment's first,
    # also when it was started as .venv/bin/autograd-course without activating the venv.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # Look up kernelspecs in this environment first, so "python3" is this interpreter
    # even where the user has another python3 kernel installed in their home folder.
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def run_nbgrader(root: Path, *args: str) -> str:
    """Run ``nbgrader ARGS`` in the workspace with this Python; return its output."""
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(
        command, cwd=root, env=kernel_environment(), capture_output=True, text=True
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise NbgraderError(f"`nbgrader {' '.join(args)}` failed ({result.returncode}):\n{output}")
    return output
