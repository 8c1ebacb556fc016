"""A throwaway nbgrader course folder where the real nbgrader commands run.

nbgrader wants one root with source/, release/, submitted/, autograded/ and a gradebook.
The repository keeps only source (solutions/) and release (course/), so grading happens in
a workspace: a copy of solutions/ as source/, and a config that loads the repository's
nbgrader_config.py and points the folders there. Everything nbgrader writes stays inside.
"""

import contextlib
import io
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading.course import nbgrader_program
from autograder.grading.course.course_root import load_course
from autograder.grading.course.repo_paths import NBGRADER_CONFIG, SOLUTIONS_DIR

if TYPE_CHECKING:
    from autograder.grading.course.course_root import Course


def course_config(
    base_config: Path,
    root: Path | None,
    db_url: str | None,
    *more_configs: str,
    **directories: str,
) -> str:
    """The text of an nbgrader_config.py that loads ``base_config``, then moves the course.

    ``more_configs`` (paths, a relative one from the written config's folder) are loaded
    after ``base_config``: a translated edition's settings.
    The course moves to ``root`` (None: the folder nbgrader runs in, so the config still
    holds when the folder is copied) and its gradebook to ``db_url`` (None: nbgrader's
    default, gradebook.db in the course root); ``directories`` sets
    other CourseDirectory folders (``source_directory="source"``, ...). Every config this
    package writes comes from here.
    """
    lines = [
        "c = get_config()  # noqa: F821",
        f"load_subconfig({str(base_config)!r})  # noqa: F821",
        *(f"load_subconfig({name!r})  # noqa: F821" for name in more_configs),
        *([f"c.CourseDirectory.root = {str(root)!r}"] if root is not None else []),
        *(f"c.CourseDirectory.{name} = {value!r}" for name, value in directories.items()),
        *([f"c.CourseDirectory.db_url = {db_url!r}"] if db_url is not None else []),
    ]
    return "\n".join(lines) + "\n"


# A translated edition's nbgrader settings, copied into its workspace (so copies keep them).
EDITION_CONFIG = "edition_config.py"


def write_workspace_config(root: Path) -> None:
    """Point ``root/nbgrader_config.py`` at the workspace: the repository's config, moved.

    Folders and gradebook are relative to the workspace (the gradebook is nbgrader's
    default, in the course root), so a plain copy of it is a course of its own (tests copy
    graded workspaces). An edition's settings in the workspace
    (``edition_config.py``) are loaded after the repository's config.
    """
    config = course_config(
        NBGRADER_CONFIG,
        None,
        None,
        *([EDITION_CONFIG] if (root / EDITION_CONFIG).is_file() else []),
        source_directory="source",
        release_directory="release",
    )
    (root / "nbgrader_config.py").write_text(config)


class NbgraderError(RuntimeError):
    """An nbgrader command failed; the message carries its output."""


def create_workspace(
    root: Path, solutions_dir: Path = SOLUTIONS_DIR, edition_settings: Path | None = None
) -> "Course":
    """Make a fresh workspace at ``root`` (wiping an old one) and return its Course, loaded
    here once for whoever goes on to release or grade in it.

    ``edition_settings``: a translated edition's nbgrader settings, kept in the workspace.
    """
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copytree(solutions_dir, root / "source", ignore=shutil.ignore_patterns(".*"))
    if edition_settings is not None:
        shutil.copyfile(edition_settings, root / EDITION_CONFIG)
    write_workspace_config(root)
    return load_course(root)


def copy_workspace(template: Path, root: Path) -> Path:
    """A copy of the workspace ``template`` at ``root`` (wiping an old one), its config moved."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(template, root)
    write_workspace_config(root)
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
    # No forced backend: ipykernel's inline one turns figures into image/png outputs, as in
    # the student's lab (Agg would make plt.show() record nothing in graded notebooks).
    env.pop("MPLBACKEND", None)
    return env


# libpq (psycopg) reads its host, user and password from these environment variables.
DATABASE_VARIABLE_PREFIX = "PG"


def grading_environment() -> dict[str, str]:
    """kernel_environment without database settings: for the grading workers, whose kernels
    run students' code and must not find the course database (they have their own)."""
    env = kernel_environment()
    return {k: v for k, v in env.items() if not k.startswith(DATABASE_VARIABLE_PREFIX)}


def run_nbgrader(root: Path, *args: str) -> str:
    """Run ``nbgrader ARGS`` in the workspace with this Python; return its output."""
    command = [sys.executable, "-m", nbgrader_program.__name__, *args]
    result = subprocess.run(
        command, cwd=root, env=kernel_environment(), capture_output=True, text=True
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise NbgraderError(f"`nbgrader {' '.join(args)}` failed ({result.returncode}):\n{output}")
    return output


@contextlib.contextmanager
def captured_log(logger: logging.Logger) -> Iterator[io.StringIO]:
    """The logger's INFO and above into a string meanwhile; handler and level put back."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
