"""The scan as a grading step: scan an assignment's submissions, keep the flags, maybe zero.

``integrity.json`` in the course root holds the flags of every assignment scanned so far
(the report reads it); scanning an assignment again replaces only that assignment's flags.
"""

from pathlib import Path

from autograder.grading.integrity.flags import Flag, read_flags, write_flags
from autograder.grading.integrity.scan import scan_submissions
from autograder.grading.integrity.zeroing import zero_flagged_exercises
from autograder.grading.repo_paths import notebook_path

FLAGS_NAME = "integrity.json"


def record_flags(root: Path, assignment: str, flags: list[Flag]) -> Path:
    """Replace ``assignment``'s flags in ``root/integrity.json``; other assignments' stay."""
    path = root / FLAGS_NAME
    kept = [f for f in read_flags(path) if f.assignment != assignment] if path.exists() else []
    write_flags(kept + flags, path)
    return path


def scan_assignment(
    root: Path,
    assignment: str,
    source_dir: Path,
    release_dir: Path | None,
    gradebook_url: str,
    zero: bool = False,
) -> tuple[list[Flag], list[tuple[str, str, str]]]:
    """Scan every submission of ``assignment``, record the flags, zero them when asked.

    Returns the flags and the (student, assignment, test) grades set to 0.
    """
    flags = scan_submissions(root, assignment, release_dir)
    record_flags(root, assignment, flags)
    zeroed = []
    if zero:
        zeroed = zero_flagged_exercises(gradebook_url, flags, notebook_path(source_dir, assignment))
    return flags, zeroed
