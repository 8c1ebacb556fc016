"""Scanning whole submissions: each student cell of each notebook, and its locked cells.

The entry points a grader runs; a broken notebook becomes an "unreadable" flag, never an error.
"""

from pathlib import Path

import nbformat

from autograder.grading.course.repo_paths import notebook_path
from autograder.grading.pipeline.integrity.cells import StudentCell, read_notebook, student_cells
from autograder.grading.pipeline.integrity.code_rules import scan_code
from autograder.grading.pipeline.integrity.flags import Finding, Flag
from autograder.grading.pipeline.integrity.locked import locked_cell_findings
from autograder.grading.pipeline.integrity.notebook_names import NotebookNames, notebook_names
from autograder.grading.pipeline.metadata_restore import (
    RestoreError,
    has_nbgrader_metadata,
    restored,
)


def cell_findings(cell: StudentCell, names: NotebookNames) -> list[Finding]:
    """Findings of a student cell, less those its given version already had."""
    findings = scan_code(cell.source, names, cell.solution)
    if cell.given is None:
        return findings
    already = {(f.rule, f.detail) for f in scan_code(cell.given, names, cell.solution)}
    return [f for f in findings if (f.rule, f.detail) not in already]


def scan_notebook(
    path: Path, student: str, assignment: str, release_notebook: Path | None = None
) -> list[Flag]:
    """Flags of one submitted notebook; never raises for a broken notebook.

    ``release_notebook`` is what the student was given (release/NN/NN.ipynb): cells of it
    that come back unchanged are not the student's code, and its locked cells are compared
    with the submission's. Without it every cell but the locked ones counts as the student's.
    """
    release = read_notebook(release_notebook) if release_notebook else None
    try:
        notebook = with_metadata(read_notebook(path), release)
        return notebook_flags(notebook, release, student, assignment)
    except Exception as error:  # a broken file must not stop the scan of a whole cohort
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        return [Flag(student, assignment, "", 0, "unreadable", f"{path.name}: {reason}")]


def with_metadata(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode | None
) -> nbformat.NotebookNode:
    """The notebook with the nbgrader metadata an editor stripped put back from the release,
    as autograde grades it, so the course's own cells are not taken for the student's;
    RestoreError (an unreadable notebook) when its cells cannot be matched."""
    if release is None or has_nbgrader_metadata(notebook):
        return notebook
    try:
        return restored(notebook, release)
    except RestoreError as error:
        raise RestoreError(f"no nbgrader metadata and {error}") from None


def notebook_flags(
    notebook: nbformat.NotebookNode,
    release: nbformat.NotebookNode | None,
    student: str,
    assignment: str,
) -> list[Flag]:
    """Flags of one readable notebook: its student cells, and its locked cells' changes."""
    names = notebook_names(notebook, release or notebook)
    flags = [
        finding.flag(student, assignment, cell.label)
        for cell in student_cells(notebook, release)
        for finding in cell_findings(cell, names)
    ]
    if release is not None:
        flags += [
            finding.flag(student, assignment, name)
            for name, finding in locked_cell_findings(notebook, release)
        ]
    return flags


def scan_submissions(
    submitted: Path, assignment: str, release_dir: Path | None = None
) -> list[Flag]:
    """Flags of every ``submitted/<student>/<assignment>/*.ipynb``, students sorted.

    ``submitted`` is the course's submitted folder (``Course.submitted``). ``release_dir``
    holds the release as ``release_dir/<assignment>/<assignment>.ipynb`` (the course's
    release/, or this repository's course/); None: compared with no release.
    """
    release = notebook_path(release_dir, assignment) if release_dir else None
    flags: list[Flag] = []
    students = sorted(p for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    for student in students:
        for notebook in sorted((student / assignment).glob("*.ipynb")):
            flags += scan_notebook(notebook, student.name, assignment, release)
    return flags
