"""Comparing a submission's locked cells with the release's, to report edits and deletions.

Information only: autograde restores locked cells, but an edit shows what a student tried.
"""

import nbformat
from nbgrader.utils import is_locked

from autograder.checks.hidden_tests import split_hidden_tests
from autograder.grading.pipeline.integrity.cells import cells_by_grade_id, code_cells, grade_id
from autograder.grading.pipeline.integrity.flags import Finding


def without_hidden_tests(source: str) -> str:
    """A locked cell's source as released: hidden tests cut, blank edges trimmed."""
    try:
        source, _ = split_hidden_tests(source)
    except ValueError:
        pass  # a delimiter the student broke: compared as written, so the edit shows
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def first_difference(mine: str, theirs: str) -> int:
    """1-based line of ``mine`` where it first differs from ``theirs``."""
    for number, (a, b) in enumerate(
        zip(mine.splitlines(), theirs.splitlines(), strict=False), start=1
    ):
        if a.rstrip() != b.rstrip():
            return number
    return min(len(mine.splitlines()), len(theirs.splitlines())) + 1


def locked_cell_findings(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> list[tuple[str, Finding]]:
    """(grade_id, finding) for each locked release cell edited or missing in the submission."""
    submitted = cells_by_grade_id(notebook)
    findings = []
    for _, given in code_cells(release):
        name = grade_id(given)
        if not name or not is_locked(given):
            continue
        cell = submitted.get(name)
        if cell is None:
            findings.append((name, Finding(0, "locked-cell-edited", "locked cell deleted")))
            continue
        mine, theirs = without_hidden_tests(cell.source), without_hidden_tests(given.source)
        if mine != theirs:
            line = first_difference(mine, theirs)
            detail = f"locked cell edited (first change at line {line}); autograde restores it"
            findings.append((name, Finding(line, "locked-cell-edited", detail)))
    return findings
