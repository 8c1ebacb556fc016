"""nbgrader's validator rules, applied to a notebook without running it again: which graded
cells an executed notebook scores full marks on, and which locked cells differ from their
checksum. The blank release is executed once, in the student kit's own environment
(test_kit_alone), and judged there; the checksums need no kernel at all."""

from nbformat import NotebookNode
from nbgrader import utils


def graded_cells_passing(notebook: NotebookNode) -> list[str]:
    """First lines of the graded cells an executed ``notebook`` earns full marks on, by the
    rule nbgrader's validator and autograder use (a code cell without an error scores its
    points); a markdown cell, graded by hand, never counts."""
    passing = []
    for cell in notebook.cells:
        if utils.is_grade(cell):
            score, max_score = utils.determine_grade(cell)
            if score is not None and score == max_score:
                passing.append(cell.source.splitlines()[0] if cell.source else "(empty cell)")
    return passing


def cells_changed(notebook: NotebookNode) -> list[str]:
    """First lines of the locked cells whose source differs from their checksum, and of the
    nbgrader cells whose type differs from the one recorded: what the validator reports as
    changed (a release must have none, or every student starts with a changed notebook)."""
    changed = []
    for cell in notebook.cells:
        if not (utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell)):
            continue
        spec = cell.metadata.nbgrader
        retyped = spec.get("cell_type") and spec["cell_type"] != cell.cell_type
        edited = (
            utils.is_locked(cell)
            and "checksum" in spec
            and spec["checksum"] != utils.compute_checksum(cell)
        )
        if retyped or edited:
            changed.append(cell.source.splitlines()[0] if cell.source else "(empty cell)")
    return changed
