"""The student release: what ``nbgrader generate_assignment`` makes of solutions/.

nbgrader keeps every cell's metadata; the keys only the instructor's tools read (``engine``,
which engine_sync uses in solutions/) are taken out, so students get none of them.
"""

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from autograder.grading.course.course_root import Course
from autograder.grading.course.nbgrader_workspace import (
    NbgraderError,
    captured_log,
    create_workspace,
)
from autograder.grading.course.repo_paths import COURSE_DIR, assignments
from autograder.grading.course.run_progress import StepProgress

if TYPE_CHECKING:
    from traitlets.config import Config


def generate_release(
    workspace: Path,
    assignment_ids: list[str] | None = None,
    report: Callable[[str], None] | None = None,
    language: str = "en",
) -> Course:
    """Run the real generate_assignment in a fresh workspace; return the workspace's Course
    (its release folder is ``.release``).

    The workspace's gradebook then knows every assignment, ready for autograding.
    ``report``, when given, gets a progress line as each notebook starts and ends.
    ``language`` picks the edition: its solutions are the source, its settings loaded.
    """
    from autograder.grading.authoring.i18n.edition import edition

    chosen = edition(language)
    course = create_workspace(workspace, chosen.solutions, chosen.settings)
    ids = assignment_ids or assignments()
    progress = StepProgress(dict.fromkeys(ids, 1), "notebook", "releasing", report or _silent)
    for assignment in ids:
        progress.start(assignment)
        generate_assignment(course.loaded_config, assignment)
        for path in sorted((course.release / assignment).glob("*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            if strip_instructor_metadata(notebook):
                nbformat.write(notebook, path)
        progress.finish(assignment)
    return course


def generate_assignment(config: "Config", assignment: str) -> None:
    """``nbgrader generate_assignment ASSIGNMENT --force``, run in this process.

    The same converter the command runs, with the config it would read: one process for a
    whole release instead of one per notebook (nbgrader's start-up costs seconds each).
    """
    from nbgrader.converters import GenerateAssignment, NbGraderException
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = assignment
    converter = GenerateAssignment(coursedir=coursedir, config=config)
    converter.force = True
    with captured_log(converter.log) as log:
        try:
            converter.start()
        except NbGraderException as error:
            raise NbgraderError(
                f"`nbgrader generate_assignment {assignment}` failed:\n{log.getvalue()}"
            ) from error


# Cell metadata for the instructor's tools only: engine_sync's chunk of each engine cell.
INSTRUCTOR_METADATA = ("engine",)


def strip_instructor_metadata(notebook: nbformat.NotebookNode) -> int:
    """Take the instructor-only keys out of every cell's metadata; return how many there were."""
    removed = 0
    for cell in notebook.cells:
        for key in INSTRUCTOR_METADATA:
            removed += cell.metadata.pop(key, None) is not None
    return removed


def _silent(line: str) -> None:
    """No progress output."""


def publish_release(release_dir: Path, course_dir: Path = COURSE_DIR) -> list[str]:
    """Replace course/ with a generated release; return the assignments written."""
    written = []
    for assignment_dir in sorted(p for p in release_dir.iterdir() if p.is_dir()):
        target = course_dir / assignment_dir.name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(assignment_dir, target, ignore=shutil.ignore_patterns(".*"))
        written.append(assignment_dir.name)
    return written
