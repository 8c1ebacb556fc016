"""nbgrader metadata put back on a submission whose editor stripped it, from the release.

Some editors save a notebook without its cells' ``nbgrader`` metadata. nbgrader then finds
none of the assignment's cells: it adds every graded cell back empty, grades 0, and the
integrity scan takes the course's own cells for the student's. Each cell of the release
that carries metadata is matched back to one of the submission's cells:

- the course's fixed cells (every cell that is not a solution cell) by their text, in
  order (``difflib``'s longest matching blocks), so cells the student added in between
  move nothing;
- between two such anchors, the release's cells pair with the submission's by position,
  when both hold as many cells of the same types in the same order.

Where neither tells which cell is which, nothing is guessed: RestoreError names the cell.
"""

import copy
import difflib

import nbformat
from nbgrader.utils import is_solution


class RestoreError(ValueError):
    """The submission's cells cannot be matched to the release's without guessing."""


def has_nbgrader_metadata(notebook: nbformat.NotebookNode) -> bool:
    """Whether any cell carries nbgrader metadata (a stripped notebook has none)."""
    return any("nbgrader" in cell.get("metadata", {}) for cell in notebook.cells)


def cell_name(cell: nbformat.NotebookNode) -> str:
    """The release cell's grade id, for a message."""
    return str(cell.metadata.get("nbgrader", {}).get("grade_id", "?"))


def fixed_keys(release: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """A key per release cell that matches only the same cell handed back unchanged: its
    type and text; a solution cell's key matches nothing (the student rewrote it)."""
    return [
        ("", f"solution {index}") if is_solution(cell) else (cell.cell_type, cell.source)
        for index, cell in enumerate(release.cells)
    ]


def pairs(
    release: nbformat.NotebookNode, submission: nbformat.NotebookNode
) -> list[tuple[int, int]]:
    """(release index, submission index) of every release cell with nbgrader metadata."""
    given = [(cell.cell_type, cell.source) for cell in submission.cells]
    matcher = difflib.SequenceMatcher(None, fixed_keys(release), given, autojunk=False)
    matched: list[tuple[int, int]] = []
    release_at = submission_at = 0
    for block in matcher.get_matching_blocks():  # the last one is empty, at both ends
        gap = range(release_at, block.a)
        marked = [i for i in gap if "nbgrader" in release.cells[i].metadata]
        if marked:
            theirs = range(submission_at, block.b)
            types = [release.cells[i].cell_type for i in gap]
            if len(theirs) != len(gap) or types != [submission.cells[j].cell_type for j in theirs]:
                raise RestoreError(
                    f"cannot tell which cell is {cell_name(release.cells[marked[0]])!r}: "
                    f"the cells around it differ from the release's "
                    f"({len(theirs)} cells where the release has {len(gap)})"
                )
            matched += [(i, submission_at + (i - release_at)) for i in marked]
        matched += [
            (block.a + k, block.b + k)
            for k in range(block.size)
            if "nbgrader" in release.cells[block.a + k].metadata
        ]
        release_at, submission_at = block.a + block.size, block.b + block.size
    return matched


def restored(
    submission: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """A copy of ``submission`` with the release's nbgrader metadata on the matching cells."""
    notebook = copy.deepcopy(submission)
    for release_index, index in pairs(release, notebook):
        metadata = release.cells[release_index].metadata
        notebook.cells[index].metadata["nbgrader"] = copy.deepcopy(metadata["nbgrader"])
    return notebook
