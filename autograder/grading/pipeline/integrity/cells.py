"""Which cells of a submission are the student's code, read from nbgrader's cell metadata.

Only cells the student could have changed are scanned: locked cells are restored at autograde
and legitimately import torch, and course cells handed back as given are not the student's.
"Locked" and "solution" are nbgrader's own predicates (``nbgrader.utils``): a locked cell is
one autograde overwrites (a grade cell that is not a solution, or one marked locked).
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_locked, is_solution


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """A notebook whose cells nbgrader's predicates can read; ValueError for a broken one."""
    notebook = nbformat.read(path, as_version=4)
    if not isinstance(notebook.get("cells"), list):
        raise ValueError("no list of cells")
    for position, cell in enumerate(notebook.cells, start=1):
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        if not isinstance(metadata, dict) or not isinstance(metadata.get("nbgrader", {}), dict):
            raise ValueError(f"cell {position}: its metadata (or nbgrader's part) is not a mapping")
    return notebook


def nbgrader_metadata(cell: nbformat.NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell: nbformat.NotebookNode) -> str | None:
    return nbgrader_metadata(cell).get("grade_id")


def code_cells(notebook: nbformat.NotebookNode) -> Iterator[tuple[int, nbformat.NotebookNode]]:
    """(1-based position in the notebook, cell) of every code cell."""
    for position, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type == "code":
            yield position, cell


def cells_by_grade_id(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """The code cells that have a grade_id, by it."""
    return {name: cell for _, cell in code_cells(notebook) if (name := grade_id(cell))}


@dataclass(frozen=True)
class StudentCell:
    """A code cell the student could have written or changed, and what they were given."""

    label: str  # grade_id or "added cell N (exercise X)"
    source: str
    given: str | None  # the release's version of this cell, when there is one
    solution: bool  # an nbgrader solution cell, not one the student added
    position: int = 0  # 1-based position in the notebook (the runtime record's cells)


def added_cell_label(position: int, exercise: str | None) -> str:
    return f"added cell {position}" + (f" (exercise {exercise})" if exercise else "")


def exercise_of_added(label: str) -> str | None:
    """The exercise an added cell counts towards, from its label."""
    match = re.search(r"\(exercise (\S+)\)$", label)
    return match.group(1) if match else None


def student_cells(
    notebook: nbformat.NotebookNode, release: nbformat.NotebookNode | None
) -> list[StudentCell]:
    """The cells to scan: solution cells, and cells without metadata unless given unchanged.

    A cell without nbgrader metadata counts towards the exercise whose solution cell
    precedes it (or the first exercise, for one above them all), as it runs before that
    exercise's tests.
    """
    given_cells = [cell for _, cell in code_cells(release)] if release else []
    by_grade_id = cells_by_grade_id(release) if release else {}
    by_id = {cell.get("id"): cell for cell in given_cells if cell.get("id")}
    given_sources = {cell.source for cell in given_cells if not grade_id(cell)}
    solutions = [grade_id(cell) for _, cell in code_cells(notebook) if is_solution(cell)]
    exercise = solutions[0] if solutions else None
    cells = []
    for position, cell in code_cells(notebook):
        name = grade_id(cell)
        given = by_grade_id.get(name) if name else None
        if release is not None and given is not None:
            if not is_locked(given):
                cells.append(StudentCell(name, cell.source, given.source, True, position))
        elif release is None and name:
            if not is_locked(cell):
                cells.append(StudentCell(name, cell.source, None, True, position))
        else:  # no metadata, or a grade_id the release does not know
            original = by_id.get(cell.get("id"))
            if cell.source in given_sources and (
                original is None or original.source == cell.source
            ):
                continue  # a demonstration cell of the course, as given
            earlier = original.source if original is not None and not grade_id(original) else None
            label = added_cell_label(position, exercise)
            cells.append(StudentCell(label, cell.source, earlier, False, position))
        if is_solution(cell) and name:
            exercise = name
    return cells
