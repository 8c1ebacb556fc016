"""What a whole notebook binds (its imports, what its locked cells define), for judging a cell.

A cell's ``np.x = ...`` is only a monkeypatch if ``np`` is an imported module somewhere, and
rebinding a name is only a cheat if a locked cell (which the tests share) bound it.
"""

from dataclasses import dataclass

import nbformat
from nbgrader.utils import is_locked

from autograder.grading.pipeline.integrity.cells import code_cells
from autograder.grading.pipeline.integrity.syntax import (
    import_bindings,
    parse_quietly,
    top_level_definitions,
)


@dataclass(frozen=True)
class NotebookNames:
    """What the whole notebook binds, which a cell's code is judged against."""

    imports: dict[str, str]  # every import of the notebook: alias -> qualified name
    locked_imports: dict[str, str]  # imports of locked cells: the names tests rely on
    locked_definitions: frozenset[str]  # functions and classes the locked cells define

    @property
    def protected(self) -> frozenset[str]:
        """Names a student must not replace through ``globals()``."""
        return frozenset(self.locked_imports) | self.locked_definitions


def notebook_names(
    notebook: nbformat.NotebookNode, locked_from: nbformat.NotebookNode
) -> NotebookNames:
    """Imports of the whole notebook, and what the locked cells of ``locked_from`` bind."""
    imports: dict[str, str] = {}
    locked_imports: dict[str, str] = {}
    definitions: set[str] = set()
    for _, cell in code_cells(locked_from):
        tree = parse_quietly(cell.source) if is_locked(cell) else None
        if tree is not None:
            locked_imports.update(import_bindings(tree))
            definitions |= top_level_definitions(tree)
    for _, cell in code_cells(notebook):
        tree = parse_quietly(cell.source)
        if tree is not None:
            imports.update(import_bindings(tree))
    # A locked cell's import wins: autograde restores it, whatever the student wrote.
    return NotebookNames({**imports, **locked_imports}, locked_imports, frozenset(definitions))
