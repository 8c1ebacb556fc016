"""Before grading: a submission nbgrader cannot grade is the student's ``invalid-notebook``.

nbgrader 0.9 fails a whole submission, with its own exception, on a file that is not JSON
(an empty one included), JSON that is not a notebook, a cell whose source is not text, or
a graded cell whose grade id the gradebook does not know (renamed, or a cell added: a
``KeyError`` in ``OverwriteCells.add_missing_grade_cells``); and with no notebook of the
assignment at all it grades nothing. These are the student's files, not the grader's
fault, so they are found here, in the grading process, before a job is sent: the student
gets 0 on every cell and a one-line reason, and nothing reaches a worker.

A notebook whose editor stripped every cell's nbgrader metadata has it put back from the
release (``metadata_restore``) and is graded; one whose cells cannot be matched is invalid.
Only such a notebook is rewritten; every other file goes to nbgrader byte for byte.
"""

import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.utils import is_grade, is_locked, is_solution, is_task

from autograder.grading.course.course_root import Course
from autograder.grading.pipeline.metadata_restore import (
    RestoreError,
    has_nbgrader_metadata,
    restored,
)

REASON_LENGTH = 200  # a reason is one line of the log and of the command's output


class InvalidNotebook(ValueError):
    """A submission nbgrader cannot grade; the message is the one-line reason."""


@dataclass(frozen=True)
class KnownNotebook:
    """A notebook of the assignment: its cells' grade ids in the gradebook, its release."""

    name: str
    grade_ids: frozenset[str]
    release: nbformat.NotebookNode | None  # what students were given, to restore metadata


def release_of(course: Course, assignment: str, name: str) -> nbformat.NotebookNode | None:
    """The release of one notebook, from the course's release/ folder; None without one."""
    path = course.release / assignment / f"{name}.ipynb"
    try:
        return nbformat.read(path, as_version=4) if path.is_file() else None
    except (OSError, ValueError):
        return None


def known_notebooks(course: Course, assignment: str) -> list[KnownNotebook]:
    """The assignment's notebooks as the gradebook has them, with their releases."""
    with Gradebook(course.db_url) as gradebook:
        found = gradebook.find_assignment(assignment)
        cells = {nb.name: frozenset(c.name for c in nb.source_cells) for nb in found.notebooks}
    return [
        KnownNotebook(name, ids, release_of(course, assignment, name))
        for name, ids in cells.items()
    ]


def one_line(error: Exception) -> str:
    """The first line of an error's text, shortened, with its type when it says little."""
    text = (str(error).strip().splitlines() or [""])[0]
    text = text if len(text) <= REASON_LENGTH else text[: REASON_LENGTH - 3] + "..."
    return text or type(error).__name__


def parsed(name: str, data: bytes) -> nbformat.NotebookNode:
    """The notebook in ``data``, valid by nbformat's schema, or InvalidNotebook."""
    if not data.strip():
        raise InvalidNotebook(f"{name} is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidNotebook(f"{name} is not text (not UTF-8): not a notebook") from None
    try:
        with warnings.catch_warnings():  # a missing cell id is a warning, and nbformat fixes it
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(text, as_version=4)
            nbformat.validate(notebook)
    except nbformat.reader.NotJSONError:
        raise InvalidNotebook(f"{name} is not JSON: not a notebook") from None
    except Exception as error:  # nbformat raises many kinds for JSON that is no notebook
        raise InvalidNotebook(f"{name} is not a valid notebook: {one_line(error)}") from None
    return notebook


def unknown_cell(notebook: nbformat.NotebookNode, known: KnownNotebook) -> str | None:
    """Why nbgrader would fail on the notebook's nbgrader cells, or None: every graded,
    solution, locked or task cell must carry a grade id the gradebook knows."""
    for position, cell in enumerate(notebook.cells, start=1):
        metadata = cell.metadata.get("nbgrader")
        if metadata is None:
            continue
        if not isinstance(metadata, dict):
            return f"cell {position}: its nbgrader metadata is not a mapping"
        if not (is_grade(cell) or is_solution(cell) or is_locked(cell) or is_task(cell)):
            continue
        grade_id = metadata.get("grade_id")
        if not isinstance(grade_id, str) or grade_id not in known.grade_ids:
            return (
                f"cell {position} has grade id {grade_id!r}, which is not one of the "
                f"assignment's cells (renamed, or a graded cell added)"
            )
    return None


def checked_notebook(known: KnownNotebook, data: bytes) -> bytes:
    """The notebook's bytes to grade (its metadata restored if stripped), or InvalidNotebook."""
    name = f"{known.name}.ipynb"
    notebook = parsed(name, data)
    stripped = bool(known.grade_ids) and not has_nbgrader_metadata(notebook)
    if stripped:
        if known.release is None:
            raise InvalidNotebook(f"{name} has no nbgrader metadata and there is no release")
        try:
            notebook = restored(notebook, known.release)
        except RestoreError as error:
            raise InvalidNotebook(f"{name} has no nbgrader metadata and {error}") from None
    problem = unknown_cell(notebook, known)
    if problem is not None:
        raise InvalidNotebook(f"{name}: {problem}")
    return nbformat.writes(notebook).encode() if stripped else data


def checked_submission(files: dict[str, bytes], known: list[KnownNotebook]) -> dict[str, bytes]:
    """The submission's files to grade, or InvalidNotebook with the first problem found.

    Notebooks the assignment does not have are left alone (nbgrader skips them); at least
    one of its notebooks must be there, as nbgrader grades nothing otherwise.
    """
    present = [nb for nb in known if f"{nb.name}.ipynb" in files]
    if not present:
        wanted = ", ".join(sorted(f"{nb.name}.ipynb" for nb in known))
        handed = sorted(Path(name).name for name in files if name.endswith(".ipynb"))
        raise InvalidNotebook(f"no {wanted} in the submission (found: {handed or 'nothing'})")
    checked = dict(files)
    for notebook in present:
        name = f"{notebook.name}.ipynb"
        checked[name] = checked_notebook(notebook, files[name])
    return checked
