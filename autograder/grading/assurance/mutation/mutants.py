"""Mutants of each graded exercise: its reference solution with one operator's rewrite.

Only code inside the exercise's ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` regions is
mutated: that is what a student writes (the rest of the cell is handed out). Each mutant is
the whole solution cell as a student would hand it in (markers stripped), once: rewrites
that give the same text as another, or as the reference, or no valid Python, are not
mutants at all.
"""

import ast
import difflib
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_solution

from autograder.grading.assurance.mutation.operators import apply, rewrites
from autograder.grading.authoring.engine_sync import SOLUTION_MARKERS, strip_solution_markers
from autograder.grading.course.repo_paths import notebook_path


@dataclass(frozen=True)
class Mutant:
    """One mistaken version of one exercise's solution cell."""

    assignment: str
    cell: str  # nbgrader grade_id of the solution cell
    operator: str
    what: str  # the rewrite, in words
    line: int  # line of the rewrite in the cell as the student sees it (1-based)
    source: str  # the mutated cell, markers stripped
    diff: str  # unified diff against the reference cell
    name: str = ""  # a hand-written mutant's own id (by_hand.py); generated ones have none

    @property
    def id(self) -> str:
        """Stable name: a hand-written mutant's own, else the assignment, cell and mutated
        text, hashed."""
        if self.name:
            return self.name
        text = f"{self.assignment}\0{self.cell}\0{self.source}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def student(self) -> str:
        """The nbgrader student id this mutant is graded as."""
        return f"mut-{self.id}"


def solution_regions(source: str) -> list[tuple[int, int]]:
    """Line ranges (1-based, inclusive) strictly inside the solution markers of a cell."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() == SOLUTION_MARKERS[0]:
            start = number + 1
        elif line.strip() == SOLUTION_MARKERS[1] and start is not None:
            regions.append((start, number - 1))
            start = None
    return regions


def in_regions(regions: list[tuple[int, int]]) -> Callable[[ast.AST], bool]:
    """Whether a node lies wholly inside one of ``regions``."""

    def inside(node: ast.AST) -> bool:
        return any(first <= node.lineno and node.end_lineno <= last for first, last in regions)

    return inside


def stripped_line(source: str, line: int) -> int:
    """Where line ``line`` of the marked source is once the markers are stripped."""
    lines = source.splitlines()[:line]
    return line - sum(1 for text in lines if text.strip() in SOLUTION_MARKERS)


def cell_mutants(assignment: str, cell: str, marked: str) -> list[Mutant]:
    """Every distinct, valid mutant of one solution cell (``marked``: with its markers)."""
    reference = strip_solution_markers(marked)
    seen = {reference}
    mutants = []
    line_starts = [0]
    for line in marked.encode().splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    for rewrite in rewrites(marked, in_regions(solution_regions(marked))):
        source = strip_solution_markers(apply(marked, rewrite))
        if source in seen or not compiles(source):
            continue
        seen.add(source)
        line = next(n for n, start in enumerate(line_starts) if start > rewrite.start)
        diff = unified_diff(cell, reference, source)
        mutants.append(
            Mutant(
                assignment=assignment,
                cell=cell,
                operator=rewrite.operator,
                what=rewrite.what,
                line=stripped_line(marked, line),
                source=source,
                diff=diff,
            )
        )
    return mutants


def unified_diff(cell: str, reference: str, source: str) -> str:
    """The mutant's change against the reference cell, with one line of context."""
    return "\n".join(
        difflib.unified_diff(
            reference.splitlines(),
            source.splitlines(),
            cell,
            f"{cell} (mutant)",
            n=1,
            lineterm="",
        )
    )


def compiles(source: str) -> bool:
    """Whether ``source`` is valid Python (a rewrite can make a name a keyword's target...)."""
    try:
        compile(source, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def solution_cells(solutions_dir: Path, assignment: str) -> dict[str, str]:
    """grade_id -> source with markers, of every solution cell that has a solution region."""
    notebook = nbformat.read(notebook_path(solutions_dir, assignment), as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in notebook.cells
        if is_solution(cell) and solution_regions(cell.source)
    }


def assignment_mutants(solutions_dir: Path, assignment: str) -> list[Mutant]:
    """Every mutant of every exercise of one assignment, in cell order."""
    return [
        mutant
        for cell, marked in solution_cells(solutions_dir, assignment).items()
        for mutant in cell_mutants(assignment, cell, marked)
    ]


def sample(mutants: list[Mutant], count: int, seed: int = 0) -> list[Mutant]:
    """``count`` mutants chosen with a seeded shuffle, spread evenly over the exercises.

    The same mutants, the same count and the same seed always give the same sample.
    """
    if count >= len(mutants):
        return mutants
    by_cell: dict[str, list[Mutant]] = {}
    for mutant in sorted(mutants, key=lambda m: m.id):
        by_cell.setdefault(mutant.cell, []).append(mutant)
    shuffler = random.Random(seed)
    for cell in sorted(by_cell):
        shuffler.shuffle(by_cell[cell])
    chosen: list[Mutant] = []
    while len(chosen) < count:
        for cell in sorted(by_cell):
            if by_cell[cell] and len(chosen) < count:
                chosen.append(by_cell[cell].pop())
    order = {id(m): i for i, m in enumerate(mutants)}
    return sorted(chosen, key=lambda m: order[id(m)])
