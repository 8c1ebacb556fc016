"""Old import path of :mod:`autograder.checks.progress`, named by every notebook's locked
progress cell (and by gradebooks created before the move)."""

from autograder.checks.progress import collect, show_progress

__all__ = ["collect", "show_progress"]
