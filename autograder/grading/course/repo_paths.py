"""Where the course lives: the repository's folders and the assignments in them."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
SOLUTIONS_DIR = REPO_ROOT / "solutions"
COURSE_DIR = REPO_ROOT / "course"
NBGRADER_CONFIG = REPO_ROOT / "nbgrader_config.py"
# Workspaces and reports of the course-building commands: made, never committed.
BUILD_DIR = REPO_ROOT / "build"


def assignments(solutions_dir: Path = SOLUTIONS_DIR) -> list[str]:
    """Assignment ids (``00-recipe``, ...): the folders of solutions/ holding a notebook."""
    if not solutions_dir.is_dir():
        raise FileNotFoundError(f"no solutions folder at {solutions_dir}")
    return sorted(p.name for p in solutions_dir.iterdir() if any(p.glob("*.ipynb")))


def notebook_path(root: Path, assignment: str) -> Path:
    """The one notebook of an assignment: ``root/NN-slug/NN-slug.ipynb``."""
    return root / assignment / f"{assignment}.ipynb"
