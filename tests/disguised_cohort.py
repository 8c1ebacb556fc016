"""A cohort for judging copy detection: independent honest solutions (tests/fixtures/
independent_NN/) with the reference, and copies of each honest student disguised at three
levels, as someone trying to evade the tool would:

- ``rename``: names, comments and blank lines changed, two definitions swapped;
- ``reorder``: independent statements reordered and equivalent constructs swapped (a
  comprehension for its loop, a conditional expression for its if/else), renamed too;
- ``restructure``: helpers inlined at their call sites and the longest function split.
"""

import shutil
from collections.abc import Callable
from pathlib import Path

import nbformat
from independent_solutions import implementations, student_notebook
from similarity_rewrite import disguise, reorder_and_swap

from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path

LEVELS: dict[str, Callable[[str], str]] = {
    "rename": lambda code: disguise(code, split=False),
    "reorder": lambda code: reorder_and_swap(code)[0],
    "restructure": lambda code: disguise(code, split=True, inline=True),
}


def disguised(notebook: nbformat.NotebookNode, level: str) -> nbformat.NotebookNode:
    """``notebook`` with every solution cell disguised at ``level``."""
    copy = nbformat.reads(nbformat.writes(notebook), as_version=4)
    for cell in copy.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = LEVELS[level](cell.source)
    return copy


def write_cohort(base: Path, assignment: str) -> tuple[Path, list[str], dict[str, str]]:
    """A course root under ``base`` with the honest students and their disguised copies;
    (the root, the honest students, {copier: "LEVEL:ORIGIN"})."""
    root = base / "course"
    for folder, origin in (("source", SOLUTIONS_DIR), ("release", COURSE_DIR)):
        shutil.copytree(origin / assignment, root / folder / assignment)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    honest, copies = [], {}
    for path in implementations(assignment):
        notebook = student_notebook(path, assignment)
        honest.append(path.stem)
        hand_in(root, path.stem, assignment, notebook)
        for level in LEVELS:
            copier = f"{level}-of-{path.stem}"
            hand_in(root, copier, assignment, disguised(notebook, level))
            copies[copier] = f"{level}:{path.stem}"
    return root, honest, copies


def hand_in(root: Path, student: str, assignment: str, notebook) -> None:
    target = notebook_path(root / "submitted" / student, assignment)
    target.parent.mkdir(parents=True)
    nbformat.write(notebook, target)
