"""The student release: what ``nbgrader generate_assignment`` makes of solutions/."""

import shutil
from pathlib import Path

from autograder.grading.course_root import load_course
from autograder.grading.nbgrader_workspace import create_workspace, run_nbgrader
from autograder.grading.repo_paths import COURSE_DIR, assignments


def generate_release(workspace: Path, assignment_ids: list[str] | None = None) -> Path:
    """Run the real generate_assignment in a fresh workspace; return its release folder.

    The workspace's gradebook then knows every assignment, ready for autograding.
    """
    create_workspace(workspace)
    for assignment in assignment_ids or assignments():
        run_nbgrader(workspace, "generate_assignment", assignment, "--force")
    return load_course(workspace).release


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
